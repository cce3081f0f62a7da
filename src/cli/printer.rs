//! Output discipline: data on stdout, everything else on stderr; one JSON document with
//! `--json`; colour only when asked or on a terminal, never with `NO_COLOR`.

use std::io::{IsTerminal, Write};

use super::{ColorChoice, GlobalArgs};
use crate::util::text::visible;

/// Where every line of output goes through.
#[derive(Debug, Clone)]
pub struct Printer {
    pub json: bool,
    pub quiet: bool,
    pub verbose: bool,
    pub color: bool,
    /// Whether the one `--json` document was printed (an error after it prints no second).
    printed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The directory a2c works in and its ancestors as resolved (links followed) and as the
    /// user typed them (`-C`, the shell's `PWD`), where the two differ, deepest first:
    /// messages name the typed ones.
    typed: Vec<(String, String)>,
    /// The secret variables' values, masked wherever they would be printed
    /// ([`crate::util::redact::scrub`]).
    secrets: std::sync::Arc<Vec<String>>,
}

pub use crate::JSON_SCHEMA;

impl Printer {
    pub fn new(global: &GlobalArgs) -> Self {
        let color = match global.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !crate::env::no_color() && std::io::stderr().is_terminal(),
        };
        Self {
            json: global.json,
            quiet: global.quiet,
            verbose: global.verbose,
            color,
            printed: Default::default(),
            typed: typed_directories(global),
            secrets: std::sync::Arc::new(crate::env::secret_values()),
        }
    }

    /// `text` as it is printed: every URL redacted and every secret masked (the backstop under
    /// each message: [`crate::util::redact::scrub`]), the working directory as typed, control
    /// characters escaped.
    fn shown(&self, text: &str) -> String {
        let scrubbed = crate::util::redact::scrub(text, &self.secrets);
        visible(&self.as_typed(&scrubbed)).into_owned()
    }

    /// Every string of a document through [`crate::util::redact::scrub`].
    fn scrub_doc(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => {
                if let std::borrow::Cow::Owned(clean) = crate::util::redact::scrub(s, &self.secrets) {
                    *s = clean;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.scrub_doc(v)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| self.scrub_doc(v)),
            _ => {}
        }
    }

    /// `text` with the resolved working directory spelled as the user typed it: a workspace
    /// below a link (macOS's `/tmp` → `/private/tmp`) is named by the path the user knows.
    /// Records and `--json` documents keep the resolved path (one spelling for what a2c
    /// compares and writes).
    fn as_typed(&self, text: &str) -> String {
        if self.typed.is_empty() {
            return text.to_string();
        }
        let part = |c: char| c.is_alphanumeric() || "._-~".contains(c);
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        // One pass: at each place a resolved directory starts a path, the deepest one that
        // matches whole components is spelled as typed, and the scan goes on after it.
        while let Some((at, resolved, typed)) = self
            .typed
            .iter()
            .filter_map(|(resolved, typed)| {
                let mut from = 0;
                while let Some(i) = rest[from..].find(resolved.as_str()) {
                    let at = from + i;
                    let starts = at == 0 || !rest[..at].ends_with(|c: char| part(c) || c == '/');
                    if starts && !rest[at + resolved.len()..].starts_with(part) {
                        return Some((at, resolved, typed));
                    }
                    from = at + 1;
                }
                None
            })
            .min_by_key(|(at, resolved, _)| (*at, usize::MAX - resolved.len()))
        {
            out.push_str(&rest[..at]);
            out.push_str(typed);
            rest = &rest[at + resolved.len()..];
        }
        out.push_str(rest);
        out
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// A line of data on stdout (human mode). Control characters in it become visible escapes
    /// (as everything a2c prints for a person: [`visible`]).
    pub fn data(&self, line: impl AsRef<str>) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", self.shown(line.as_ref()));
    }

    /// The one JSON document of `--json` mode, on stdout.
    ///
    /// Every document carries `"schema": JSON_SCHEMA` (docs/json.md).
    pub fn json_doc(&self, value: &impl serde::Serialize) {
        let mut doc = serde_json::to_value(value).expect("a2c's documents serialize");
        self.scrub_doc(&mut doc);
        if let Some(map) = doc.as_object_mut() {
            map.insert("schema".into(), JSON_SCHEMA.into());
        }
        self.printed.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut out = std::io::stdout().lock();
        let _ = serde_json::to_writer_pretty(&mut out, &doc);
        let _ = writeln!(out);
    }

    /// Under `--json`, an error is a document too (unless the command printed its own):
    /// `{"schema", "error": {"code", "message", "causes", "hint"}, "exit"}`. The text still
    /// goes to stderr.
    pub fn json_error(&self, err: &anyhow::Error, exit: u8) {
        if !self.json || self.printed.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        self.json_doc(&serde_json::json!({
            "error": {
                "code": error_code(err),
                "message": err.to_string(),
                "causes": err.chain().skip(1).map(|c| c.to_string()).collect::<Vec<_>>(),
                "hint": super::hint(err),
            },
            "exit": exit,
        }));
    }

    /// One line of a listing of what a command did or would do (`gc`, `cache clean|prune`): data
    /// on stdout, silenced by `-q` as the summary after it is.
    pub fn listing(&self, line: impl AsRef<str>) {
        if !self.quiet {
            self.data(line);
        }
    }

    /// A status line on stderr (not with `-q` or `--json`).
    pub fn status(&self, line: impl AsRef<str>) {
        if !self.quiet && !self.json {
            super::progress::eprint_line(&self.shown(line.as_ref()));
        }
    }

    /// A progress line on stderr (not with `-q`; with `--json` only when `A2C_PROGRESS=lines`
    /// asked for it, which the progress mode decides): stdout keeps the one document.
    pub fn progress(&self, line: impl AsRef<str>) {
        if !self.quiet {
            super::progress::eprint_line(&self.shown(line.as_ref()));
        }
    }

    /// A note on stderr: something the user should know that needs nothing done now (not with
    /// `-q` or `--json`, whose document says it).
    pub fn note(&self, line: impl AsRef<str>) {
        self.status(format!("note: {}", line.as_ref()));
    }

    /// A detail on stderr, only with `-v`.
    pub fn detail(&self, line: impl AsRef<str>) {
        if self.verbose {
            super::progress::eprint_line(&self.shown(line.as_ref()));
        }
    }

    /// A warning on stderr (not with `-q`).
    pub fn warn(&self, message: impl AsRef<str>) {
        if !self.quiet {
            super::progress::eprint_line(&format!(
                "{}: {}",
                self.paint("1;33", "warning"),
                self.shown(message.as_ref())
            ));
        }
    }

    /// An error with its `Caused by:` chain and hint, on stderr.
    pub fn error(&self, err: &anyhow::Error) {
        let shown = |text: &str| self.shown(text);
        let mut text = format!("{}: {}", self.paint("1;31", "error"), shown(&err.to_string()));
        for cause in err.chain().skip(1) {
            text.push_str(&format!("\n  Caused by: {}", shown(&cause.to_string())));
        }
        if let Some(hint) = super::hint(err) {
            text.push_str(&format!("\n{}: {}", self.paint("1;36", "hint"), shown(&hint)));
        }
        super::progress::eprint_line(&text);
    }
}

