//! Text a2c shows a person: every path and value it prints may come from a repository, an
//! index or a server, so control characters are made visible (a terminal would act on ESC,
//! OSC or BEL) and overlong lines are cut.

use std::borrow::Cow;
use std::fmt::Write;

/// The longest line a2c prints, in characters: a parse error that echoes a 600 KB line shows
/// its start and says how much was left out.
pub const MAX_LINE: usize = 2000;

/// `text` as a person may safely see it: every control character but newline and tab becomes
/// a visible escape (`\x1b`, `\u{9b}`), and every line longer than [`MAX_LINE`] characters is
/// cut, saying how many characters were left out. Unchanged text is not copied.
pub fn visible(text: &str) -> Cow<'_, str> {
    let needs_escape = text.chars().any(is_hidden);
    let too_long = text.len() > MAX_LINE && text.split('\n').any(|l| l.chars().count() > MAX_LINE);
    if !needs_escape && !too_long {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(64 * 1024));
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for (shown, (at, c)) in line.char_indices().enumerate() {
            if shown == MAX_LINE {
                let rest = line[at..].chars().count();
                let _ = write!(out, "… ({rest} more characters not shown)");
                break;
            }
            match c {
                c if is_hidden(c) && (c as u32) < 0x80 => {
                    let _ = write!(out, "\\x{:02x}", c as u32);
                }
                c if is_hidden(c) => {
                    let _ = write!(out, "\\u{{{:x}}}", c as u32);
                }
                c => out.push(c),
            }
        }
    }
    Cow::Owned(out)
}

/// A path as a POSIX shell reads it back, for a command a hint prints (quoted only when it
/// needs to be; a path shlex cannot quote, one holding a NUL, as it is).
pub fn shell_quoted(path: &std::path::Path) -> String {
    let text = path.to_string_lossy();
    shlex::try_quote(&text).map_or_else(|_| text.to_string(), |q| q.into_owned())
}

/// The most characters of outside text (a name or a header from a bundle, a line git printed)
/// a message quotes.
pub const MAX_QUOTE: usize = 120;

/// Outside text quoted in a message: escaped as Rust escapes a string (`\0`, `\u{1b}`, `\"`)
/// and cut after [`MAX_QUOTE`] characters, saying how many were left out.
pub fn quoted_short(text: &str) -> String {
    let mut out = String::new();
    for (shown, c) in text.chars().enumerate() {
        if shown == MAX_QUOTE {
            let rest = text.chars().count() - shown;
            let _ = write!(out, "… ({rest} more characters)");
            break;
        }
        let _ = write!(out, "{}", c.escape_debug());
    }
    out
}

/// A parser's message that may echo outside text (a TOML error quotes the offending line):
/// each line cut after [`MAX_QUOTE`] characters, saying how many were left out. Control
/// characters are left to [`visible`], which every printed line goes through.
pub fn cut_lines(text: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match line.char_indices().nth(MAX_QUOTE) {
            Some((at, _)) => {
                let rest = line[at..].chars().count();
                let _ = write!(out, "{}… ({rest} more characters)", &line[..at]);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Outside bytes quoted in a message (see [`quoted_short`]; invalid UTF-8 as U+FFFD).
pub fn quoted_bytes(raw: &[u8]) -> String {
    quoted_short(&String::from_utf8_lossy(raw))
}

/// A control character a terminal may act on (C0 but newline and tab, DEL, C1), or one that
/// hides or reorders what follows (bidirectional overrides and isolates).
fn is_hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotations_are_escaped_and_short() {
        assert_eq!(quoted_short("a\0b\x1b"), "a\\0b\\u{1b}");
        let long = quoted_bytes(&[0u8; 2700]);
        assert!(long.len() < 400 && long.ends_with("… (2580 more characters)"), "{long}");
        let long = quoted_short(&"x".repeat(500));
        assert!(long.ends_with("… (380 more characters)"), "{long}");
        let cut = cut_lines(&format!("error at line 1\n1 | {}\n  | ^", "\0".repeat(2700)));
        assert_eq!(cut.lines().count(), 3);
        assert!(
            cut.lines().nth(1).unwrap().ends_with("… (2584 more characters)"),
            "{cut}"
        );
    }

    #[test]
    fn controls_become_visible_and_long_lines_are_cut() {
        assert!(matches!(visible("plain `path`\nnext"), Cow::Borrowed(_)));
        assert_eq!(visible("1.0.0\x1b]0;pwned\x07"), "1.0.0\\x1b]0;pwned\\x07");
        assert_eq!(visible("a\rb\x7f\u{9b}c\u{202e}d"), "a\\x0db\\x7f\\u{9b}c\\u{202e}d");
        assert_eq!(visible("tab\tand\nnewline"), "tab\tand\nnewline");
        let long = format!("line 3: {}\nshort", "x".repeat(600_000));
        let shown = visible(&long);
        let first = shown.lines().next().unwrap();
        assert!(
            first.ends_with(&format!("… ({} more characters not shown)", 600_008 - MAX_LINE)),
            "{}",
            &first[first.len() - 60..]
        );
        assert_eq!(
            first.chars().count(),
            MAX_LINE + "… (598008 more characters not shown)".chars().count()
        );
        assert!(shown.ends_with("\nshort"));
    }
}
