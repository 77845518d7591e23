//! What the session commands print in words: status, moves, progress lines.

use super::*;

use crate::out;
use fanorona::daemon::answers::{MovesAt, Shown, Status};
use fanorona::session::SecondLevel;
use fanorona::session::log::Progress;
use fanorona::session::moves::{MoveNumbers, Reached};

/// A shown state in words: what is happening now.
pub fn state_words(state: Shown) -> &'static str {
    match state {
        Shown::Queued => {
            "queued (the daemon solves one session at a time, and a second on its idle thread when the first searches one question only; this one starts when a thread is free)"
        }
        Shown::Waiting => "waiting for a daemon (start one with `fanorona daemon`)",
        Shown::Pausing => "pausing (writing its checkpoint)",
        Shown::Stopping => "stopping (writing its checkpoint)",
        s => s.name(),
    }
}

/// `session moves`: per question, the root's numbers, then one line per move.
pub(super) fn print_moves(v: &MovesAt) {
    if !v.line.is_empty() {
        out!("after the line: {}", v.position);
    }
    let row = |m: &MoveNumbers| {
        out!(
            "  {:<20} {:>12} {:>12} {:>12}{}",
            m.notation,
            infinity(m.pn),
            infinity(m.dn),
            m.nodes,
            if m.rote { "  (rote store)" } else { "" }
        );
    };
    let header = || out!("  {:<20} {:>12} {:>12} {:>12}", "move", "pn", "dn", "nodes");
    for q in &v.questions {
        out!(
            "{} wins? {}: root pn {} dn {}, first level {} nodes ({} below decided nodes or cut off)",
            q.attacker,
            q.outcome.name(),
            infinity(q.pn),
            infinity(q.dn),
            q.first_level,
            q.settled_below
        );
        match (q.reached, &q.at) {
            (Reached::Outside { after: 0 }, _) => {
                out!("  this tree is its root alone");
                continue;
            }
            (Reached::Outside { after }, _) => {
                out!("  the tree goes no further than move {after} of the line");
                continue;
            }
            (reached, Some(at)) if !v.line.is_empty() => out!(
                "  after the line ({}): pn {} dn {}, {} nodes{}",
                at.notation,
                infinity(at.pn),
                infinity(at.dn),
                at.nodes,
                if reached == Reached::Leaf {
                    ", a leaf"
                } else {
                    ""
                }
            ),
            _ => {}
        }
        if !q.moves.is_empty() {
            header();
            q.moves.iter().for_each(row);
        }
        if !q.heaviest.is_empty() {
            out!("  the heaviest line from here:");
            header();
            q.heaviest.iter().for_each(row);
        }
        if !q.pieces.is_empty() {
            out!("  the nodes from here by pieces on the board:");
            out!(
                "  {:>6} {:>12} {:>12} {:>12}",
                "pieces",
                "nodes",
                "live",
                "open leaves"
            );
            for p in &q.pieces {
                // (The count unpadded, as this line has always printed it.)
                out!(
                    "  {} {:>12} {:>12} {:>12}",
                    p.pieces,
                    p.nodes,
                    p.live,
                    p.open_leaves
                );
            }
        }
        if let Some(t) = &q.transpositions {
            out!(
                "  live nodes from here: {} over {} positions, {} with their pasts since the last capture",
                t.live,
                t.positions,
                t.keys
            );
            out!(
                "  open leaves: {} over {} keys; {} live nodes lie in subtrees of a key expanded before",
                t.open_leaves,
                t.open_leaf_keys,
                t.in_repeated_subtrees
            );
            out!(
                "  open leaves at a position proven elsewhere in the tree: {}; disproven elsewhere: {}",
                t.open_at_proven,
                t.open_at_disproven
            );
        }
    }
}

