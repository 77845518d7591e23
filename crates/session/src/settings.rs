//! What a new session is given and what it may be given later: its settings taken
//! from the config and the tables found for its board, and the tables a paused session may
//! move to. The daemon and `fanorona solve` both start sessions through here.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::weights::Weights;
use crate::{SessionRecord, Settings};
use fanorona_rules::position::Position;
use fanorona_search::config::Config;
use fanorona_search::learned::WeightsError;
use fanorona_search::{Algorithm, Init};
use fanorona_tables::Database;
use fanorona_tables::file::board_dir;
use fanorona_tables::probe::TablesError;

/// Why a session's settings or tables were refused.
#[derive(Debug, Error)]
pub enum SettingsError {
    #[error(
        "a session keeps its first-level tree in the store, and {0} builds none: pn, pn2 or pn2-dfpn"
    )]
    NoFirstLevel(Algorithm),
    #[error(transparent)]
    Tables(#[from] TablesError),
    /// Tables named for a session that exists: whatever is wrong with them, the request was.
    #[error(transparent)]
    NewTables(TablesError),
    /// The config's `weights` file, for learned first numbers.
    #[error(transparent)]
    Weights(#[from] WeightsError),
    #[error("session {id}: bad root: {why}")]
    Root { id: u64, why: String },
    #[error(
        "{}: tables up to {new} pieces, fewer than the session's {old}: they would not decide \
         every position its trees were given values for",
        dir.display()
    )]
    FewerPieces {
        dir: PathBuf,
        new: usize,
        old: usize,
    },
}

impl SettingsError {
    /// Whether the request was at fault (a name, tables missing or too few), as opposed to
    /// a damaged table file.
    pub fn is_bad_input(&self) -> bool {
        match self {
            SettingsError::Tables(e) => e.is_missing(),
            _ => true,
        }
    }
}

/// The settings of a new session on `pos`: the tables of `db` (which must hold the board) or
/// of the config's db_dir (if it does), and the config's session keys.
pub fn new_settings(
    config: &Config,
    pos: &Position,
    db: Option<PathBuf>,
    algo: Option<Algorithm>,
) -> Result<Settings, SettingsError> {
    let algo = algo.unwrap_or(Algorithm::Pn2);
    if !algo.has_first_level() {
        return Err(SettingsError::NoFirstLevel(algo));
    }
    // Tables named, or found under the config's db_dir, must be whole: a session must not
    // run for days over a missing or damaged slice.
    let db_dir = match db {
        Some(d) => Some(d),
        None => board_dir(&config.db_dir, pos.board())
            .is_dir()
            .then(|| config.db_dir.clone()),
    };
    if let Some(d) = &db_dir {
        Database::open_whole(d, pos.board())?;
    }
    let db_dir = db_dir.map(|d| std::path::absolute(&d).unwrap_or(d));
    // Read now, kept in the record: the session searches with these weights for good.
    let weights = match &config.weights {
        Some(file) if config.init == Init::Learned => {
            let file = std::path::absolute(file).unwrap_or(file.clone());
            Some(Weights::read(&file, pos.board())?)
        }
        _ => None,
    };
    Ok(Settings {
        algo,
        db_dir,
        second_level: config.second_level,
        init: config.init,
        weights,
        checkpoint_ms: config.checkpoint_interval.as_millis().min(u64::MAX as u128) as u64,
        verify: config.verify,
        threads: config.threads.min(2),
        pairs: config.pairs,
    })
}

/// Tables a session may move to: whole for its board, and deciding every position its
/// tables did (as many pieces at least), so the values its trees hold stay true.
pub fn check_new_tables(rec: &SessionRecord, dir: &Path) -> Result<(), SettingsError> {
    let root: Position = rec.root.parse().map_err(|e| SettingsError::Root {
        id: rec.id,
        why: format!("{e}"),
    })?;
    let new = Database::open_whole(dir, root.board()).map_err(SettingsError::NewTables)?;
    // What the session's tables decide: every slice up to the largest built (it checked
    // them whole when it opened them).
    let old = rec
        .settings
        .db_dir
        .as_ref()
        .map_or(0, |d| Database::new(d, root.board()).max_pieces());
    if new.max_pieces() < old {
        return Err(SettingsError::FewerPieces {
            dir: dir.to_path_buf(),
            new: new.max_pieces(),
            old,
        });
    }
    Ok(())
}
