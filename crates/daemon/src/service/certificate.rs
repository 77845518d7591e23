//! Certificates: written on request (`Certificate`), and by a worker once its session is
//! solved (`Service::write_certificates`), into the data directory's `certificates/`; one
//! writer at a time on a prefix, all given up at shutdown.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Apply, Refusal, Service, bad_input};
use crate::answers::Certificates;
use crate::protocol::Certificate;
use fanorona_certificate::{Made, Written};
use fanorona_session::{SessionRecord, certificates};

/// A certificate prefix held by one writer until dropped.
struct Writing<'s> {
    set: &'s Mutex<HashSet<PathBuf>>,
    prefix: PathBuf,
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.set.lock().expect("writing lock").remove(&self.prefix);
    }
}

impl Apply for Certificate {
    fn apply(self, service: &Service) -> Result<Certificates, Refusal> {
        let Certificate {
            id,
            prefix,
            mv,
            goal,
            leaf_budget,
        } = self;
        let rec = service.sessions.get(id)?;
        let what = mv
            .as_deref()
            .map_or(String::new(), |m| format!(" (move {m})"));
        let _held = service.hold_prefix(&prefix).ok_or_else(|| {
            bad_input(
                certificates::CertificateError::Busy {
                    prefix: prefix.clone(),
                }
                .to_string(),
            )
        })?;
        let report = |line: &str| tracing::info!("session {id}{what}: certificate: {line}");
        // The session's own certificates (`session certificate ID` writes the missing
        // ones there): one already there and checked is kept.
        let own = service.own_prefix(id);
        let opts = service.certificate_options(
            certificates::Options {
                attacker: goal,
                leaf_budget,
                keep_checked: mv.is_none() && prefix == own,
                ..Default::default()
            },
            &report,
        );
        if !prefix.is_absolute() {
            return Err(bad_input(format!(
                "{}: the daemon needs an absolute path",
                prefix.display()
            )));
        }
        if mv.is_none() && !rec.goals.iter().any(|g| g.outcome.decided()) && rec.value.is_none() {
            return Err(bad_input(format!(
                "session {id} has no question decided yet: no certificate to write"
            )));
        }
        tracing::info!(
            "session {id}{what}: writing certificates under {}",
            prefix.display()
        );
        let mut progress = |goal: &str, w: &Written| {
            tracing::info!(
                "session {id}{what}: certificate of {goal}: {}",
                w.progress_line()
            )
        };
        let made = certificates::write_any(
            &service.sessions,
            &rec,
            mv.as_deref(),
            &prefix,
            opts,
            &mut progress,
        )
        .map_err(|e| Refusal {
            bad_input: matches!(
                e,
                certificates::CertificateError::Move { .. }
                    | certificates::CertificateError::FromStore { .. }
            ),
            message: e.to_string(),
        })?;
        // The session's own certificates (not a move's, nor copies elsewhere): its
        // questions' checks.
        if mv.is_none() && prefix == own {
            service.record_checks(id, &made);
        }
        for m in &made {
            match &m.check {
                Ok(_) => tracing::info!(
                    "session {id}{what}: certificate {} verified",
                    m.path.display()
                ),
                Err(e) => tracing::error!(
                    "session {id}{what}: certificate {} FAILED verification: {e}",
                    m.path.display()
                ),
            }
        }
        Ok(Certificates {
            session: id,
            mv,
            certificates: made.iter().map(Made::summary).collect(),
        })
    }
}