pub(super) fn print_status(v: &Status) {
    out!(
        "session {} '{}': {}{}",
        v.id,
        fanorona::session::name::shown(&v.name),
        state_words(v.state),
        v.value
            .map(|x| format!(", value {}", x.name()))
            .unwrap_or_default()
    );
    out!("  root {}", v.root);
    let tables = v
        .db_dir
        .as_ref()
        .map(|d| format!(", tables {}", d.display()))
        .unwrap_or_default();
    out!(
        "  {}, second level {}, first numbers from {}{}{tables}",
        v.algo,
        v.second_level,
        v.init.name(),
        v.weights_note()
    );
    let live = (!v.live.is_empty()).then_some(&v.live);
    out!(
        "  {} nodes in {:.1} s{}, {} checkpoints, rote hits {} ({:.4} per node)",
        v.nodes,
        v.seconds,
        if live.is_some() {
            " at the last checkpoint"
        } else {
            ""
        },
        v.checkpoints,
        v.rote_hits,
        v.rote_hit_rate
    );
    for goal in &v.goals {
        let open = !goal.outcome.decided();
        // A report older than the last checkpoint (reports come every few seconds, a
        // checkpoint may fall between them) says less than the checkpoint: not shown.
        let now = live
            .into_iter()
            .flatten()
            .find(|p| open && p.goal == goal.attacker.name() && p.iteration >= goal.iterations);
        out!(
            "  {} wins? {}: {} nodes, {} iterations, first level {}{}{}",
            goal.attacker,
            goal.outcome.name(),
            goal.nodes,
            goal.iterations,
            goal.first_level,
            if now.is_some() {
                " (at the last checkpoint)"
            } else {
                ""
            },
            proof_note(goal)
        );
        if let Some(p) = now {
            // A bound that follows the tree: what an expansion may cost now.
            let budget = match v.second_level {
                b @ (SecondLevel::TreeSize | SecondLevel::Share { .. }) => {
                    format!(", second level now {} nodes", b.budget(p.first_level))
                }
                SecondLevel::Fixed(_) => String::new(),
            };
            out!(
                "    now: iteration {}, {} nodes, first level {}, root pn {} dpn {}, {} nodes/s{budget}",
                p.iteration,
                p.nodes,
                p.first_level,
                infinity(p.root_pn),
                infinity(p.root_dpn),
                rate(p.nodes_per_second)
            );
        }
    }
    if let Some(p) = &v.progress {
        out!(
            "  memory {} MB, store {} MB",
            p.memory_bytes >> 20,
            p.store_bytes >> 20
        );
    }
    for j in &v.jobs {
        jobs_lines(j);
    }
    if let Some(b) = &v.backups {
        backups_line(b);
    }
    if let Some(f) = &v.checkpoint_failure {
        out!("  {}", f.describe());
    }
    if let Some(e) = &v.error {
        out!("  error: {e}");
        if v.state == Shown::Failed {
            out!(
                "  (mend the cause, then `fanorona session resume {}` retries from the last checkpoint)",
                v.id
            );
        }
    }
}

/// The store's backups the daemon keeps: how many, the newest's age, their disk, a failure.
fn backups_line(b: &fanorona::daemon::backup::BackupsView) {
    let Some(every) = b.every_seconds else {
        out!("  backups: off (backup_every = \"off\")");
        return;
    };
    let newest = b
        .newest
        .map_or("none yet".to_string(), fanorona::daemon::backup::age);
    out!(
        "  backups: {} in {} ({} MB), newest {newest}, one every {} min",
        b.count,
        b.dir.display(),
        b.bytes >> 20,
        every / 60
    );
    if let Some(p) = &b.problem {
        out!("    the last backup failed: {p}");
    }
}

/// A question's jobs on the cluster: where they go, how many, and each worker.
fn jobs_lines(j: &fanorona::search::jobs::JobsView) {
    out!(
        "  {} wins? jobs on {}{}: {} in flight, {} sent, {} answered, {} redelivered, {} sent again, {} stale, {} garbled",
        j.goal,
        j.place,
        if j.connected { "" } else { " (not reached)" },
        j.in_flight,
        j.sent,
        j.answered,
        j.redelivered,
        j.resent,
        j.stale,
        j.garbled
    );
    if let Some(p) = &j.problem {
        out!("    {p}");
    }
    let now = fanorona::session::log::unix_now() as u64;
    for w in &j.workers {
        out!(
            "    worker {} on {} ({} threads): {} jobs, {} nodes/s, last heard {} s ago",
            w.name,
            w.host,
            w.threads,
            w.jobs,
            rate(w.nodes_per_second()),
            now.saturating_sub(w.last_heard)
        );
    }
}

/// A proof or disproof number: `inf` for infinity.
pub fn infinity(n: u64) -> String {
    if n >= fanorona::search::INFINITE {
        "inf".to_string()
    } else {
        n.to_string()
    }
}

/// A rate in whole units a second.
pub fn rate(per_second: f64) -> String {
    format!("{per_second:.0}")
}

/// One progress-log line, readable.
pub fn progress_line(p: &Progress) -> String {
    let pn = infinity;
    let mut s = format!(
        "{:>10} {} wins? it {} nodes {} ({}/s) pn {} dpn {} first {} rote {} mem {}M store {}M",
        p.event,
        p.goal,
        p.iteration,
        p.nodes,
        rate(p.nodes_per_second),
        pn(p.root_pn),
        pn(p.root_dpn),
        p.first_level,
        p.rote_hits,
        p.memory_bytes >> 20,
        p.store_bytes >> 20
    );
    if let Some(m) = &p.message {
        s.push_str(&format!(" | {m}"));
    }
    s
}
