//! The install reporter: on a terminal, an overall bar (versions done, and the extraction
//! step as its message) plus one bar per download in bytes; nothing on a non-terminal, with
//! `-q` or with `--json`.

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
}

pub struct ProgressReporter {
    bars: Option<Bars>,
    printer: Printer,
}

impl ProgressReporter {
    pub fn new(printer: &Printer) -> Self {
        let show = !printer.quiet && !printer.json && std::io::stderr().is_terminal();
        let bars = show.then(|| {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let overall = multi.add(ProgressBar::new(0));
            overall.set_style(
                ProgressStyle::with_template("{spinner} {msg:<24} [{bar:30}] {pos}/{len} versions")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            overall.set_message("installing");
            Bars {
                multi,
                overall,
                downloads: Mutex::new(HashMap::new()),
            }
        });
        Self {
            bars,
            printer: printer.clone(),
        }
    }

    pub fn done(&self) {
        if let Some(b) = &self.bars {
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

    fn start(&self, version: &MethodVersion, _bytes: u64) {
        if let Some(b) = &self.bars {
            b.overall.inc_length(1);
            b.overall.set_message(format!("extracting {version}"));
        }
    }

    fn finish(&self, _version: &MethodVersion, _bytes: u64) {
        if let Some(b) = &self.bars {
            b.overall.inc(1);
        }
    }

    fn download_start(&self, version: &MethodVersion, bytes: u64) {
        if let Some(b) = &self.bars {
            let bar = b.multi.insert_before(&b.overall, ProgressBar::new(bytes));
            bar.set_style(
                ProgressStyle::with_template("  {msg:<22} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}")
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
