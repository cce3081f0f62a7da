//! Output discipline: data on stdout, everything else on stderr; one JSON document with
//! `--json`; colour only when asked or on a terminal, never with `NO_COLOR`.

use std::io::{IsTerminal, Write};

use super::{ColorChoice, GlobalArgs};

/// Where every line of output goes through.
#[derive(Debug, Clone)]
pub struct Printer {
    pub json: bool,
    pub quiet: bool,
    pub verbose: bool,
    pub color: bool,
}

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
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// A line of data on stdout (human mode).
    pub fn data(&self, line: impl AsRef<str>) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", line.as_ref());
    }

    /// The one JSON document of `--json` mode, on stdout.
    pub fn json_doc(&self, value: &serde_json::Value) {
        let mut out = std::io::stdout().lock();
        let _ = serde_json::to_writer_pretty(&mut out, value);
        let _ = writeln!(out);
    }

    /// A status line on stderr (not with `-q` or `--json`).
    pub fn status(&self, line: impl AsRef<str>) {
        if !self.quiet && !self.json {
            eprintln!("{}", line.as_ref());
        }
    }

    /// A detail on stderr, only with `-v`.
    pub fn detail(&self, line: impl AsRef<str>) {
        if self.verbose {
            eprintln!("{}", line.as_ref());
        }
    }

    /// A warning on stderr (not with `-q`).
    pub fn warn(&self, message: impl AsRef<str>) {
        if !self.quiet {
            eprintln!("{}: {}", self.paint("1;33", "warning"), message.as_ref());
        }
    }

    /// An error with its `Caused by:` chain and hint, on stderr.
    pub fn error(&self, err: &anyhow::Error) {
        let mut text = format!("{}: {err}", self.paint("1;31", "error"));
        for cause in err.chain().skip(1) {
            text.push_str(&format!("\n  Caused by: {cause}"));
        }
        if let Some(hint) = super::hint(err) {
            text.push_str(&format!("\n{}: {hint}", self.paint("1;36", "hint")));
        }
        eprintln!("{text}");
    }
}
