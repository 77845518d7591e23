//! `Backup`: a backup of the store on request, taken while the sessions run; and the daemon's
//! own, every `backup_every`, the newest `backup_keep` kept.

use std::time::{Duration, Instant, SystemTime};

use super::{Apply, Refusal, Service, bad_input};
use crate::backup::{self, BackupTaken, BackupsView};
use crate::datadir::DaemonError;
use crate::protocol::Backup;
use crate::shutdown::Shutdown;
use fanorona_session::log::{Progress, ProgressLog, unix_now};

/// How often the daemon looks whether a backup is due.
const LOOK_EVERY: Duration = Duration::from_secs(20);

impl Apply for Backup {
    fn apply(self, service: &Service) -> Result<BackupTaken, Refusal> {
        if !self.into.is_absolute() {
            return Err(bad_input(format!(
                "{}: the daemon needs an absolute path",
                self.into.display()
            )));
        }
        tracing::info!("backup: taking one into {}", self.into.display());
        let taken =
            backup::take(&service.sessions, &self.into, &mut |_, _| {}).map_err(|e| match e {
                DaemonError::Backup(message) => bad_input(message),
                e => Refusal {
                    message: e.to_string(),
                    bad_input: false,
                },
            })?;
        tracing::info!(
            "backup: {} records ({} MB) into {} in {:.1} s",
            taken.manifest.records,
            taken.bytes >> 20,
            taken.dir.display(),
            taken.seconds
        );
        Ok(taken)
    }
}

impl Service {
    /// Takes the daemon's own backups until `shutdown`: every `backup_every`, into the backup
    /// directory, the newest `backup_keep` kept; a failure is logged and shown in `session
    /// status` until the next backup succeeds.
    pub fn keep_backups(&self, shutdown: &Shutdown) {
        let Some(every) = self.config.backup_every else {
            return;
        };
        let root = backup::rolling_dir(&self.config, &self.dir);
        let since = SystemTime::now();
        // After a failure (a full disk), the next try waits a quarter of the interval.
        let mut retry_at = None;
        while !shutdown.wait_timeout(LOOK_EVERY) {
            if retry_at.is_some_and(|t: Instant| Instant::now() < t) {
                continue;
            }
            let busy = self.backups_busy.lock().expect("backups lock");
            let result =
                backup::take_if_due(&self.sessions, &root, every, self.config.backup_keep, since);
            drop(busy);
            let problem = match result {
                Ok(None) => continue,
                Ok(Some(t)) => {
                    retry_at = None;
                    for why in &t.manifest.left_out {
                        tracing::error!("backup: left out a damaged record: {why}");
                    }
                    tracing::info!(
                        "backup: {} records ({} MB) into {} in {:.1} s",
                        t.manifest.records,
                        t.bytes >> 20,
                        t.dir.display(),
                        t.seconds
                    );
                    None
                }
                Err(e) => {
                    tracing::warn!("backup: {e}; trying again in {} s", (every / 4).as_secs());
                    retry_at = Some(Instant::now() + every / 4);
                    Some(e.to_string())
                }
            };
            let mut view = BackupsView::of(&root, Some(every));
            view.problem = problem;
            *self.backups.lock().expect("backups lock") = view;
        }
    }
}

impl Service {
    /// Session `id`, which its run (or its certificates' writer) found damaged: put back from the newest of the daemon's
    /// backups that holds it whole (it then runs on from there, the work since lost and
    /// said), or its error says that none could and what to do.
    pub fn mend(&self, id: u64) {
        use fanorona_session::State;
        // Read again first: a reading error that passed (no memory, a flaky device) is no
        // reason to go back to a backup.
        if crate::put_back::reads_whole(&self.sessions, id) {
            tracing::warn!(
                "session {id}: its records read whole again; it goes on from its own last checkpoint"
            );
            let _ = self.sessions.update(id, Vec::new(), |r| {
                if r.state == State::Damaged {
                    r.state = State::Running;
                    r.error = None;
                }
                Ok(())
            });
            self.workers.poke();
            return;
        }
        // Damage that comes back after two put-backs is not in the session's records: it
        // stays damaged rather than be put back for ever.
        let times = {
            let mut mended = self.mended.lock().expect("mended lock");
            let n = mended.entry(id).or_insert(0);
            *n += 1;
            *n
        };
        if times > 2 {
            let why = "put back twice since the daemon started and damaged again: the damage is not in its own records (see the daemon's log); `fanorona store restore BACKUP` with the daemon stopped";
            tracing::error!("session {id}: {why}");
            self.advise(id, why);
            return;
        }
        let root = backup::rolling_dir(&self.config, &self.dir);
        let busy = self.backups_busy.lock().expect("backups lock");
        let result =
            crate::put_back::from_newest(&self.sessions, id, &root, self.config.store_cache);
        drop(busy);
        match result {
            Ok(p) => {
                let said = format!(
                    "its records were damaged; put back from the backup in {} ({}): {} checkpoints lost ({} nodes, {:.0} s of search)",
                    p.from.display(),
                    backup::age(p.taken),
                    p.lost.checkpoints,
                    p.lost.nodes,
                    p.lost.seconds
                );
                tracing::warn!("session {id}: {said}");
                // Said in the session's own log too, for `session tail`.
                if let Ok(mut log) = ProgressLog::open(&self.dir.logs(), id) {
                    log.write(&Progress {
                        time: unix_now(),
                        event: "put back".into(),
                        session: id,
                        message: Some(said),
                        ..Progress::default()
                    });
                }
                self.workers.poke();
            }
            Err(none) => {
                let advice = format!(
                    "{}: `fanorona session delete {id}` and start it again, or stop the daemon and `fanorona store restore BACKUP` an older backup (every session goes back to it)",
                    none.words()
                );
                tracing::error!("session {id}: damaged; {advice}");
                self.advise(id, &advice);
            }
        }
    }

    /// Puts `advice` in the error of session `id`, damaged or solved with a tree its
    /// certificates cannot read, in place of any earlier advice (a daemon started again tries
    /// again and advises again).
    fn advise(&self, id: u64, advice: &str) {
        use fanorona_session::State;
        const WHAT_TO_DO: &str = "; what to do: ";
        let _ = self.sessions.update(id, Vec::new(), |r| {
            let first = match r.state {
                State::Damaged => r.error.take().unwrap_or_default(),
                // Its value stands; its certificates cannot be written.
                State::Solved => {
                    "its tree cannot be read to write its certificates (a damaged record file)"
                        .to_string()
                }
                _ => return Ok(()),
            };
            let first = first.split(WHAT_TO_DO).next().unwrap_or_default();
            r.error = Some(format!("{first}{WHAT_TO_DO}{advice}"));
            Ok(())
        });
    }

    /// At the start: every session left damaged is tried again (a backup may hold it now).
    pub fn mend_all(&self) {
        let Ok(list) = self.sessions.list() else {
            return;
        };
        for r in list
            .iter()
            .filter(|r| r.state == fanorona_session::State::Damaged)
        {
            self.mend(r.id);
        }
    }
}
