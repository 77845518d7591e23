//! The `fanorona` command line.

mod cli;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};

use cli::output::Failure;

fn main() -> ExitCode {
    // With --json anywhere, a failure is a JSON object on stdout too.
    let json = std::env::args_os().any(|a| a == "--json");
    let parsed = match parse() {
        Ok(c) => c,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        Err(e) => {
            // One line: what is wrong, and the help of the command that was meant.
            let text = e.render().to_string();
            let first: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let message = format!(
                "{} (see '{} --help')",
                first.join(" ").trim_start_matches("error: "),
                command_named()
            );
            return fail(&message, 2, json);
        }
    };
    match cli::run(parsed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(e)) => fail(&cli::output::one_line(&e), 2, json),
        Err(Failure::Other(e)) => fail(&cli::output::one_line(&e), 1, json),
        Err(Failure::Reported(code)) => ExitCode::from(code),
    }
}

/// The command line, read with negative numbers taken as values on every command: `--depth
/// -1` is then refused by the flag's own check, which names it, rather than read as an
/// unknown flag '-1'.
fn parse() -> Result<cli::Cli, clap::Error> {
    fn negatives(c: clap::Command) -> clap::Command {
        c.allow_negative_numbers(true).mut_subcommands(negatives)
    }
    let matches = negatives(cli::Cli::command()).try_get_matches()?;
    cli::Cli::from_arg_matches(&matches)
}

/// Reports a failure: one line on stderr, or with --json one object on stdout.
fn fail(message: &str, code: u8, json: bool) -> ExitCode {
    if json {
        println!(
            "{}",
            serde_json::json!({"error": message, "exit_code": code})
        );
    } else {
        eprintln!("error: {message}");
    }
    ExitCode::from(code)
}

/// The command the arguments name ("fanorona db build"), for a pointer to its help.
fn command_named() -> String {
    let mut command = <cli::Cli as clap::CommandFactory>::command();
    let mut words = vec!["fanorona".to_string()];
    for arg in std::env::args_os()
        .skip(1)
        .filter_map(|a| a.into_string().ok())
    {
        let Some(sub) = command.find_subcommand(&arg).cloned() else {
            continue;
        };
        words.push(sub.get_name().to_string());
        command = sub;
    }
    words.join(" ")
}
