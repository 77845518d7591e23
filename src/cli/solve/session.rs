//! `fanorona solve` with PN or PN²: a session run in this process on the store under the
//! data directory, so an interrupted solve resumes where it stopped and every solved
//! position feeds the rote store. No daemon is needed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::anyhow;

use crate::cli::output::Failure;
use crate::cli::session::{init_tracing, progress_line, unfinished};
use crate::cli::solve::args::SolveArgs;
use crate::cli::solve::report::{Question, Report};
use fanorona::Position;
use fanorona::config::Config;
use fanorona::daemon::{self, DaemonError, DataDir, Service};
use fanorona::search::rote::RoteKey;
use fanorona::search::{Goal, Value};
use fanorona::session::settings::new_settings;
use fanorona::session::{self, SessionRecord, State, curve, runner};

/// Set by SIGINT/SIGTERM: checkpoint and stop.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Runs session `id` on this thread's scope until it is solved, fails or is interrupted
/// (Ctrl-C checkpoints), printing progress to stderr. Meanwhile the data directory's socket
/// answers other commands (list, status, curve, ...) as a daemon's would.
fn run_here(service: &Service, id: u64) -> Result<SessionRecord, session::SessionError> {
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    let done = daemon::Shutdown::new();
    let listener = daemon::bind(&service.dir)
        .inspect_err(|e| eprintln!("note: other commands cannot reach this solve: {e}"))
        .ok();
    std::thread::scope(|s| {
        if let Some(listener) = &listener {
            s.spawn(|| daemon::answer(service, listener, &done));
        }
        let h = s.spawn(|| {
            let worker = &service.workers.main;
            worker.hold(id);
            let r =
                runner::run_guarded(&service.sessions, id, &worker.control, &service.dir.logs());
            worker.release();
            r
        });
        let (mut last, mut shown) = (Instant::now(), 0);
        while !h.is_finished() {
            if INTERRUPTED.load(Ordering::SeqCst) {
                service.workers.main.control.request_exit();
            }
            std::thread::sleep(Duration::from_millis(20));
            if last.elapsed() >= Duration::from_secs(1) {
                let p = service
                    .workers
                    .main
                    .control
                    .progress
                    .lock()
                    .expect("progress")
                    .clone();
                if let Some(p) = p.filter(|p| p.iteration != shown) {
                    shown = p.iteration;
                    eprintln!("{}", progress_line(&p));
                }
                last = Instant::now();
            }
        }
        let r = h.join().expect("the solving thread does not panic");
        done.trigger();
        r
    })
}

