//! Small building blocks shared by every module: strict YAML, exact versions, portable paths,
//! atomic file writes.

pub mod contain;
pub mod digest;
pub mod fs;
pub mod git;
pub mod hint;
pub mod parallel;
pub mod paths;
pub mod platform;
pub mod redact;
pub mod text;
pub mod time;
pub mod version;
pub mod yaml;