impl Service {
    /// Holds `prefix` for one certificate writer; `None` while another writes there.
    fn hold_prefix(&self, prefix: &Path) -> Option<Writing<'_>> {
        let mut set = self.writing.lock().expect("writing lock");
        set.insert(prefix.to_path_buf()).then(|| Writing {
            set: &self.writing,
            prefix: prefix.to_path_buf(),
        })
    }

    /// How the daemon writes certificates, on request or once a session is solved: `what`
    /// (which questions, a leaf budget asked for) given up at shutdown, reporting through
    /// `report`, and bounded by the config (one thread: the workers keep theirs).
    fn certificate_options<'a>(
        &'a self,
        what: certificates::Options<'a>,
        report: &'a (dyn Fn(&str) + Sync),
    ) -> certificates::Options<'a> {
        certificates::Options {
            cancel: Some(&self.closing),
            report: Some(report),
            ..what
        }
        .bounded(&self.config, 1)
    }

    /// Where the daemon keeps session `id`'s own certificates (absolute).
    fn own_prefix(&self, id: u64) -> PathBuf {
        let prefix = certificates::prefix(&self.dir.root, id);
        std::path::absolute(&prefix).unwrap_or(prefix)
    }

    /// Records in session `id` how each certificate of its root's questions checked: the
    /// full check of a question's proof is its certificate's.
    fn record_checks(&self, id: u64, made: &[Made]) {
        let checked = self.sessions.update(id, Vec::new(), |r| {
            for m in made {
                let attacker = m.goal.attacker;
                // A partial certificate holds what it has but not yet the claim: not recorded.
                if let Some(g) = r.goals.iter_mut().find(|g| g.attacker == attacker)
                    && (m.whole() || !m.verified())
                {
                    g.certificate_verified = Some(m.verified());
                }
            }
            Ok(())
        });
        if let Err(e) = checked {
            tracing::error!("session {id}: recording the certificates' check: {e}");
        }
    }

    /// Writes and checks the certificates of a session just solved, into the data
    /// directory's `certificates/`, logging each; the session's result stays either way.
    /// A question the rote store decided at the root is re-solved only with
    /// `resolve_rote_roots` (see `certificates::Options`).
    pub fn write_certificates(
        &self,
        rec: &SessionRecord,
        resolve_rote_roots: bool,
    ) -> Result<Vec<Made>, certificates::CertificateError> {
        let prefix = self.own_prefix(rec.id);
        let Some(_held) = self.hold_prefix(&prefix) else {
            return Err(certificates::CertificateError::Busy { prefix });
        };
        tracing::info!("session {}: writing its certificates", rec.id);
        let mut progress = |goal: &str, w: &Written| {
            tracing::info!(
                "session {}: certificate of {goal}: {}",
                rec.id,
                w.progress_line()
            )
        };
        let report = |line: &str| tracing::info!("session {}: certificate: {line}", rec.id);
        let opts = self.certificate_options(
            certificates::Options {
                resolve_rote_roots,
                keep_checked: true,
                ..Default::default()
            },
            &report,
        );
        let made = certificates::write(&self.sessions, rec, &prefix, opts, &mut progress)
            .inspect_err(|e| match e {
                certificates::CertificateError::FromStore { .. } => {
                    tracing::info!("session {}: no certificate of its own: {e}", rec.id)
                }
                _ => tracing::error!("session {}: no certificate: {e}", rec.id),
            })?;
        self.record_checks(rec.id, &made);
        for m in &made {
            let w = &m.written;
            match &m.check {
                Ok(_) if !m.whole() => tracing::warn!(
                    "session {}: certificate {} PARTIAL: {} open leaves (listed in {}); the rest verified; close them with `fanorona stitch --solve`",
                    rec.id,
                    m.path.display(),
                    w.open,
                    m.open_list
                        .as_ref()
                        .map_or(String::new(), |p| p.display().to_string())
                ),
                Ok(_) => tracing::info!(
                    "session {}: certificate {} ({} nodes, {} bytes, {} re-solved, {} leaves closed) verified",
                    rec.id,
                    m.path.display(),
                    w.nodes,
                    w.bytes,
                    w.resolved,
                    w.closed
                ),
                Err(e) => tracing::error!(
                    "session {}: certificate {} FAILED verification: {e}",
                    rec.id,
                    m.path.display()
                ),
            }
        }
        Ok(made)
    }
}
