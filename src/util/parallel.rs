//! Parallel work on scoped threads, results in item order, and the guard of state they share.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Threads for many small metadata reads (members, their checks): the machine's cores, at most
/// eight — more only contend for the kernel's path walks.
pub fn metadata_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

/// Runs `f` on every item with up to `jobs` worker threads; the results come in item order.
pub fn run_parallel<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let out = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    out.lock()
                        .expect("no worker panics while holding the lock")
                        .push((i, r));
                }
            });
        }
    });
    // In the items' order, whatever order they finished in: the first error reported is
    // then always the same one.
    let mut out = out.into_inner().expect("workers are done");
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// The guard of `mutex`, also when a thread panicked holding it: what a2c keeps in a mutex (a
/// cache, a list of results) is whole after every statement, so a panic elsewhere leaves
/// nothing half-written to refuse.
pub fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
