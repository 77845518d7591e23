//! Where the running sessions' second-level searches go: this process's threads, or, with
//! `[cluster]` in the config, `fanorona worker`s reached through a NATS server.

use std::sync::Arc;

use crate::{DaemonError, DataDir};
use fanorona_cluster::dispatch::{NatsDispatcher, Options, subject_token};
use fanorona_search::config::Config;
use fanorona_search::jobs::Dispatcher;

/// The config's dispatcher (`None` without `[cluster]`): its token read now, so that a
/// token file that cannot be read refuses the start rather than every job.
pub fn dispatcher(
    config: &Config,
    dir: &DataDir,
) -> Result<Option<Arc<dyn Dispatcher>>, DaemonError> {
    let Some(c) = &config.cluster else {
        return Ok(None);
    };
    let token = fanorona_cluster::read_token(c.token_file.as_deref()).map_err(|source| {
        DaemonError::Io {
            what: "cannot read [cluster] token_file",
            path: c.token_file.clone().unwrap_or_default(),
            source,
        }
    })?;
    // Daemons sharing a server are told apart by host and data directory.
    let root = std::fs::canonicalize(&dir.root).unwrap_or_else(|_| dir.root.clone());
    let hash = fanorona_rules::machine::path_hash(&root);
    let prefix = subject_token(&format!(
        "{}-{:08x}",
        fanorona_cluster::host_name(),
        hash as u32
    ));
    Ok(Some(Arc::new(NatsDispatcher {
        options: Options {
            url: c.nats.clone(),
            token,
            width: c.jobs,
            ack_wait: c.ack_wait,
            window: fanorona_cluster::dispatch::PUBLISH_WINDOW,
            batch: fanorona_cluster::dispatch::ANSWERS_BATCH,
        },
        prefix,
        retry: c.retry,
        traces: c.trace.then(|| dir.root.join("traces")),
    })))
}
