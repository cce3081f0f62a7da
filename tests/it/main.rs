//! Integration tests: the real `a2c` binary on real git repositories in temp dirs.

mod architecture;
mod bundles;
mod cli_surface;
mod common;
mod config_errors;
mod crash;
mod demo;
mod doctor;
mod hostile;
mod http;
mod install;
mod migrate;
mod mirrors;
mod oci;
mod producers;
mod proxy;
mod publishing;
mod repository_model;
mod server;
mod servers;
mod signing;
mod spec;
mod trees;
mod trust;
mod untrusted;
mod workspace;
