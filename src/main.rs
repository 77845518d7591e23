//! The `fanorona` command line.

mod cli;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};

use cli::output::Failure;

fn main() -> ExitCode {
    // Certificates and stores name the commit; only the binary's build script knows it.
    fanorona::version::set_commit(env!("FANORONA_COMMIT"));
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
            let message = format!("{} (see '{} --help')", refusal(&e), command_named());
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

/// What is wrong with a command line clap refused, in one line, from the error's parts (the
/// argument, the value, the validator's reason), then the similar names clap found.
fn refusal(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    // A name, or a list of them, as clap quotes them.
    let text = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(format!("'{s}'")),
        Some(ContextValue::Strings(all)) if !all.is_empty() => Some(
            all.iter()
                .map(|s| format!("'{s}'"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        _ => None,
    };
    let bare = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    let arg = text(ContextKind::InvalidArg);
    let what = match (e.kind(), &arg, bare(ContextKind::InvalidValue)) {
        (ErrorKind::InvalidValue, Some(arg), Some("")) => {
            format!("a value is required for {arg} but none was supplied")
        }
        (ErrorKind::InvalidValue, Some(arg), Some(value)) => match e.get(ContextKind::ValidValue) {
            Some(ContextValue::Strings(valid)) if !valid.is_empty() => format!(
                "invalid value '{value}' for {arg} [possible values: {}]",
                valid.join(", ")
            ),
            _ => format!("invalid value '{value}' for {arg}"),
        },
        (ErrorKind::ValueValidation, Some(arg), Some(value)) => {
            match std::error::Error::source(e) {
                Some(reason) => format!("invalid value '{value}' for {arg}: {reason}"),
                None => format!("invalid value '{value}' for {arg}"),
            }
        }
        (ErrorKind::TooManyValues, Some(arg), Some(value)) => {
            format!("unexpected value '{value}' for {arg} found; no more were expected")
        }
        (ErrorKind::UnknownArgument, Some(arg), _) => format!("unexpected argument {arg} found"),
        (ErrorKind::MissingRequiredArgument, Some(_), _) => match e.get(ContextKind::InvalidArg) {
            Some(ContextValue::Strings(missing)) => format!(
                "the following required arguments were not provided: {}",
                missing.join(", ")
            ),
            _ => clap_line(e),
        },
        (ErrorKind::ArgumentConflict, _, _) => {
            let prior = text(ContextKind::PriorArg);
            match (&arg, text(ContextKind::InvalidSubcommand), prior) {
                (Some(arg), _, Some(prior)) if prior == *arg => {
                    format!("the argument {arg} cannot be used multiple times")
                }
                (Some(arg), _, Some(prior)) => {
                    format!("the argument {arg} cannot be used with {prior}")
                }
                (None, Some(sub), Some(prior)) => {
                    format!("the subcommand {sub} cannot be used with {prior}")
                }
                _ => clap_line(e),
            }
        }
        (ErrorKind::InvalidSubcommand, _, _) => match text(ContextKind::InvalidSubcommand) {
            Some(sub) => format!("unrecognized subcommand {sub}"),
            None => clap_line(e),
        },
        // The kinds that carry no parts to build from.
        _ => clap_line(e),
    };
    let similar = [
        ContextKind::SuggestedSubcommand,
        ContextKind::SuggestedArg,
        ContextKind::SuggestedValue,
    ]
    .into_iter()
    .find_map(text);
    match similar {
        Some(names) => format!("{what}; did you mean {names}?"),
        None => what,
    }
}

/// clap's own message, its first line: for the errors that carry no parts to build one from.
fn clap_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    first.trim().trim_start_matches("error: ").to_string()
}

/// Reports a failure: one line on stderr, or with --json one object on stdout.
fn fail(message: &str, code: u8, json: bool) -> ExitCode {
    if json {
        let failure = cli::output::FailureReport {
            error: message.to_string(),
            exit_code: code,
        };
        println!("{}", failure.line());
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
