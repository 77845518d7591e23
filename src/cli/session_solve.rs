//! `fanorona solve` with PN or PN²: a session run in this process on the store under the
//! data directory, so an interrupted solve resumes where it stopped and every solved
//! position feeds the rote store. No daemon is needed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use serde_json::json;

use crate::cli::output::Failure;
use crate::cli::session::{init_tracing, progress_line, unfinished};
use crate::cli::solve::{Algo, SolveArgs};
use crate::out;
use fanorona::Position;
use fanorona::config::Config;
use fanorona::daemon::{self, DaemonError, DataDir, Service};
use fanorona::search::Goal;
use fanorona::search::rote::RoteKey;
use fanorona::session::{self, State, curve, runner};

/// Set by SIGINT/SIGTERM: checkpoint and stop.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Solves `pos` as a session. `Ok(None)`: the store is in use by another process, so the
/// caller solves in memory instead.
pub fn solve(pos: &Position, args: &SolveArgs, config: &Config) -> Result<Option<()>, Failure> {
    let algo = match args.algo {
        Algo::Pn => session::Algo::Pn,
        Algo::Pn2DfPn => session::Algo::Pn2DfPn,
        _ => session::Algo::Pn2,
    };
    // Bad input is refused before anything is written.
    let settings = daemon::session_settings(config, pos, args.db.clone(), Some(algo))
        .map_err(|r| Failure::input(anyhow!(r.message)))?;
    let dir = DataDir::new(&config.data_dir);
    let _lock = match daemon::lock(&dir) {
        Ok(l) => l,
        Err(DaemonError::Locked { pid, .. }) => {
            eprintln!(
                "note: {} is in use by process {pid}; solving in memory (`fanorona session start` solves under the daemon)",
                dir.root.display()
            );
            return Ok(None);
        }
        Err(e) => return Err(Failure::other(e)),
    };
    init_tracing(config);
    let sessions = daemon::open_sessions(&dir, config).map_err(Failure::other)?;
    let service = Service::new(sessions, config.clone(), dir.clone(), false);
    // An unfinished session on the same root with the same settings is resumed.
    let existing = service
        .sessions
        .list()
        .map_err(Failure::other)?
        .into_iter()
        .find(|r| {
            // The same problem (root, algorithm, tables, second level); the other settings
            // (threads, checkpoint interval, checking) may change between runs.
            let (a, b) = (&r.settings, &settings);
            r.root == pos.to_string()
                && (a.algo, &a.db_dir, a.second_level) == (b.algo, &b.db_dir, b.second_level)
                && unfinished(r.state)
        });
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
            .create(pos, None, settings)
            .map_err(Failure::other)?,
    };
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    let result = std::thread::scope(|s| {
        let h = s.spawn(|| {
            runner::run_guarded(&service.sessions, rec.id, &service.control, &dir.logs())
        });
        let (mut last, mut shown) = (Instant::now(), 0);
        while !h.is_finished() {
            if INTERRUPTED.load(Ordering::SeqCst) {
                service.control.request_stop();
            }
            std::thread::sleep(Duration::from_millis(20));
            if last.elapsed() >= Duration::from_secs(1) {
                let p = service.control.progress.lock().expect("progress").clone();
                if let Some(p) = p.filter(|p| p.iteration != shown) {
                    shown = p.iteration;
                    eprintln!("{}", progress_line(&p));
                }
                last = Instant::now();
            }
        }
        h.join().expect("the solving thread does not panic")
    });
    let rec = result.map_err(Failure::other)?;
    if rec.state == State::Failed {
        return Err(Failure::input(anyhow!(rec.error.unwrap_or_default())));
    }
    if rec.state != State::Solved {
        return Err(Failure::other(anyhow!(
            "interrupted: session {} checkpointed; run the same command again to resume it",
            rec.id
        )));
    }
    // The best move: the root's rote entry for the goal that decided it for the mover.
    let mover = pos.side_to_move();
    let value = rec.value.clone().unwrap_or_default();
    let deciding = if value == mover.name() {
        Some(mover)
    } else if value == "draw" {
        Some(mover.opponent())
    } else {
        None
    };
    let best = match deciding {
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
    };
    if let Some(path) = &args.curve {
        let rows: Vec<curve::Row> = service
            .sessions
            .curve(rec.id)
            .map_err(Failure::other)?
            .into_iter()
            .map(|(g, p)| {
                let goal = rec
                    .goals
                    .get(g as usize)
                    .map_or("?", |g| g.attacker.as_str());
                (goal.to_string(), p)
            })
            .collect();
        curve::write_csv(path, &rows).map_err(Failure::other)?;
    }
    let (nodes, seconds, rote_hits) = rec.totals();
    // The proofs that decide the value: both disproofs of a draw, the winner's proof of a
    // win. (With two threads the other question may have been halted, undecided.)
    let deciding: Vec<_> = rec
        .goals
        .iter()
        .filter(|g| match value.as_str() {
            "draw" => g.outcome == "disproven",
            v => g.attacker == v && g.outcome == "proven",
        })
        .collect();
    let checked = !deciding.is_empty() && deciding.iter().all(|g| g.verified.is_some());
    let mut verified = checked && deciding.iter().all(|g| g.verified == Some(true));
    // Certificates of every decided question, written (and checked) under the data
    // directory as the daemon does, and copied to --certificate's prefix.
    let mut made = service.write_certificates(&rec).map_err(Failure::other)?;
    if let Some(prefix) = &args.certificate {
        for m in &mut made {
            let to = fanorona::certificate::path_for(prefix, m.goal);
            std::fs::copy(&m.path, &to).map_err(|e| {
                Failure::other(anyhow!(
                    "copying {} to {}: {e}",
                    m.path.display(),
                    to.display()
                ))
            })?;
            m.path = to;
        }
    }
    verified &= made.iter().all(|m| m.verified());
    if args.json {
        out!(
            "{}",
            json!({
                "position": pos.to_string(),
                "value": value,
                "best_move": best,
                "nodes": nodes,
                "seconds": seconds,
                "verified": verified,
                "algorithm": args.algo.name(),
                "database": rec.settings.db_dir,
                "session": rec.id,
                "rote_hits": rote_hits,
                "certificates": made.iter().map(|m| m.json()).collect::<Vec<_>>(),
                "searches": rec.goals.iter().map(|g| json!({
                    "goal": format!("{} wins", g.attacker),
                    "outcome": g.outcome,
                    "nodes": g.nodes,
                    "iterations": g.iterations,
                    "first_level": g.first_level,
                    "db_hits": g.db_hits,
                    "rote_hits": g.rote_hits,
                    "repetitions": g.repetitions,
                    "seconds": g.seconds,
                })).collect::<Vec<_>>(),
            })
        );
    } else {
        out!("{pos}");
        out!(
            "value: {}",
            match value.as_str() {
                "draw" => "draw".to_string(),
                v => format!("{v} wins"),
            }
        );
        if let Some(b) = &best {
            out!("best move: {b}");
        }
        for g in &rec.goals {
            out!(
                "  {} wins? {}: {} nodes, {} iterations, {} table hits, {} rote hits, {} repetitions, {:.2} s",
                g.attacker,
                g.outcome,
                g.nodes,
                g.iterations,
                g.db_hits,
                g.rote_hits,
                g.repetitions,
                g.seconds
            );
        }
        for m in &made {
            out!("{}", crate::cli::certificate::line(m));
        }
        out!(
            "{nodes} nodes in {seconds:.2} s (session {}, {}); {}",
            rec.id,
            dir.root.display(),
            match (checked, verified) {
                (false, _) => "proofs not checked (verify = false)",
                (_, true) => "proofs verified by the independent checker",
                (_, false) => "a proof FAILED the independent check",
            }
        );
    }
    if checked && !verified {
        return Err(Failure::other(anyhow!(
            "a proof failed the independent check"
        )));
    }
    Ok(Some(()))
}
