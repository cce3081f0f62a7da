//! The install reporter: an indicatif bar on a terminal, nothing otherwise (and never with
//! `-q` or `--json`).

use std::io::IsTerminal;
use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Printer;
use crate::store::Reporter;
use crate::util::version::MethodVersion;

pub struct ProgressReporter {
    bar: Option<ProgressBar>,
    printer: Printer,
}

impl ProgressReporter {
    pub fn new(printer: &Printer) -> Self {
        let show = !printer.quiet && !printer.json && std::io::stderr().is_terminal();
        let bar = show.then(|| {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {bytes}/{total_bytes}")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            bar
        });
        Self {
            bar,
            printer: printer.clone(),
        }
    }

    pub fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Reporter for ProgressReporter {
    fn waiting_for_lock(&self, path: &Path) {
        let msg = format!(
            "waiting for lock on `{}` (another a2c process is installing)",
            path.display()
        );
        match &self.bar {
            Some(bar) => bar.println(msg),
            None => self.printer.status(msg),
        }
    }

    fn start(&self, version: &MethodVersion, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc_length(bytes);
            bar.set_message(format!("installing {version}"));
        }
    }

    fn finish(&self, _version: &MethodVersion, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }
}
