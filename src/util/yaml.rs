//! A strict reader for the small YAML files `a2c` reads: one document holding one flat mapping
//! whose values are scalars or lists of scalars — and, one level down, lists whose items may be
//! mappings of the same flat kind (a marker's `registry:` entry with its own `mirrors:`).
//!
//! The YAML lexing is serde-saphyr's parser (`granit_parser`); the policy is ours, enforced on
//! its events so that every rejection carries the line: anchors, aliases, tags, nested
//! mappings, multi-line block scalars, several documents and duplicate keys are all refused.
//! Serde would keep the last of duplicate keys silently; this reader never does.
//!
//! Bounded: time is linear in the document (each mapping's keys are checked for duplicates
//! through a hash map, not against every earlier key), and a document holds at most
//! [`MAX_NODES`] keys and list items in all, far fewer than its byte cap
//! (`contain::MAX_CONFIG_BYTES`) would allow.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, Span};

/// A scalar with the line it starts on (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scalar {
    pub text: String,
    pub line: usize,
    /// `true` for a plain (unquoted) scalar, so that `null`, `~` and empty can mean "no value".
    pub plain: bool,
}

impl Scalar {
    /// `true` for a plain `null`, `~` or empty scalar.
    pub fn is_null(&self) -> bool {
        self.plain && matches!(self.text.as_str(), "" | "~" | "null" | "Null" | "NULL")
    }
}

/// The value of one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Scalar(Scalar),
    List(Vec<Scalar>),
    /// A top-level list with at least one mapping among its items (whose values are scalars
    /// or lists of scalars: never deeper).
    Items(Vec<Item>),
}

/// One item of a top-level list that holds a mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Scalar(Scalar),
    /// `- key: value` lines (or `{key: value}`), starting on `line`.
    Mapping {
        line: usize,
        entries: Vec<Entry>,
    },
}

/// One `key: value` entry of the top-level mapping, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub line: usize,
    pub value: Value,
}

/// Why a document was refused, with the 1-based line it concerns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct YamlError {
    pub line: usize,
    pub reason: String,
}

fn err<T>(span: &Span, reason: impl Into<String>) -> Result<T, YamlError> {
    Err(YamlError {
        line: span.start.line().max(1),
        reason: reason.into(),
    })
}

/// What a node may not carry, whatever its kind.
fn check_props(span: &Span, anchor: usize, tag: bool) -> Result<(), YamlError> {
    if anchor != 0 {
        return err(span, "anchors (&name) are not allowed");
    }
    if tag {
        return err(span, "tags (!name) are not allowed");
    }
    Ok(())
}

/// The most keys and list items, counted together at every level, that one document may hold:
/// an adoption record, a marker or a prompt's front matter has tens; a hostile one of
/// millions is refused before it is read further.
pub const MAX_NODES: usize = 10_000;

struct Reader<'a> {
    parser: Parser<'a, serde_saphyr::granit_parser::StrInput<'a>>,
    /// Keys and list items read so far.
    nodes: usize,
}

