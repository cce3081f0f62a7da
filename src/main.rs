//! The `a2c` binary: parse, run, map the result to an exit code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    a2c::cli::run(a2c::cli::Cli::parse())
}
