//! `session certificate`: the certificates of a solved session.

use super::*;

use anyhow::anyhow;

use crate::cli::output::{CliResult, Failure, counted, print_json};
use crate::out;
use fanorona::Color;
use fanorona::certificate::Summary;
use fanorona::config::Config;
use fanorona::daemon::answers::{self, Shown};
use fanorona::daemon::client::{ClientError, call_within};
use fanorona::daemon::protocol::{self, StatusOf};
use fanorona::daemon::{self, DataDir};
use fanorona::session::GoalRecord;
use fanorona::session::report::{CertificateCopied, SessionCertificates};

/// `session certificate ID PREFIX`: the certificates the daemon wrote when the session was
/// solved, copied to PREFIX; written now (from the store) where there are none yet.
pub(super) fn session_certificate(
    config: &Config,
    id: u64,
    prefix: &Path,
    json: bool,
) -> CliResult {
    use fanorona::certificate::path_for;
    use fanorona::session::certificates;
    crate::cli::certificate::check_prefix(prefix)?;
    let (status, _) = ask(config, StatusOf { id })?;
    let dir = DataDir::new(&config.data_dir);
    let kept = certificates::prefix(&dir.root, id);
    // Absolute, as the daemon is told it and names what it wrote.
    let kept = std::path::absolute(&kept).unwrap_or(kept);
    // A solved session answers both questions: a draw disproves both, a win proves one and
    // so disproves the other. An unsolved one has a certificate for each question decided
    // so far (written now, from the store).
    let goals: Vec<fanorona::search::Goal> = if status.state == Shown::Solved {
        vec![Color::White, Color::Black]
            .into_iter()
            .map(|attacker| fanorona::search::Goal { attacker })
            .collect()
    } else {
        status
            .goals
            .iter()
            .filter(|g| g.outcome.decided())
            .map(GoalRecord::goal)
            .collect()
    };
    if goals.is_empty() {
        return Err(Failure::input(anyhow!(
            "session {id} is {} and has no question decided yet: no certificate to write",
            if status.state == Shown::Waiting {
                "waiting for a daemon"
            } else {
                status.state.name()
            }
        )));
    }
    let missing = goals.iter().any(|g| !path_for(&kept, *g).is_file());
    // Not written yet (solved by an older build, or the write failed): write them now.
    let made = if missing {
        write_certificates(config, id, &kept, &Chosen::default())?
    } else {
        Vec::new()
    };
    let mut rows = Vec::new();
    for g in &goals {
        use fanorona::certificate::{open_list_for, partial_path_for};
        // Whole, or partial (some leaves resisted) with its list; or left out by the writer
        // (decided by the rote store at the root).
        let (from, list) = if path_for(&kept, *g).is_file() {
            (path_for(&kept, *g), None)
        } else if partial_path_for(&kept, *g).is_file() {
            (partial_path_for(&kept, *g), Some(open_list_for(&kept, *g)))
        } else {
            eprintln!(
                "  {g}: no certificate of this session's own (taken from the rote store at its root)"
            );
            continue;
        };
        // One not written now was checked when the session was solved, but a file can be
        // damaged, or replaced, since: the kept file is checked again before it is handed
        // out (seconds; a write took up to an hour), against the session's tables and as
        // the certificate of this root, question and claim. A file that fails is not copied.
        let check = made
            .iter()
            .find(|m| Some(m.path.as_str()) == from.to_str())
            .map(|m| match &m.verify_error {
                None if m.verified => Ok("written and verified now"),
                e => Err(e.clone().unwrap_or_default()),
            })
            .unwrap_or_else(|| {
                check_kept(&from, &status, *g)
                    .map(|()| "written when the session was solved, verified again now")
            });
        if let Err(e) = &check {
            eprintln!(
                "  {g}: {} FAILED verification, not copied: {e}",
                from.display()
            );
            rows.push((g.to_string(), from, 0, check));
            continue;
        }
        let to = crate::cli::certificate::copy_certificate(&from, list.as_deref(), prefix, *g)?;
        if list.is_some() {
            eprintln!(
                "  {g}: PARTIAL: its open leaves are listed in {} (close them with `fanorona stitch --solve`)",
                open_list_for(prefix, *g).display()
            );
        }
        let bytes = std::fs::metadata(&to).map(|m| m.len()).unwrap_or(0);
        rows.push((g.to_string(), to, bytes, check));
    }
    if json {
        print_json(&SessionCertificates {
            session: id,
            certificates: rows
                .iter()
                .map(|(goal, path, bytes, check)| CertificateCopied {
                    goal: goal.clone(),
                    path: path.clone(),
                    bytes: *bytes,
                    verified: check.is_ok(),
                })
                .collect(),
        })?;
    } else {
        for (g, p, b, c) in &rows {
            let note = match c {
                Ok(note) => note.to_string(),
                Err(e) => format!("FAILED verification: {e}"),
            };
            out!(
                "{g}: {} ({}), {note}",
                p.display(),
                crate::cli::output::human_bytes(*b)
            );
        }
    }
    if rows.iter().any(|(_, _, _, c)| c.is_err()) {
        return Err(Failure::other(anyhow!("a certificate failed verification")));
    }
    Ok(())
}

/// Which of a session's certificates to write now, and how (`session certificate`'s
/// `--move`, `--goal`, `--leaf-budget`).
#[derive(Default)]
pub(super) struct Chosen {
    pub(super) mv: Option<String>,
    pub(super) goal: Option<Color>,
    pub(super) leaf_budget: Option<u64>,
}

