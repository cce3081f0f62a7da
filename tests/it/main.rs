//! Integration tests: the real `a2c` binary on real git repositories in temp dirs.

mod common;
mod demo;
mod workspace;
