//! What to do about an error: every error type of a2c implements [`Hint`], and `cli` finds the
//! hint anywhere in an error's chain through one table of those types (a test fails when an
//! error type is missing from it).

/// The next step for the user, worded as an imperative; `None` when the message says it all.
pub trait Hint {
    fn hint(&self) -> Option<String>;
}