/// `session certificate ID PREFIX` with `--move MOVE` (the certificates of the position
/// after a decided move of the root), `--goal` or `--leaf-budget`: written now, from the
/// store's first-level trees, straight to PREFIX.
pub(super) fn chosen_certificate(
    config: &Config,
    id: u64,
    chosen: &Chosen,
    prefix: &Path,
    json: bool,
) -> CliResult {
    crate::cli::certificate::check_prefix(prefix)?;
    let made = write_certificates(config, id, prefix, chosen)?;
    let verified = made.iter().all(|m| m.verified);
    if json {
        print_json(&answers::Certificates {
            session: id,
            mv: chosen.mv.clone(),
            certificates: made,
        })?;
    } else {
        for m in &made {
            out!("{}", crate::cli::certificate::line_of(m));
        }
    }
    if !verified {
        return Err(Failure::other(anyhow!("a certificate failed verification")));
    }
    Ok(())
}

/// Writes and checks the certificates of session `id` under `prefix` (of the position after
/// the decided capture `mv` of its root, when given): in the daemon when one runs (the store
/// is its; its log shows the progress), otherwise here, under the store's lock.
pub(super) fn write_certificates(
    config: &Config,
    id: u64,
    prefix: &Path,
    chosen: &Chosen,
) -> Result<Vec<Summary>, Failure> {
    use fanorona::session::certificates;
    let dir = DataDir::new(&config.data_dir);
    let prefix = std::path::absolute(prefix)
        .map_err(|e| Failure::input(anyhow!("{}: {e}", prefix.display())))?;
    let request = protocol::Certificate {
        id,
        prefix: prefix.clone(),
        mv: chosen.mv.clone(),
        goal: chosen.goal,
        leaf_budget: chosen.leaf_budget,
    };
    if dir.socket().exists() {
        eprintln!(
            "  asking the daemon to write it (its log shows the progress: {}, or the journal under systemd)",
            daemon::logfile::path(&dir).display()
        );
    }
    match call_within(&dir.socket(), request, None) {
        Ok(v) => return Ok(v.certificates),
        Err(ClientError::NoDaemon(_)) => {
            eprintln!("  no daemon answers: writing it here, under the store's lock");
        }
        Err(ClientError::Refused { message, bad_input }) => {
            return Err(refused(message, bad_input));
        }
        Err(e) => return Err(Failure::other(e)),
    }
    let _lock = daemon::lock(&dir).map_err(daemon_failure)?;
    let sessions = daemon::open_sessions(&dir, config).map_err(Failure::other)?;
    let rec = sessions.get(id).map_err(|e| Failure::input(anyhow!(e)))?;
    let mut progress = |goal: &str, w: &fanorona::certificate::Written| {
        eprintln!("  {goal}: {}", w.progress_line())
    };
    let report = |line: &str| eprintln!("  {line}");
    let opts = certificates::Options {
        attacker: chosen.goal,
        leaf_budget: chosen.leaf_budget,
        report: Some(&report),
        ..Default::default()
    }
    .bounded(config, config.threads);
    let made = certificates::write_any(
        &sessions,
        &rec,
        chosen.mv.as_deref(),
        &prefix,
        opts,
        &mut progress,
    )
    .map_err(|e| match e {
        certificates::CertificateError::Move { .. }
        | certificates::CertificateError::FromStore { .. } => Failure::input(anyhow!(e)),
        e => Failure::other(anyhow!(e)),
    })?;
    Ok(made
        .iter()
        .map(fanorona::certificate::Made::summary)
        .collect())
}

/// How a question's proof was checked, for `session status`: the kept tree at once (leaves
/// taken as given counted), then in full by the certificate.
pub(super) fn proof_note(goal: &GoalRecord) -> String {
    let given = |n: u64, one: &str, many: &str| (n > 0).then(|| counted(n, one, many));
    let taken: Vec<String> = [
        given(
            goal.rote_leaves,
            "leaf from the rote store",
            "leaves from the rote store",
        ),
        given(
            goal.second_level_leaves,
            "second-level leaf",
            "second-level leaves",
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    let kept = match goal.verified {
        Some(true) if taken.is_empty() => ", proof verified".to_string(),
        Some(true) => format!(", kept tree verified ({} taken as given)", taken.join(", ")),
        Some(false) => ", proof FAILED the check".to_string(),
        None => String::new(),
    };
    let certificate = match goal.certificate_verified {
        Some(true) => ", certificate verified",
        Some(false) => ", certificate FAILED the check",
        None => "",
    };
    format!("{kept}{certificate}")
}

/// Checks the kept certificate `path` of question `goal` of the session `status` describes:
/// it verifies (against the session's tables) and is the certificate of the session's root,
/// that question, and the claim the session recorded, not one of another question or
/// position put in its place.
fn check_kept(path: &Path, status: &Status, goal: fanorona::search::Goal) -> Result<(), String> {
    let report = fanorona::certificate::verify_file(
        path,
        status
            .db_dir
            .as_deref()
            .map(fanorona::certificate::Tables::Dir),
        |_| {},
        &mut |_| {},
        &mut |_, _| {},
    )
    .map_err(|e| e.to_string())?;
    let wins = format!("{} wins", goal.attacker.name());
    let proven = match status.value {
        Some(v) => v == fanorona::search::Value::Win(goal.attacker),
        None => status
            .goals
            .iter()
            .any(|g| g.attacker == goal.attacker && g.outcome == fanorona::search::Outcome::Proven),
    };
    let claim = if proven { "proven" } else { "disproven" };
    let root: Option<fanorona::Position> = status.root.parse().ok();
    let same_root = root.is_some_and(|r| report.position == r.to_string());
    if !same_root || report.goal != wins || report.claim != claim {
        return Err(format!(
            "it is the certificate of \"{}?\" {} at {}, not of this session's \"{wins}?\" {claim} at {}",
            report.goal, report.claim, report.position, status.root
        ));
    }
    Ok(())
}