/// The working directory and its ancestors as resolved and as typed, where they differ
/// (deepest first, up to the first that is no link's): `-C DIR` as given (a relative one from
/// the shell's directory), else the shell's `PWD` when it is the directory a2c runs in.
fn typed_directories(global: &GlobalArgs) -> Vec<(String, String)> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let shell = crate::env::logical_cwd().filter(|p| fs_err::canonicalize(p).ok().as_ref() == Some(&cwd));
    let base = shell.unwrap_or(cwd);
    let typed = crate::util::paths::normalize(&match &global.directory {
        Some(dir) => base.join(dir),
        None => base,
    });
    let mut out = Vec::new();
    for dir in typed.ancestors() {
        match fs_err::canonicalize(dir) {
            Ok(resolved) if resolved != dir => out.push((resolved.display().to_string(), dir.display().to_string())),
            _ => break,
        }
    }
    out
}

/// A stable, machine-readable name for an error: the variant of the first typed error in the
/// chain, in kebab case (`LockWouldChange` → `lock-would-change`), `io-<kind>` for an I/O
/// error, `error` for a plain message. Only the leading identifier of the `Debug` form is
/// kept, never its fields.
fn error_code(err: &anyhow::Error) -> String {
    for cause in err.chain() {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return format!("io-{}", kebab(&format!("{:?}", io.kind())));
        }
        let debug = format!("{cause:?}");
        let ident: String = debug
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if ident.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
            // A wrapper variant (`Store(…)`, `Http(…)`) names where, the inner one what.
            let inner: String = debug[ident.len()..]
                .trim_start_matches(['(', ' '])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let wrapper = debug[ident.len()..].starts_with('(');
            if wrapper && inner.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                return kebab(&inner);
            }
            return kebab(&ident);
        }
    }
    "error".into()
}

fn kebab(ident: &str) -> String {
    let mut out = String::new();
    for (i, c) in ident.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else if c == '_' {
            out.push('-');
        } else {
            out.push(c);
        }
    }
    out
}

/// Writes `bytes` to stdout; a reader that went away (`a2c man | head`) ends the output
/// quietly, as it ends `cat`'s: that is no error of a2c's.
pub(crate) fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::Printer;

    /// Whole components only, the deepest directory first, one pass (a typed path holding a
    /// resolved one is never rewritten again).
    #[test]
    fn resolved_directories_are_named_as_typed() {
        let printer = Printer {
            json: false,
            quiet: false,
            verbose: false,
            color: false,
            printed: Default::default(),
            typed: vec![
                ("/private/tmp/w".into(), "/tmp/w".into()),
                ("/private/tmp".into(), "/tmp".into()),
                ("/r".into(), "/r/alias".into()),
            ],
            secrets: Default::default(),
        };
        let shown = |text: &str| printer.as_typed(text);
        assert_eq!(
            shown("store `/private/tmp/w/.tools_local`"),
            "store `/tmp/w/.tools_local`"
        );
        assert_eq!(shown("/private/tmp/other and /private/tmp"), "/tmp/other and /tmp");
        assert_eq!(shown("/private/tmp/w2/x"), "/tmp/w2/x");
        assert_eq!(shown("/private/tmpx /x/private/tmp"), "/private/tmpx /x/private/tmp");
        assert_eq!(shown("/r/w: /r"), "/r/alias/w: /r/alias");
        assert_eq!(shown("a2c -C /r/w install"), "a2c -C /r/alias/w install");
        assert_eq!(shown("no path here"), "no path here");
    }
}
