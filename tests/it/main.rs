//! Integration tests: the real `a2c` binary on real git repositories in temp dirs.

mod bundles;
mod common;
mod demo;
mod install;
mod spec;
mod workspace;
