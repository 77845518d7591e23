//! The `fanorona` command line.

mod cli;

use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

use cli::output::Failure;

fn main() -> ExitCode {
    let parsed = match cli::Cli::try_parse() {
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
            // One line: what is wrong. `--help` has the rest.
            let text = e.render().to_string();
            let first: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            eprintln!("{} (see 'fanorona --help')", first.join(" "));
            return ExitCode::from(2);
        }
    };
    match cli::run(parsed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(e)) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
        Err(Failure::Other(e)) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
        Err(Failure::Reported(code)) => ExitCode::from(code),
    }
}