impl<'a> Reader<'a> {
    /// Counts one key or list item, refusing the document past [`MAX_NODES`].
    fn count(&mut self, span: &Span) -> Result<(), YamlError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return err(
                span,
                format!("more than {MAX_NODES} keys and list items in one document; a2c's files hold tens"),
            );
        }
        Ok(())
    }

    fn next(&mut self) -> Result<(Event<'a>, Span), YamlError> {
        match self.parser.next_event() {
            Some(Ok(event)) => Ok(event),
            Some(Err(e)) => Err(YamlError {
                line: e.marker().line().max(1),
                reason: e.info(),
            }),
            None => Err(YamlError {
                line: 1,
                reason: "unexpected end of document".into(),
            }),
        }
    }

    fn scalar(&self, span: &Span, text: Cow<'a, str>, style: ScalarStyle) -> Result<Scalar, YamlError> {
        match style {
            ScalarStyle::Plain | ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Ok(Scalar {
                text: text.into_owned(),
                line: span.start.line().max(1),
                plain: style == ScalarStyle::Plain,
            }),
            _ => err(
                span,
                "block scalars (| or >) are not allowed; write the value on one line",
            ),
        }
    }

    /// A value at `depth` (0: a key of the document; 1: a key of a list item's mapping).
    fn value(&mut self, depth: usize) -> Result<Value, YamlError> {
        let (event, span) = self.next()?;
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                check_props(&span, anchor, tag.is_some())?;
                Ok(Value::Scalar(self.scalar(&span, text, style)?))
            }
            Event::SequenceStart(_, anchor, tag) => {
                check_props(&span, anchor, tag.is_some())?;
                self.list(depth)
            }
            Event::MappingStart(..) => err(
                &span,
                "nested mappings are not allowed; values must be scalars or lists of scalars",
            ),
            Event::Alias(_) | Event::UnresolvedAlias(_) => err(&span, "aliases (*name) are not allowed"),
            other => err(&span, format!("unexpected {other:?}")),
        }
    }

    fn list(&mut self, depth: usize) -> Result<Value, YamlError> {
        let mut items = Vec::new();
        loop {
            let (event, span) = self.next()?;
            if !matches!(event, Event::SequenceEnd) {
                self.count(&span)?;
            }
            match event {
                Event::SequenceEnd => break,
                Event::Scalar(text, style, anchor, tag) => {
                    check_props(&span, anchor, tag.is_some())?;
                    items.push(Item::Scalar(self.scalar(&span, text, style)?));
                }
                Event::MappingStart(_, anchor, tag) if depth == 0 => {
                    check_props(&span, anchor, tag.is_some())?;
                    let line = span.start.line().max(1);
                    items.push(Item::Mapping {
                        line,
                        entries: self.entries(depth + 1)?,
                    });
                }
                Event::Alias(_) | Event::UnresolvedAlias(_) => return err(&span, "aliases (*name) are not allowed"),
                _ => return err(&span, "list items must be scalars"),
            }
        }
        if items.iter().all(|i| matches!(i, Item::Scalar(_))) {
            return Ok(Value::List(
                items
                    .into_iter()
                    .filter_map(|i| match i {
                        Item::Scalar(s) => Some(s),
                        Item::Mapping { .. } => None,
                    })
                    .collect(),
            ));
        }
        Ok(Value::Items(items))
    }

    /// The `key: value` entries of a mapping whose start was read, up to its end: keys plain
    /// or quoted scalars, never twice, never a merge key.
    fn entries(&mut self, depth: usize) -> Result<Vec<Entry>, YamlError> {
        let mut entries: Vec<Entry> = Vec::new();
        // Each key's first line, so that a duplicate is found in constant time.
        let mut seen: HashMap<String, usize> = HashMap::new();
        loop {
            let (event, span) = self.next()?;
            if !matches!(event, Event::MappingEnd) {
                self.count(&span)?;
            }
            let key = match event {
                Event::MappingEnd => return Ok(entries),
                Event::Scalar(text, style, anchor, tag) => {
                    check_props(&span, anchor, tag.is_some())?;
                    self.scalar(&span, text, style)?
                }
                Event::Alias(_) | Event::UnresolvedAlias(_) => return err(&span, "aliases (*name) are not allowed"),
                _ => return err(&span, "keys must be plain scalars"),
            };
            if key.plain && key.text == "<<" {
                return err(&span, "merge keys (<<) are not allowed");
            }
            if let Some(first) = seen.get(&key.text) {
                return err(
                    &span,
                    format!("duplicate key `{}` (first defined on line {first})", key.text),
                );
            }
            seen.insert(key.text.clone(), key.line);
            let value = self.value(depth)?;
            entries.push(Entry {
                key: key.text,
                line: key.line,
                value,
            });
        }
    }
}

