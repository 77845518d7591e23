//! A locked data directory's store opened: a compaction a kill stopped finished or undone
//! first (`compact::recover`), then the store checked against the marker of its creation.

use std::sync::Arc;

use crate::compact;
use crate::datadir::{DaemonError, DataDir, is_damage};
use fanorona_search::config::Config;
use fanorona_session::store::SledStore;
use fanorona_session::{SessionError, Sessions};

/// Opens the store of a locked data directory.
///
/// A marker file beside the store records that it was created, so a store whose files were
/// damaged or deleted is reported instead of being taken for a new, empty one.
pub fn open_sessions(dir: &DataDir, config: &Config) -> Result<Sessions, DaemonError> {
    open(dir, config, false)
}

/// `open_sessions` for the daemon's start: a store that will not open (damaged, or gone
/// although its marker says it was created) is restored from the newest whole backup under
/// `backup_dir`, the damaged one set aside, and what that cost logged. Commands leave that
/// to the daemon and `store restore`: they say the damage.
pub fn open_or_restore(dir: &DataDir, config: &Config) -> Result<Sessions, DaemonError> {
    open(dir, config, true)
}

fn open(dir: &DataDir, config: &Config, restore: bool) -> Result<Sessions, DaemonError> {
    if let Some(what) = compact::recover(dir)? {
        tracing::info!("{}: {what}", dir.root.display());
    }
    let marker = dir.created();
    let created = marker.exists();
    let opened = if created && !dir.store().is_dir() {
        Err(SessionError::Damaged(format!(
            "{} is missing although {} says it was created",
            dir.store().display(),
            marker.display()
        )))
    } else {
        open_store(dir, config, created)
    };
    let sessions = match opened {
        Err(e) if restore && created && is_damage(&e) => {
            // The newest whole backup, if one serves: the operator is told what it cost.
            let root = crate::backup::rolling_dir(config, dir);
            let Some(r) = crate::backup::restore_newest(dir, &root, config.store_cache) else {
                return Err(e.into());
            };
            tracing::error!(
                "{}: {e}; restored from the backup {} ({}), the damaged store kept in {}; {}",
                dir.store().display(),
                r.from.display(),
                crate::backup::age(r.manifest.taken),
                r.set_aside
                    .as_deref()
                    .map_or("nowhere".into(), |p| p.display().to_string()),
                crate::backup::lost_words(&r)
            );
            open_store(dir, config, true)?
        }
        other => other?,
    };
    if !created {
        std::fs::write(
            &marker,
            format!("format {}\n", fanorona_session::format::FORMAT),
        )
        .map_err(|source| DaemonError::Io {
            what: "cannot write",
            path: marker.clone(),
            source,
        })?;
    }
    Ok(sessions)
}

fn open_store(dir: &DataDir, config: &Config, created: bool) -> Result<Sessions, SessionError> {
    let store = SledStore::open(&dir.store(), config.store_cache)?;
    Sessions::open(Arc::new(store), created)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fanorona_rules::position::Position;
    use std::time::{Duration, UNIX_EPOCH};

    /// A store that will not open is restored from the newest whole backup at the start, the
    /// damaged one set aside; with no backup, the damage is said as before.
    #[test]
    fn a_damaged_store_opens_from_the_newest_backup() {
        let tmp = tempfile::tempdir().unwrap();
        let mut config = Config::defaults();
        config.data_dir = tmp.path().join("data");
        config.store_cache = 16 << 20;
        let dir = DataDir::new(&config.data_dir);
        std::fs::create_dir_all(&dir.root).unwrap();
        let sessions = open_sessions(&dir, &config).unwrap();
        let root = Position::initial("3x3".parse().unwrap());
        let settings = fanorona_session::Settings {
            algo: fanorona_search::Algorithm::Pn2,
            db_dir: None,
            second_level: fanorona_search::SecondLevel::TreeSize,
            init: fanorona_search::Init::Mobility,
            weights: None,
            checkpoint_ms: 1000,
            verify: false,
            threads: 1,
            pairs: false,
        };
        let id = sessions.create(&root, None, settings).unwrap().id;
        let backups = crate::backup::rolling_dir(&config, &dir);
        let every = Duration::from_secs(1);
        let taken = crate::backup::take_if_due(&sessions, &backups, every, 2, UNIX_EPOCH).unwrap();
        assert!(taken.is_some());
        drop(sessions);
        // Damage: the store's files replaced by garbage.
        std::fs::remove_dir_all(dir.store()).unwrap();
        std::fs::create_dir_all(dir.store()).unwrap();
        std::fs::write(dir.store().join("db"), vec![0xA5; 1 << 16]).unwrap();
        std::fs::write(dir.store().join("conf"), b"garbage").unwrap();
        let sessions = open_or_restore(&dir, &config).unwrap();
        assert_eq!(sessions.get(id).unwrap().root, root.to_string());
        let aside: Vec<_> = std::fs::read_dir(&dir.root)
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("store.before-restore")
            })
            .collect();
        assert_eq!(aside.len(), 1, "the damaged store is kept");
        drop(sessions);
        // Without a backup, the damage is said.
        std::fs::remove_dir_all(&backups).unwrap();
        std::fs::remove_dir_all(dir.store()).unwrap();
        let e = open_or_restore(&dir, &config).err().unwrap().to_string();
        assert!(e.contains("missing"), "{e}");
    }
}
