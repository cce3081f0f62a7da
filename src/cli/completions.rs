//! `a2c completions SHELL` and `a2c man [--out DIR]`: generated from the command line's own
//! definition (`clap_complete`, `clap_mangen`), so they never drift from it.

use std::path::PathBuf;

use clap::{Args, CommandFactory};

use super::{Cli, Outcome, Printer};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c completions bash > ~/.local/share/bash-completion/completions/a2c\n  a2c completions zsh > ~/.zfunc/_a2c\n  a2c completions fish > ~/.config/fish/completions/a2c.fish"
)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c man | man -l -\n  a2c man --out /usr/local/share/man/man1")]
pub struct ManArgs {
    /// Write a2c.1 and one page per subcommand (a2c-install.1 …) into DIR instead of printing
    /// a2c.1
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn completions(args: &CompletionsArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    // `--json` promises a document on stdout: a script is none.
    if printer.json {
        anyhow::bail!(
            "`a2c completions` writes a shell script, not a JSON document: run it without --json (`a2c completions {} > FILE`)",
            args.shell
        );
    }
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "a2c", &mut script);
    super::printer::write_stdout(&script)?;
    Ok(Outcome::Success)
}

pub fn man(args: &ManArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let mut all = Vec::new();
    pages(&Cli::command(), "a2c", "a2c", &mut all);
    let Some(dir) = &args.out else {
        if printer.json {
            anyhow::bail!(
                "`a2c man` without --out writes a page to stdout, not a JSON document: pass `--out DIR` with --json (it lists the pages it wrote)"
            );
        }
        let mut page = Vec::new();
        clap_mangen::Man::new(all.swap_remove(0).1).render(&mut page)?;
        super::printer::write_stdout(&page)?;
        return Ok(Outcome::Success);
    };
    fs_err::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (name, page) in all {
        let mut bytes = Vec::new();
        clap_mangen::Man::new(page).render(&mut bytes)?;
        let path = dir.join(format!("{name}.1"));
        crate::util::fs::write_atomic(&path, &bytes)?;
        written.push(path);
    }
    if printer.json {
        /// `man --json` (docs/json/man.schema.json).
        #[derive(serde::Serialize)]
        struct Pages {
            pages: Vec<std::path::PathBuf>,
        }
        printer.json_doc(&Pages { pages: written });
    } else {
        printer.status(format!("wrote {} man pages into `{}`", written.len(), dir.display()));
    }
    Ok(Outcome::Success)
}

/// One page per command and subcommand, however deep: `a2c-migrate-version` names the page (its
/// NAME and the SEE ALSO entries of its parent), `a2c migrate version` its SYNOPSIS. The top
/// page carries every environment variable with its full description.
fn pages(cmd: &clap::Command, page: &str, bin: &str, out: &mut Vec<(String, clap::Command)>) {
    // No `help` subcommand on a page: its SEE ALSO would name `a2c-help(1)`, which is not one.
    let mut this = cmd
        .clone()
        .disable_help_subcommand(true)
        .display_name(page.to_string())
        .bin_name(bin.to_string());
    if page == "a2c" {
        let mut text = String::from("Environment:\n");
        for crate::env::Variable { name, description, .. } in crate::env::listed() {
            let what: String = description.chars().filter(|c| !matches!(c, '`' | '<' | '>')).collect();
            text.push_str(&format!("\n{name}\n    {what}\n"));
        }
        this = this.after_long_help(text);
    }
    out.push((page.to_string(), this));
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        pages(
            sub,
            &format!("{page}-{}", sub.get_name()),
            &format!("{bin} {}", sub.get_name()),
            out,
        );
    }
}