/// The top-level entry `key:` of a document that may hold anything else, nested (a method's
/// `config.yaml`), and the lines of its list (inline, or `- item` lines below it), with the
/// 1-based line it starts on: what [`parse_flat_mapping`] can then read alone. `None` without
/// it.
pub fn top_level_entry(text: &str, key: &str) -> Option<(usize, String)> {
    let start = text.lines().position(|l| l.starts_with(&format!("{key}:")))?;
    let mut lines = text.lines().skip(start);
    let mut snippet = vec![lines.next()?];
    snippet.extend(lines.take_while(|l| l.starts_with(' ') || l.starts_with('-') || l.trim().is_empty()));
    Some((start + 1, snippet.join("\n")))
}

/// Parses `text` as one flat mapping. An empty document is an empty mapping.
pub fn parse_flat_mapping(text: &str) -> Result<Vec<Entry>, YamlError> {
    let mut r = Reader {
        parser: Parser::new_from_str(text),
        nodes: 0,
    };
    let entries: Vec<Entry> = Vec::new();
    let (_, _) = r.next()?; // StreamStart
    let (event, span) = r.next()?;
    match event {
        Event::StreamEnd => return Ok(entries),
        Event::DocumentStart(..) => {}
        other => return err(&span, format!("unexpected {other:?}")),
    }
    let (event, span) = r.next()?;
    match event {
        Event::MappingStart(_, anchor, tag) => check_props(&span, anchor, tag.is_some())?,
        Event::Scalar(ref t, ScalarStyle::Plain, 0, None) if t.is_empty() => {
            // An empty document (only comments).
            return finish(&mut r, entries);
        }
        _ => return err(&span, "the document must be a mapping of `key: value` lines"),
    }
    let entries = r.entries(0)?;
    finish(&mut r, entries)
}

fn finish(r: &mut Reader<'_>, entries: Vec<Entry>) -> Result<Vec<Entry>, YamlError> {
    let (event, span) = r.next()?;
    if !matches!(event, Event::DocumentEnd) {
        return err(&span, "unexpected content after the mapping");
    }
    let (event, span) = r.next()?;
    match event {
        Event::StreamEnd => Ok(entries),
        _ => err(&span, "only one YAML document is allowed (found a second `---`)"),
    }
}

/// Quotes a string for YAML output when needed, so that writers produce what readers accept.
pub fn quote(s: &str) -> String {
    let plain_ok = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-/+:@".contains(c))
        && !s.starts_with(['-', ':', '@'])
        && !s.ends_with(':')
        && !matches!(s, "null" | "Null" | "NULL" | "~" | "true" | "false" | "yes" | "no")
        && s.parse::<f64>().is_err();
    if plain_ok {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("a string serializes")
    }
}

