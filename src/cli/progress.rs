//! The install reporter: on a terminal, an overall bar (versions done out of a total known
//! up front, the versions in progress as its message, a spinner that ticks steadily, as wide
//! as the terminal) plus one bar per download in bytes; nothing on a non-terminal, under `CI`,
//! on a dumb terminal, with `-q` or with `--json`.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Mutex;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Printer;
use crate::store::Reporter;
use crate::util::version::MethodVersion;

struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
    downloads: Mutex<HashMap<MethodVersion, ProgressBar>>,
    /// The versions being extracted now: the overall bar's message, never stale.
    active: Mutex<Vec<MethodVersion>>,
}

impl Bars {
    fn show_active(&self, active: &[MethodVersion]) {
        self.overall.set_message(match active {
            [] => "installing".to_string(),
            [v] => format!("extracting {v}"),
            [v, rest @ ..] => format!("extracting {v} +{}", rest.len()),
        });
    }
}

/// The bars on screen now, if any: every other line for stderr is printed above them (a line
/// written past them would leave a stale frame behind).
static ACTIVE: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// One line on stderr, above the progress bars when they are drawn.
pub fn eprint_line(line: &str) {
    let active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).clone();
    match active {
        Some(multi) => {
            let _ = multi.println(line);
        }
        None => eprintln!("{line}"),
    }
}

/// Bars only where someone watches them: a terminal that can draw them, outside CI.
fn bars_wanted(printer: &Printer) -> bool {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0");
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    !printer.quiet && !printer.json && !ci && !dumb && std::io::stderr().is_terminal()
}

pub struct ProgressReporter {
    bars: Option<Bars>,
    printer: Printer,
}

impl ProgressReporter {
    pub fn new(printer: &Printer) -> Self {
        let bars = bars_wanted(printer).then(|| {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            // Drawn only once the total is known (`plan`): never a bar full at 0/0.
            let overall = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
            overall.set_style(
                ProgressStyle::with_template("{spinner} {msg:<24} [{wide_bar}] {pos}/{len} versions")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            overall.set_message("installing");
            Bars {
                multi,
                overall,
                downloads: Mutex::new(HashMap::new()),
                active: Mutex::new(Vec::new()),
            }
        });
        if let Some(b) = &bars {
            *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(b.multi.clone());
        }
        Self {
            bars,
            printer: printer.clone(),
        }
    }

    pub fn done(&self) {
        if let Some(b) = &self.bars {
            *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = None;
            for bar in b.downloads.lock().unwrap_or_else(|p| p.into_inner()).values() {
                bar.finish_and_clear();
            }
            b.overall.finish_and_clear();
            let _ = b.multi.clear();
        }
    }
}

impl Reporter for ProgressReporter {
    fn waiting_for_lock(&self, path: &Path) {
        let msg = format!(
            "waiting for lock on `{}` (another a2c process holds it)",
            path.display()
        );
        match &self.bars {
            Some(b) => {
                let _ = b.multi.println(msg);
            }
            None => self.printer.status(msg),
        }
    }

    fn plan(&self, versions: usize) {
        if let Some(b) = &self.bars
            && versions > 0
        {
            b.overall.set_length(versions as u64);
            b.multi.add(b.overall.clone());
            b.overall.enable_steady_tick(std::time::Duration::from_millis(100));
        }
    }

    fn start(&self, version: &MethodVersion, _bytes: u64) {
        if let Some(b) = &self.bars {
            let mut active = b.active.lock().unwrap_or_else(|p| p.into_inner());
            active.push(version.clone());
            b.show_active(&active);
        }
    }

    fn finish(&self, version: &MethodVersion, _bytes: u64) {
        if let Some(b) = &self.bars {
            let mut active = b.active.lock().unwrap_or_else(|p| p.into_inner());
            active.retain(|v| v != version);
            b.show_active(&active);
        }
    }

    fn installed(&self, _version: &MethodVersion) {
        if let Some(b) = &self.bars {
            b.overall.inc(1);
        }
    }

    fn download_start(&self, version: &MethodVersion, bytes: u64) {
        if let Some(b) = &self.bars {
            let bar = b.multi.insert_before(&b.overall, ProgressBar::new(bytes));
            bar.set_style(
                ProgressStyle::with_template("  {msg:<22} [{wide_bar}] {bytes}/{total_bytes} {bytes_per_sec}")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            bar.set_message(format!("downloading {version}"));
            b.downloads
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(version.clone(), bar);
        }
    }

    fn download_progress(&self, version: &MethodVersion, bytes_so_far: u64) {
        if let Some(b) = &self.bars
            && let Some(bar) = b.downloads.lock().unwrap_or_else(|p| p.into_inner()).get(version)
        {
            bar.set_position(bytes_so_far);
        }
    }

    fn download_finish(&self, version: &MethodVersion) {
        if let Some(b) = &self.bars
            && let Some(bar) = b.downloads.lock().unwrap_or_else(|p| p.into_inner()).remove(version)
        {
            bar.finish_and_clear();
        }
    }
}
