//! A locked data directory's store opened: a compaction a kill stopped finished or undone
//! first (`compact::recover`), then the store checked against the marker of its creation.

use std::sync::Arc;

use crate::compact;
use crate::datadir::{DaemonError, DataDir};
use fanorona_search::config::Config;
use fanorona_session::store::SledStore;
use fanorona_session::{SessionError, Sessions};

/// Opens the store of a locked data directory.
///
/// A marker file beside the store records that it was created, so a store whose files were
/// damaged or deleted is reported instead of being taken for a new, empty one.
pub fn open_sessions(dir: &DataDir, config: &Config) -> Result<Sessions, DaemonError> {
    if let Some(what) = compact::recover(dir)? {
        tracing::info!("{}: {what}", dir.root.display());
    }
    let marker = dir.created();
    let created = marker.exists();
    if created && !dir.store().is_dir() {
        return Err(SessionError::Damaged(format!(
            "{} is missing although {} says it was created",
            dir.store().display(),
            marker.display()
        ))
        .into());
    }
    let store = SledStore::open(&dir.store(), config.store_cache).map_err(SessionError::from)?;
    let sessions = Sessions::open(Arc::new(store), created)?;
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
