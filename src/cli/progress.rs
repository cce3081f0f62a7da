//! The install reporter: on a terminal, an overall bar (versions done out of a total known
//! up front, the versions in progress as its message, a spinner that ticks steadily, as wide
//! as the terminal) plus one bar per download in bytes. Elsewhere — stderr not a terminal,
//! under `CI`, on a dumb terminal — a plain line per version started and finished, with its
//! size and time (`A2C_PROGRESS=lines` asks for them anywhere, `none` for silence). Nothing
//! with `-q` or `--json`. Ctrl-C while bars are drawn clears them before exiting (130).

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Mutex;

use indicatif::{HumanBytes, MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

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
    /// Every bar finished and cleared from the screen.
    fn clear(&self) {
        for bar in crate::util::parallel::locked(&self.downloads).values() {
            bar.finish_and_clear();
        }
        self.overall.finish_and_clear();
        let _ = self.multi.clear();
    }

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
static ACTIVE: Mutex<Option<std::sync::Arc<Bars>>> = Mutex::new(None);

/// One line on stderr, above the progress bars when they are drawn, whole however long.
pub fn eprint_line(line: &str) {
    let active = crate::util::parallel::locked(&ACTIVE).clone();
    match active {
        // Printed with the bars lifted, not through `println` (which cuts a line to the
        // terminal's width): a long warning wraps whole and ends with its newline.
        Some(bars) => bars.multi.suspend(|| eprintln!("{line}")),
        None => eprintln!("{line}"),
    }
}

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Bars,
    Lines,
    None,
}

/// Bars only where someone watches them: a terminal that can draw them, outside CI; plain
/// lines elsewhere (a log, a pipe, CI), so that long work is never silent until the end.
fn mode(printer: &Printer) -> Mode {
    if printer.quiet {
        return Mode::None;
    }
    let asked = crate::env::progress();
    // `--json` keeps stderr quiet too, unless lines are asked for by name (`a2c mcp` does, for
    // a client's progress): they go to stderr, the document alone to stdout.
    if printer.json {
        return match asked.as_deref() {
            Some("lines") => Mode::Lines,
            _ => Mode::None,
        };
    }
    match asked.as_deref() {
        Some("none") => return Mode::None,
        Some("lines") => return Mode::Lines,
        Some("auto") | None => {}
        Some(other) => printer.warn(format!(
            "ignoring {}={other}: it takes auto, lines or none",
            crate::env::A2C_PROGRESS
        )),
    }
    match !crate::env::ci() && !crate::env::dumb_terminal() && std::io::stderr().is_terminal() {
        true => Mode::Bars,
        false => Mode::Lines,
    }
}

/// Ctrl-C (SIGINT) from the first bars on: clear the bars, say so, and exit 130 as a shell
/// expects — never a half-drawn frame left on the screen. Exiting there is what the signal
/// would have done anyway: an install's staging is cleaned by the next run, a migration's
/// journal resumes it.
fn clear_bars_on_interrupt() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = std::thread::Builder::new().name("a2c-sigint".into()).spawn(|| {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_io().build() else {
                return;
            };
            if rt.block_on(tokio::signal::ctrl_c()).is_ok() {
                if let Some(bars) = crate::util::parallel::locked(&ACTIVE).take() {
                    bars.clear();
                }
                crate::store::flock::release_for_exit();
                // Nothing half-done is kept: an install's leftovers are cleaned, a migration resumes.
                eprintln!("interrupted: run the command again to finish");
                std::process::exit(130);
            }
        });
    });
}

/// stderr as indicatif draws on it: two columns narrower than the terminal (so that the `^C` a
/// terminal echoes never lands past a full line), and every line ended by an explicit newline
/// instead of the terminal's automatic wrap.
///
/// indicatif pads each line with spaces to the width it is told, and relies on the terminal
/// wrapping there to reach the next line. With a width two columns short of the real one that
/// wrap never happens, and the next bar was written on the same row. Here the pad is
/// replaced by "erase to the end of the line", and a newline is written before the next line
/// instead; nothing is written past the last line, so the cursor stays on it as indicatif
/// expects. A line longer than the width (the terminal narrowed since the bars were styled) is
/// cut, never wrapped.
#[derive(Debug)]
struct Narrower {
    term: console::Term,
    /// A line was written and padded: the next text starts on the next line.
    line_open: std::sync::atomic::AtomicBool,
}

impl Narrower {
    fn new(term: console::Term) -> Self {
        Self {
            term,
            line_open: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn settled(&self) {
        self.line_open.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

impl indicatif::TermLike for Narrower {
    fn width(&self) -> u16 {
        self.term.size().1.saturating_sub(2).max(1)
    }
    fn height(&self) -> u16 {
        self.term.size().0
    }
    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        self.settled();
        self.term.move_cursor_up(n)
    }
    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        self.settled();
        self.term.move_cursor_down(n)
    }
    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        self.term.move_cursor_right(n)
    }
    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        self.term.move_cursor_left(n)
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.settled();
        self.term.write_line(s)
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        if s.is_empty() {
            return Ok(());
        }
        if s.bytes().all(|b| b == b' ') {
            // indicatif's pad to the width: erase the rest of the row instead.
            return self.term.write_str("\x1b[K");
        }
        if s == "\r" {
            return self.term.write_str(s); // back to the start of the first row
        }
        // A line: it starts on a row of its own, and the next one will too.
        if self.line_open.swap(true, Relaxed) {
            self.term.write_str("\r\n")?;
        }
        self.term
            .write_str(&console::truncate_str(s, usize::from(self.width()), ""))?;
        self.term.write_str("\x1b[K")
    }
    fn clear_line(&self) -> std::io::Result<()> {
        self.settled();
        self.term.clear_line()
    }
    fn flush(&self) -> std::io::Result<()> {
        self.term.flush()
    }
}

