//! Small building blocks shared by every module: strict YAML, exact versions, portable paths,
//! atomic file writes.

pub mod contain;
pub mod digest;
pub mod formats;
pub mod fs;
pub mod git;
pub mod git_index;
pub mod hint;
pub mod installed;
pub mod parallel;
pub mod paths;
pub mod platform;
pub mod redact;
pub mod text;
pub mod time;
pub mod version;
pub mod yaml;

/// A list of pairs serialized as a list of objects with the two names given: the shape of
/// several `--json` documents (`[{"version", "path"}]`, `[{"version", "reason"}]` …).
pub fn pairs_as<S, A, B>(list: &[(A, B)], first: &str, second: &str, s: S) -> Result<S::Ok, S::Error>
where
    S: serde::Serializer,
    A: serde::Serialize,
    B: serde::Serialize,
{
    use serde::ser::{SerializeMap, SerializeSeq};
    struct Pair<'a, A, B>(&'a str, &'a A, &'a str, &'a B);
    impl<A: serde::Serialize, B: serde::Serialize> serde::Serialize for Pair<'_, A, B> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut map = s.serialize_map(Some(2))?;
            map.serialize_entry(self.0, self.1)?;
            map.serialize_entry(self.2, self.3)?;
            map.end()
        }
    }
    let mut seq = s.serialize_seq(Some(list.len()))?;
    for (a, b) in list {
        seq.serialize_element(&Pair(first, a, second, b))?;
    }
    seq.end()
}
