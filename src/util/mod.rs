//! Small building blocks shared by every module: strict YAML, exact versions, portable paths,
//! atomic file writes.

pub mod digest;
pub mod fs;
pub mod paths;
pub mod version;
pub mod yaml;