impl crate::util::hint::Hint for YamlError {
    fn hint(&self) -> Option<String> {
        Some("fix the file at the line named: a2c reads flat `key: value` lines, refusing duplicate keys, anchors, aliases, tags and nesting".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str) -> YamlError {
        parse_flat_mapping(text).unwrap_err()
    }

    #[test]
    fn reads_scalars_and_lists_with_lines() {
        let e = parse_flat_mapping("# c\na: 1\nb: [x, 'y']\nc:\n  - z\nd:\n").unwrap();
        assert_eq!(e.len(), 4);
        assert_eq!(e[0].line, 2);
        assert_eq!(
            e[1].value,
            Value::List(vec![
                Scalar {
                    text: "x".into(),
                    line: 3,
                    plain: true
                },
                Scalar {
                    text: "y".into(),
                    line: 3,
                    plain: false
                },
            ])
        );
        assert!(matches!(&e[3].value, Value::Scalar(s) if s.is_null()));
    }

    /// A top-level list may hold one-level mappings (a marker's registry with its mirrors).
    #[test]
    fn list_items_may_be_flat_mappings() {
        let e = parse_flat_mapping("r:\n  - x\n  - url: y\n    m: [z]\n").unwrap();
        let Value::Items(items) = &e[0].value else {
            panic!("{e:?}")
        };
        assert!(matches!(&items[0], Item::Scalar(s) if s.text == "x"));
        let Item::Mapping { line, entries } = &items[1] else {
            panic!("{items:?}")
        };
        assert_eq!((*line, entries.len(), entries[1].key.as_str()), (3, 2, "m"));
        assert!(matches!(&entries[1].value, Value::List(l) if l[0].text == "z" && l[0].line == 4));
    }

    #[test]
    fn empty_document_is_empty_mapping() {
        assert!(parse_flat_mapping("").unwrap().is_empty());
        assert!(parse_flat_mapping("# only a comment\n").unwrap().is_empty());
    }

    #[test]
    fn refuses_what_is_not_flat() {
        assert_eq!(reason("a: 1\nb: 2\na: 3\n").line, 3);
        assert!(
            reason("a: 1\nb: 2\na: 3\n")
                .reason
                .contains("duplicate key `a` (first defined on line 1)")
        );
        assert!(reason("a: &x 1\nb: *x\n").reason.contains("anchors"));
        assert!(reason("a: !!str 1\n").reason.contains("tags"));
        assert!(reason("a: !custom 1\n").reason.contains("tags"));
        assert!(reason("a:\n  b: 1\n").reason.contains("nested mappings"));
        assert!(reason("- a\n- b\n").reason.contains("must be a mapping"));
        assert!(reason("a: |\n  x\n").reason.contains("block scalars"));
        assert!(reason("a: 1\n---\nb: 2\n").reason.contains("only one YAML document"));
        assert!(reason("<<: {a: 1}\n").reason.contains("merge keys"));
        assert!(reason("a: [1, [2]]\n").reason.contains("list items"));
        assert!(reason("a:\n  - b: {c: 1}\n").reason.contains("nested mappings"));
        assert!(reason("a:\n  - b: [{c: 1}]\n").reason.contains("list items"));
        assert!(reason("a:\n  - b: 1\n    b: 2\n").reason.contains("duplicate key `b`"));
        assert!(reason("a:\n  - &x {b: 1}\n").reason.contains("anchors"));
        assert!(reason("a: 'unterminated\n").line >= 1);
    }

    /// A document of many keys is refused past the cap, naming it; one just below is read.
    #[test]
    fn a_document_holds_at_most_max_nodes_keys_and_items() {
        let keys = |n: usize| (0..n).map(|i| format!("k{i}: v\n")).collect::<String>();
        assert_eq!(parse_flat_mapping(&keys(MAX_NODES)).unwrap().len(), MAX_NODES);
        let e = reason(&keys(MAX_NODES + 1));
        assert!(e.reason.contains("more than 10000 keys"), "{e}");
        assert_eq!(e.line, MAX_NODES + 1);
        let items: String = (0..=MAX_NODES).map(|i| format!("  - i{i}\n")).collect();
        assert!(reason(&format!("a:\n{items}")).reason.contains("more than 10000"));
    }

    /// Reading is linear in the number of keys: four times the keys cost about four times the
    /// time, not sixteen (a ratio measured here, never a time; the best of three runs each).
    #[test]
    fn reading_time_grows_linearly_with_the_keys() {
        let doc = |n: usize| (0..n).map(|i| format!("key{i}: value\n")).collect::<String>();
        let (small, large) = (doc(MAX_NODES / 4), doc(MAX_NODES));
        let best = |d: &str| {
            (0..3)
                .map(|_| {
                    let t = std::time::Instant::now();
                    parse_flat_mapping(d).unwrap();
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::MAX, f64::min)
        };
        best(&small);
        let ratio = best(&large) / best(&small);
        assert!(
            ratio < 9.0,
            "4x the keys took {ratio:.1}x the time (quadratic would be ~16x)"
        );
    }

    #[test]
    fn quote_round_trips() {
        for s in [
            "1.4.0",
            "v1.4.0",
            "products/*",
            "a b",
            "",
            "null",
            "-x",
            "https://e.org/a2c/",
        ] {
            let doc = format!("k: {}\n", quote(s));
            let e = parse_flat_mapping(&doc).unwrap();
            assert!(matches!(&e[0].value, Value::Scalar(v) if v.text == s), "{s} -> {doc}");
        }
    }
}
