//! One thread for every read of the workspace the server makes in its own process (discovery,
//! resolution, resources, prompts, the watcher's `stat`s). A 5,000-member workspace costs a
//! call a few MB of short-lived allocations; spread over the runtime's changing blocking
//! threads, each with its own allocator arena, they left the server growing by ~1 MiB per
//! thousand calls; on one thread the server stays flat (docs/performance.md). The commands a
//! tool runs as a child process (install, doctor, …) wait elsewhere, so a long install never
//! holds a resolve back.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;

type Job = Box<dyn FnOnce() + Send>;

/// The thread and the queue of jobs it runs in order; it ends when the last handle is dropped.
pub struct Worker {
    jobs: mpsc::Sender<Job>,
}

impl Worker {
    pub fn start() -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("a2c-mcp-reads".into())
            .spawn(move || {
                for job in queue {
                    // A job that panics answers its caller with an error (its sender is
                    // dropped); the thread goes on serving the next.
                    let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
                }
            })?;
        Ok(Self { jobs })
    }

    /// Runs `f` on the worker thread; `None` when it panicked or the worker is gone.
    pub async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = answer.send(f());
        });
        self.jobs.send(job).ok()?;
        answered.await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn jobs_run_in_order_on_one_thread_and_a_panic_is_answered() {
        let worker = Worker::start().unwrap();
        let first = worker.run(|| std::thread::current().id()).await.unwrap();
        let second = worker.run(|| std::thread::current().id()).await.unwrap();
        assert_eq!(first, second);
        assert_ne!(first, std::thread::current().id());
        let panicked: Option<()> = worker.run(|| panic!("a job that fails")).await;
        assert!(panicked.is_none());
        assert_eq!(worker.run(|| 2 + 2).await, Some(4));
    }
}
