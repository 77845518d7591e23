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
    /// Take a backup of the store now, into a new or empty directory, sessions running.
    ///
    /// Through the daemon if one runs (each session is copied as one of its checkpoints left
    /// it; a checkpoint due meanwhile waits, the searches go on), else from the store itself.
    /// The backup is whole once its backup.json is written. The daemon also takes its own
    /// every backup_every (config.toml).
    #[command(after_long_help = help::STORE_BACKUP)]
    Backup {
        /// A new or empty directory (another disk guards against more than a damaged file).
        dir: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Put a backup in the store's place (the daemon stopped).
    ///
    /// The backup's records are checked against its backup.json first; the store in place,
    /// if any, is moved aside to store.before-restore-TIME (kept), and what the restore goes
    /// back on is said per session.
    #[command(after_long_help = help::STORE_RESTORE)]
    Restore {
        /// A backup's directory (`store backup`'s, or one of DATA_DIR/backups/).
        dir: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
}

pub fn store(command: StoreCommand, config: &Config) -> CliResult {
    match command {
        StoreCommand::Backup {
            dir,
            out: JsonFlag { json },
        } => backup(config, &dir, json),
        StoreCommand::Restore {
            dir,
            out: JsonFlag { json },
        } => restore(config, &dir, json),
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

/// `store backup DIR`.
fn backup(config: &Config, dir: &std::path::Path, json: bool) -> CliResult {
    // The daemon runs elsewhere: it gets the directory as seen from here.
    let into = std::path::absolute(dir).map_err(|e| {
        crate::cli::output::Failure::input(anyhow::anyhow!("{}: {e}", dir.display()))
    })?;
    let (taken, _) = ask(config, protocol::Backup { into })?;
    if json {
        return print_json(&taken);
    }
    out!(
        "backup of {} sessions ({} records, {} MB on disk) in {}, {:.1} s; `fanorona store restore {}` puts it back",
        taken.manifest.sessions.len(),
        taken.manifest.records,
        taken.bytes >> 20,
        taken.dir.display(),
        taken.seconds,
        taken.dir.display()
    );
    Ok(())
}

/// `store restore DIR`.
fn restore(config: &Config, from: &std::path::Path, json: bool) -> CliResult {
    let data = DataDir::new(&config.data_dir);
    let _lock = daemon::lock(&data).map_err(daemon_failure)?;
    let restored =
        daemon::backup::restore(&data, from, config.store_cache).map_err(daemon_failure)?;
    // A data directory restored into is one whose store was created.
    if !data.created().exists() {
        let _ = std::fs::write(
            data.created(),
            format!("format {}\n", fanorona::session::format::FORMAT),
        );
    }
    if json {
        return print_json(&restored);
    }
    out!(
        "restored {} sessions from {} ({})",
        restored.manifest.sessions.len(),
        restored.from.display(),
        daemon::backup::age(restored.manifest.taken)
    );
    if let Some(aside) = &restored.set_aside {
        out!(
            "the store that was there is in {} (delete it once the sessions run again)",
            aside.display()
        );
    }
    out!("{}", daemon::backup::lost_words(&restored));
    Ok(())
}