/// Solves `pos` as a session. `Ok(None)`: the store is in use by another process, so the
/// caller solves in memory instead.
pub fn solve(pos: &Position, args: &SolveArgs, config: &Config) -> Result<Option<()>, Failure> {
    // Bad input is refused before anything is written.
    let settings = new_settings(config, pos, args.db.clone(), Some(args.algo))
        .map_err(|e| Failure::input(anyhow!(e)))?;
    let dir = DataDir::new(&config.data_dir);
    let _lock = match daemon::datadir::lock_patiently(&dir, Duration::from_secs(5)) {
        Ok(l) => l,
        Err(DaemonError::Locked { pid, .. }) => {
            eprintln!(
                "note: {} is in use by process {pid}; solving in memory (`fanorona session start` solves under the daemon)",
                dir.root.display()
            );
            return Ok(None);
        }
        Err(e) => return Err(crate::cli::session::daemon_failure(e)),
    };
    init_tracing(config);
    let sessions = daemon::open_sessions(&dir, config).map_err(Failure::other)?;
    let dispatcher = daemon::jobs::dispatcher(config, &dir).map_err(Failure::other)?;
    let service =
        Service::new(sessions, config.clone(), dir.clone(), false).dispatching(dispatcher);
    let (result, solved_before) = run_same_problem(&service, pos, &settings)?;
    let failed_store = service.sessions.store().poisoned().is_some()
        || matches!(
            result,
            Err(session::SessionError::DiskFull { .. } | session::SessionError::StorePoisoned(_))
        );
    if failed_store {
        service.close(true);
        let e = result
            .err()
            .map_or_else(|| "the store failed".to_string(), |e| e.to_string());
        return Err(Failure::other(anyhow!(
            "{e}; run the same command again, once the disk has room, to resume from the last checkpoint"
        )));
    }
    let rec = result.map_err(Failure::other)?;
    if rec.state == State::Failed {
        return Err(Failure::input(anyhow!(rec.error.unwrap_or_default())));
    }
    if rec.state != State::Solved && INTERRUPTED.load(Ordering::SeqCst) {
        // Ctrl-C is the user's choice, not a failure of the machine: 130, as `match` gives.
        return Err(crate::cli::output::interrupted(
            &format!(
                "interrupted: session {} checkpointed; run the same command again to resume it",
                rec.id
            ),
            args.json,
        ));
    }
    if rec.state != State::Solved {
        return Err(Failure::other(anyhow!(
            "session {} is {} without a value: `fanorona session status {0}` says why; run the same command again to resume it",
            rec.id,
            rec.state
        )));
    }
    let Some(value) = rec.value else {
        return Err(Failure::other(anyhow!(
            "session {} is solved but holds no value (a damaged record)",
            rec.id
        )));
    };
    let best = best_move(&service, pos, value)?;
    // The proofs that decide the value: both disproofs of a draw, the winner's proof of a
    // win. (With two threads the other question may have been halted, undecided.)
    let questions: Vec<Question> = rec
        .goals
        .iter()
        .map(|g| Question {
            attacker: g.attacker.name().to_string(),
            outcome: g.outcome.name().to_string(),
            nodes: g.nodes,
            iterations: g.iterations,
            first_level: Some(g.first_level),
            db_hits: g.db_hits,
            rote_hits: Some(g.rote_hits),
            repetitions: g.repetitions,
            seconds: g.seconds,
        })
        .collect();
    let deciding: Vec<_> = rec
        .goals
        .iter()
        .zip(&questions)
        .filter(|(_, q)| q.decides(Some(value.name())))
        .map(|(g, _)| g)
        .collect();
    let checked = !deciding.is_empty() && deciding.iter().all(|g| g.verified.is_some());
    let mut verified = checked && deciding.iter().all(|g| g.verified == Some(true));
    let (made, held) = certificates(&service, &rec, args, solved_before)?;
    verified &= held;
    let report = Report {
        position: *pos,
        value: Some(value.name().to_string()),
        undecided: "unknown".to_string(),
        best_move: best,
        questions,
        seconds: rec.totals().1,
        verified: checked.then_some(verified),
        unchecked: "proofs not checked (verify = false)",
        algorithm: args.algo.name().to_string(),
        database: rec
            .settings
            .db_dir
            .as_ref()
            .map(|d| d.display().to_string()),
        session: Some((rec.id, dir.root.display().to_string(), solved_before)),
        certificates: made,
        moves: None,
        census: None,
    };
    report.print(args.json)?;
    // The curve after the result: a failure here cannot hide the value.
    if let Some(path) = &args.curve {
        write_curve(&service, &rec, path)?;
    }
    if checked && !verified {
        return Err(Failure::other(anyhow!(
            "a proof failed the independent check"
        )));
    }
    Ok(Some(()))
}

