//! The `a2c` binary: parse, run, map the result to an exit code.

use clap::{CommandFactory, FromArgMatches};

fn main() -> std::process::ExitCode {
    // `--color` and NO_COLOR govern clap's own help and usage output too.
    let color = a2c::cli::clap_color(std::env::args_os());
    let matches = a2c::cli::Cli::command().color(color).get_matches();
    match a2c::cli::Cli::from_arg_matches(&matches) {
        Ok(cli) => a2c::cli::run(cli),
        Err(e) => e.exit(),
    }
}
