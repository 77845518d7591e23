//! `fanorona store ...`: the session store on disk.

use super::*;

use crate::cli::args::JsonFlag;
use crate::cli::help;
use crate::cli::output::{CliResult, print_json};
use crate::out;
use fanorona::config::Config;
use fanorona::daemon::{self, DataDir};

#[derive(clap::Subcommand)]
pub enum StoreCommand {
    /// Give back the store's dead space: copy it, check the copy, swap it in.
    ///
    /// Every record is copied into a new store beside the old, the copy checked against it,
    /// and swapped in. sled keeps the space of every record rewritten or deleted
    /// (checkpoints' patches, folded chunks), so a store that ran for days is mostly garbage.
    /// Needs the store to itself (stop the daemon first) and free disk for the live records;
    /// stopped anywhere, the store is whole (the compaction is finished or undone when it
    /// opens).
    #[command(after_long_help = help::STORE_COMPACT)]
    Compact {
        #[command(flatten)]
        out: JsonFlag,
    },
}

pub fn store(command: StoreCommand, config: &Config) -> CliResult {
    match command {
        StoreCommand::Compact {
            out: JsonFlag { json },
        } => {
            let dir = DataDir::new(&config.data_dir);
            let _lock = daemon::lock(&dir).map_err(daemon_failure)?;
            let mut last = std::time::Instant::now();
            let gb = |b: u64| b as f64 / 1e9;
            let done = daemon::compact::compact(&dir, config, &mut |table, c| {
                if !json && last.elapsed() >= Duration::from_secs(5) {
                    eprintln!(
                        "copying {}: {} records, {:.2} GB so far",
                        table.name(),
                        c.records,
                        gb(c.bytes)
                    );
                    last = std::time::Instant::now();
                }
            })
            .map_err(daemon_failure)?;
            if json {
                print_json(&done.report(dir.store()))?;
            } else {
                out!(
                    "{}: {} records ({:.2} GB) copied, checked and swapped in; {:.2} GB on disk before, {:.2} GB now; {:.1} s",
                    dir.store().display(),
                    done.contents.records,
                    gb(done.contents.bytes),
                    gb(done.bytes_before),
                    gb(done.bytes_after),
                    done.seconds
                );
            }
            Ok(())
        }
    }
}
