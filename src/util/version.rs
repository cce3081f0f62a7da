//! Exact method versions. A method version is one exact semver version, never a range.

use std::fmt;
use std::str::FromStr;

/// One exact semver version (`1.4.0`, `2.0.0-rc.1`), the unit a write contract pins.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MethodVersion(semver::Version);

/// Why a string is not an exact version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` is not an exact version: {reason}")]
pub struct VersionError {
    pub input: String,
    pub reason: String,
}

impl MethodVersion {
    /// Parses an exact version; a leading `v` (legacy spelling) is accepted and dropped.
    pub fn parse(input: &str) -> Result<Self, VersionError> {
        let fail = |reason: &str| VersionError {
            input: input.to_string(),
            reason: reason.to_string(),
        };
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Err(fail("it is empty; write one exact version such as 1.4.0"));
        }
        if matches!(trimmed, "latest" | "*" | "x")
            || trimmed.starts_with(['^', '~', '>', '<', '=', '*'])
            || trimmed.contains([' ', ',', '|', '*'])
        {
            return Err(fail(
                "ranges and `latest` are not allowed; write one exact version such as 1.4.0",
            ));
        }
        let bare = trimmed.strip_prefix('v').unwrap_or(trimmed);
        semver::Version::parse(bare).map(MethodVersion).map_err(|e| {
            if bare
                .split(['-', '+'])
                .next()
                .is_some_and(|core| core.split('.').count() < 3)
            {
                fail("it needs all three parts MAJOR.MINOR.PATCH, such as 1.4.0")
            } else {
                fail(&e.to_string())
            }
        })
    }

    pub fn semver(&self) -> &semver::Version {
        &self.0
    }
}

impl FromStr for MethodVersion {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for MethodVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl serde::Serialize for MethodVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for MethodVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        MethodVersion::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl crate::util::hint::Hint for VersionError {
    fn hint(&self) -> Option<String> {
        Some("pin an exact version, `X.Y.Z` (a leading `v` is accepted in legacy records); ranges and wildcards are not versions".into())
    }
}

/// `1.2.0, 1.4.0`, or `version 1.2.0` for one.
pub fn join_versions(versions: &[MethodVersion]) -> String {
    let names: Vec<String> = versions.iter().map(ToString::to_string).collect();
    match names.len() {
        1 => format!("version {}", names[0]),
        _ => format!("versions {}", names.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_versions_parse_and_normalize() {
        assert_eq!(MethodVersion::parse("1.4.0").unwrap().to_string(), "1.4.0");
        assert_eq!(MethodVersion::parse("v1.4.0").unwrap().to_string(), "1.4.0");
        assert_eq!(MethodVersion::parse("2.0.0-rc.1").unwrap().to_string(), "2.0.0-rc.1");
    }

    #[test]
    fn ranges_and_partials_are_refused() {
        for bad in [
            "^1.2",
            "1.2",
            "latest",
            "*",
            ">=1",
            "~1.2.3",
            "1.x",
            "1.2.3 || 2.0.0",
            "",
            "v",
            "1",
        ] {
            assert!(MethodVersion::parse(bad).is_err(), "{bad} accepted");
        }
        assert!(
            MethodVersion::parse("1.2")
                .unwrap_err()
                .reason
                .contains("MAJOR.MINOR.PATCH")
        );
        assert!(MethodVersion::parse("^1.2").unwrap_err().reason.contains("ranges"));
    }

    #[test]
    fn orders_by_semver() {
        let mut v: Vec<MethodVersion> = ["1.10.0", "1.2.0", "1.2.0-rc.1"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        v.sort();
        let s: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(s, ["1.2.0-rc.1", "1.2.0", "1.10.0"]);
    }
}
