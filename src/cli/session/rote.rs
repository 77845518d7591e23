//! `fanorona rote ...`: the rote store of solved positions.

use super::*;

use crate::cli::args::JsonFlag;
use crate::cli::help;
use crate::cli::output::{CliResult, check_output, print_json};
use crate::out;
use fanorona::config::Config;
use fanorona::daemon::protocol::{self};

/// `rote export FILE --json`: how many entries were written, and where. (The command line
/// writes the file: the answer is its own.)
#[derive(serde::Serialize)]
struct RoteExported {
    entries: usize,
    file: PathBuf,
}

#[derive(clap::Subcommand)]
pub enum RoteCommand {
    /// How many solved positions the rote store holds, and how often searches hit it.
    ///
    /// By board, with how many have a best move.
    #[command(after_long_help = help::ROTE_STATS)]
    Stats {
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Write every rote entry to FILE, one JSON object per line.
    ///
    /// Each has the position, a hash of the positions since the last capture it was decided
    /// under, the side whose win was asked, whether it wins, and the best move if known.
    #[command(after_long_help = help::ROTE_EXPORT)]
    Export {
        /// The file to write (JSON lines: position, history, attacker, value, best move).
        file: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
}

pub fn rote(command: RoteCommand, config: &Config) -> CliResult {
    match command {
        RoteCommand::Stats {
            out: JsonFlag { json },
        } => {
            let (v, _) = ask(config, protocol::RoteStatsOf {})?;
            if json {
                out!("{}", json_of(&v));
            } else {
                out!(
                    "{} solved positions ({} attacker wins, {} not), {} with a best move",
                    v.entries,
                    v.attacker_wins,
                    v.attacker_does_not_win,
                    v.with_best_move
                );
                for (b, n) in &v.boards {
                    out!("  {b}: {n}");
                }
                out!(
                    "searches hit it {} times ({:.4} per node created)",
                    v.hits,
                    v.hit_rate
                );
            }
            Ok(())
        }
        RoteCommand::Export {
            file,
            out: JsonFlag { json },
        } => {
            check_output("export to", &file)?;
            let (entries, _) = ask(config, protocol::RoteExport {})?;
            let mut text = String::new();
            for e in &entries {
                text.push_str(&json_of(e).to_string());
                text.push('\n');
            }
            crate::cli::output::write_atomically(&file, text.as_bytes())?;
            if json {
                print_json(&RoteExported {
                    entries: entries.len(),
                    file,
                })?;
            } else {
                out!("{} entries to {}", entries.len(), file.display());
            }
            Ok(())
        }
    }
}