/// The overall bar's template for a terminal `width` columns wide (as indicatif is told it):
/// the fixed parts always fit, the bar takes what is left.
fn overall_template(width: u16) -> &'static str {
    match width {
        0..58 => "{spinner} [{wide_bar}] {pos}/{len}",
        58..78 => "{spinner} {msg:<16!} [{wide_bar}] {pos}/{len} versions",
        _ => "{spinner} {msg:<24!} [{wide_bar}] {pos}/{len} versions",
    }
}

/// A download bar's template for a terminal `width` columns wide.
fn download_template(width: u16) -> &'static str {
    match width {
        // The message (`downloading V`) is never cut: a cut version reads as another one.
        0..58 => "  {msg:<16} [{wide_bar}] {percent:>3}%",
        58..98 => "  {msg:<18} [{wide_bar}] {bytes:>10}/{total_bytes:<10}",
        _ => "  {msg:<22} [{wide_bar}] {bytes:>10}/{total_bytes:<10} {bytes_per_sec:>12}",
    }
}

/// The plain-lines mode: when each version started, to report its time.
#[derive(Default)]
struct Lines {
    started: Mutex<HashMap<MethodVersion, (std::time::Instant, u64)>>,
}

impl Lines {
    /// The first start of `version` (download or extraction): prints `line`, keeps the time.
    fn begin(&self, printer: &Printer, version: &MethodVersion, bytes: u64, line: String) {
        let mut started = crate::util::parallel::locked(&self.started);
        if !started.contains_key(version) {
            started.insert(version.clone(), (std::time::Instant::now(), bytes));
            printer.progress(line);
        }
    }
}

pub struct ProgressReporter {
    bars: Option<std::sync::Arc<Bars>>,
    lines: Option<Lines>,
    printer: Printer,
}

impl ProgressReporter {
    pub fn new(printer: &Printer) -> Self {
        let mode = mode(printer);
        let bars = (mode == Mode::Bars).then(|| {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::term_like_with_hz(
                Box::new(Narrower::new(console::Term::stderr())),
                20,
            ));
            // Drawn only once the total is known (`plan`): never a bar full at 0/0.
            let overall = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
            let width = indicatif::TermLike::width(&Narrower::new(console::Term::stderr()));
            overall.set_style(
                ProgressStyle::with_template(overall_template(width))
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            overall.set_message("installing");
            std::sync::Arc::new(Bars {
                multi,
                overall,
                downloads: Mutex::new(HashMap::new()),
                active: Mutex::new(Vec::new()),
            })
        });
        if let Some(b) = &bars {
            *crate::util::parallel::locked(&ACTIVE) = Some(b.clone());
            clear_bars_on_interrupt();
        }
        Self {
            bars,
            lines: (mode == Mode::Lines).then(Lines::default),
            printer: printer.clone(),
        }
    }

    pub fn done(&self) {
        if let Some(b) = &self.bars {
            *crate::util::parallel::locked(&ACTIVE) = None;
            b.clear();
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

    fn start(&self, version: &MethodVersion, bytes: u64) {
        if let Some(l) = &self.lines {
            l.begin(
                &self.printer,
                version,
                bytes,
                format!("installing {version} ({})", HumanBytes(bytes)),
            );
        }
        if let Some(b) = &self.bars {
            let mut active = crate::util::parallel::locked(&b.active);
            active.push(version.clone());
            b.show_active(&active);
        }
    }

    fn finish(&self, version: &MethodVersion, _bytes: u64) {
        if let Some(b) = &self.bars {
            let mut active = crate::util::parallel::locked(&b.active);
            active.retain(|v| v != version);
            b.show_active(&active);
        }
    }

    fn installed(&self, version: &MethodVersion) {
        if let Some(b) = &self.bars {
            b.overall.inc(1);
        }
        if let Some(l) = &self.lines
            && let Some((at, bytes)) = crate::util::parallel::locked(&l.started).get(version)
        {
            self.printer.progress(format!(
                "done {version} ({}, {:.2} s)",
                HumanBytes(*bytes),
                at.elapsed().as_secs_f64()
            ));
        }
    }

    fn download_start(&self, version: &MethodVersion, bytes: u64) {
        if let Some(l) = &self.lines {
            l.begin(
                &self.printer,
                version,
                bytes,
                format!("downloading {version} ({})", HumanBytes(bytes)),
            );
        }
        if let Some(b) = &self.bars {
            let bar = b.multi.insert_before(&b.overall, ProgressBar::new(bytes));
            let width = indicatif::TermLike::width(&Narrower::new(console::Term::stderr()));
            bar.set_style(
                ProgressStyle::with_template(download_template(width))
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            bar.set_message(format!("downloading {version}"));
            crate::util::parallel::locked(&b.downloads).insert(version.clone(), bar);
        }
    }

    fn download_progress(&self, version: &MethodVersion, bytes_so_far: u64) {
        if let Some(b) = &self.bars
            && let Some(bar) = crate::util::parallel::locked(&b.downloads).get(version)
        {
            bar.set_position(bytes_so_far);
        }
    }

    fn download_finish(&self, version: &MethodVersion) {
        if let Some(b) = &self.bars
            && let Some(bar) = crate::util::parallel::locked(&b.downloads).remove(version)
        {
            bar.finish_and_clear();
        }
    }
}
