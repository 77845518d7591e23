//! `fanorona completions SHELL` and `fanorona man DIR`: the shell completions and the man
//! pages, both made from the command line's own definition, so they cannot fall behind it.

use std::io::Write;
use std::path::Path;

use anyhow::anyhow;
use clap::CommandFactory;

use crate::cli::Cli;
use crate::cli::output::{CliResult, Failure, print_json, write_atomically};
use crate::out;

/// Prints the completion script of `shell` for every command, subcommand and option.
pub fn completions(shell: clap_complete::Shell) -> CliResult {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "fanorona", &mut script);
    let script = String::from_utf8(script).map_err(Failure::other)?;
    out!("{}", script.trim_end());
    Ok(())
}

/// `man DIR --json`: where the pages went, and their file names.
#[derive(serde::Serialize)]
struct ManPagesWritten<'d> {
    dir: &'d Path,
    pages: Vec<String>,
}

/// Writes a man page for the command and each of its subcommands into `dir` (made if it is
/// not there), each named by the words that run it: fanorona.1, fanorona-session.1,
/// fanorona-session-start.1.
pub fn man(dir: &Path, json: bool) -> CliResult {
    if dir.exists() && !dir.is_dir() {
        return Err(Failure::input(anyhow!(
            "{}: not a directory",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::input(anyhow!("cannot make {}: {e}", dir.display())))?;
    // Built whole first: each subcommand then knows its full name ("fanorona session start").
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let mut pages = Vec::new();
    write_pages(&root, dir, &mut pages)?;
    if json {
        print_json(&ManPagesWritten { dir, pages })?;
    } else {
        out!("{} man pages in {}", pages.len(), dir.display());
    }
    Ok(())
}

/// Writes the page of `command`, then those of its subcommands.
fn write_pages(command: &clap::Command, dir: &Path, pages: &mut Vec<String>) -> CliResult {
    let man = clap_mangen::Man::new(command.clone())
        .source(format!("fanorona {}", env!("CARGO_PKG_VERSION")));
    let name = man.get_filename();
    let mut page = Vec::new();
    render(&man, command, &mut page).map_err(Failure::other)?;
    write_atomically(&dir.join(&name), &page)?;
    pages.push(name);
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir, pages)?;
    }
    Ok(())
}

/// The page: clap_mangen's sections, with the examples of the long help as an EXAMPLES
/// section, one command a line (clap_mangen would run them together into one paragraph).
fn render(
    man: &clap_mangen::Man,
    command: &clap::Command,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(w)?;
    }
    if command.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(w)?;
    }
    if let Some(examples) = command.get_after_long_help() {
        writeln!(w, ".SH EXAMPLES\n.nf")?;
        for line in examples
            .to_string()
            .lines()
            .skip_while(|l| l.ends_with(':'))
        {
            writeln!(w, "{}", roff_line(line.strip_prefix("  ").unwrap_or(line)))?;
        }
        writeln!(w, ".fi")?;
    }
    if command.get_version().is_some() {
        man.render_version_section(w)?;
    }
    Ok(())
}

/// A line of text as roff prints it: backslashes and hyphens escaped (a command copied from
/// the page must keep its ASCII hyphens), and a leading '.' or ''' not read as a request.
fn roff_line(line: &str) -> String {
    let text = line.replace('\\', "\\e").replace('-', "\\-");
    if text.starts_with(['.', '\'']) {
        format!("\\&{text}")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::roff_line;

    #[test]
    fn roff_lines_keep_their_hyphens_and_backslashes() {
        assert_eq!(
            roff_line("fanorona perft --depth 3"),
            "fanorona perft \\-\\-depth 3"
        );
        assert_eq!(roff_line("a\\b"), "a\\eb");
        assert_eq!(roff_line(".x"), "\\&.x");
    }
}