/// Runs the session on the same problem as `settings` on `pos` (root, algorithm, tables,
/// second level, first numbers; the other settings may change between runs): answered at
/// once if it was solved, resumed (retried, if it failed), or started. Returns its record
/// and whether it was solved before.
fn run_same_problem(
    service: &Service,
    pos: &Position,
    settings: &session::Settings,
) -> Result<(Result<SessionRecord, session::SessionError>, bool), Failure> {
    let same_problem = |r: &SessionRecord| {
        let (a, b) = (&r.settings, settings);
        r.root == pos.to_string()
            && (a.algo, &a.db_dir, a.second_level, a.init, own_weights(a))
                == (b.algo, &b.db_dir, b.second_level, b.init, own_weights(b))
    };
    let list = service.sessions.list().map_err(Failure::other)?;
    let solved_before = list
        .iter()
        .rev()
        .find(|r| same_problem(r) && r.state == State::Solved)
        .cloned();
    let result = match &solved_before {
        Some(r) => Ok(r.clone()),
        None => {
            let existing = list
                .into_iter()
                .find(|r| same_problem(r) && (unfinished(r.state) || r.state == State::Failed));
            let rec = match existing {
                Some(r) => {
                    if r.state != State::Running {
                        service
                            .sessions
                            .set_state(r.id, State::Running)
                            .map_err(Failure::other)?;
                    }
                    eprintln!("resuming session {} from its last checkpoint", r.id);
                    r
                }
                None => service
                    .sessions
                    .create(pos, None, settings.clone())
                    .map_err(Failure::other)?,
            };
            run_here(service, rec.id)
        }
    };
    Ok((result, solved_before.is_some()))
}

/// The best move at the root: its rote entry for the goal that decided `value` for the
/// mover (none when the mover loses).
fn best_move(service: &Service, pos: &Position, value: Value) -> Result<Option<String>, Failure> {
    let mover = pos.side_to_move();
    let deciding = match value {
        Value::Win(winner) if winner == mover => Some(mover),
        Value::Draw => Some(mover.opponent()),
        Value::Win(_) => None,
    };
    Ok(match deciding {
        Some(attacker) => {
            let key = RoteKey::new(*pos, 0, Goal { attacker });
            service
                .sessions
                .rote(Some(pos.board()))
                .map_err(Failure::other)?
                .into_iter()
                .find(|(k, _)| *k == key)
                .and_then(|(_, e)| e.best_move)
                .map(|m| m.notation(pos.board()))
        }
        None => None,
    })
}

/// Writes session `rec`'s stored curve to `path` (`--curve`).
fn write_curve(
    service: &Service,
    rec: &SessionRecord,
    path: &std::path::Path,
) -> Result<(), Failure> {
    let rows: Vec<curve::Row> = service
        .sessions
        .curve(rec.id)
        .map_err(Failure::other)?
        .into_iter()
        .map(|(g, p)| {
            let goal = rec.goals.get(g as usize).map_or("?", |g| g.attacker.name());
            (goal.to_string(), p)
        })
        .collect();
    curve::write_csv(path, &rows).map_err(Failure::other)?;
    eprintln!("curve: {} points to {}", rows.len(), path.display());
    Ok(())
}

/// The certificates of every decided question, written (and checked) under the data
/// directory as the daemon does, and copied to `--certificate`'s prefix; and whether they
/// all hold.
fn certificates(
    service: &Service,
    rec: &SessionRecord,
    args: &SolveArgs,
    solved_before: bool,
) -> Result<(Vec<fanorona::certificate::Made>, bool), Failure> {
    // (A session solved before keeps its certificates under the data directory, checked
    // then; they are written again only when asked for.)
    let mut verified = true;
    let mut made = if solved_before && args.certificate.is_none() {
        verified &= rec
            .goals
            .iter()
            .all(|g| g.certificate_verified != Some(false));
        Vec::new()
    } else {
        // Decided by the rote store at the root: the deciding session's certificate holds
        // it; re-solved from nothing only when certificates are asked for here.
        match service.write_certificates(rec, args.certificate.is_some()) {
            Err(fanorona::session::certificates::CertificateError::FromStore { .. }) => Vec::new(),
            made => made.map_err(Failure::other)?,
        }
    };
    if let Some(prefix) = &args.certificate {
        for m in &mut made {
            m.path = crate::cli::certificate::copy_certificate(
                &m.path,
                m.open_list.as_deref(),
                prefix,
                m.goal,
            )?;
        }
    }
    let whole = made.iter().all(|m| m.whole());
    Ok((made, verified && whole))
}

/// The bytes of the weights a session's learned first numbers use, if its own: the same
/// weights from another path are the same problem.
fn own_weights(s: &session::Settings) -> Option<&str> {
    s.own_weights().map(|w| w.hex.as_str())
}
