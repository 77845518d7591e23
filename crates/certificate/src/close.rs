//! Closing a partial certificate: each open leaf solved on its own (PN² with df-pn at the
//! second level, as a session searches), its certificate written beside the partial one, and
//! all of them stitched in where the leaves stood.
//!
//! Plain df-pn was tried first for the leaves: on the 5x9 start's "White wins?" it left four
//! of 53 undecided after 20 M to 1 B nodes each, which PN² decided in 30 to 591 M nodes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::stitch::{Leaf, StitchError, io_at};
use crate::{Cancel, Solved, Terms, WriteError, header_extra, make};
use fanorona_rules::position::Position;
use fanorona_search::pn::{self, PnTree};
use fanorona_search::{Algorithm, Goal, Init, LeafEval, Limits, Outcome, SecondLevel, cancelled};
use fanorona_tables::Database;

/// The search each open leaf gets.
#[derive(Clone, Copy, Debug)]
pub struct CloseOptions<'m> {
    /// Search nodes one leaf may take before it is left open.
    pub nodes: u64,
    /// Leaves solved at once, one thread each.
    pub threads: usize,
    /// PN²'s second-level bound.
    pub second_level: SecondLevel,
    /// How new leaves get their first numbers.
    pub init: Init,
    /// With `init` learned: these weights, not the built-in ones (a session's own).
    pub model: Option<&'m fanorona_search::learned::Model>,
}

/// An open leaf as a partial certificate's list names it, with the list's whole entry.
#[derive(Clone, Debug)]
pub struct OpenLeaf {
    pub node: u64,
    pub position: String,
    pub entry: Value,
}

/// The open leaves listed in `list` (one JSON object a line: `node`, `position`, ...).
pub fn read_open_list(list: &Path) -> Result<Vec<OpenLeaf>, StitchError> {
    let text = std::fs::read_to_string(list).map_err(io_at(list))?;
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let bad = |reason: String| StitchError::Bad {
                path: list.to_path_buf(),
                line: i as u64 + 1,
                reason,
            };
            let entry: Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
            let node = entry["node"]
                .as_u64()
                .ok_or_else(|| bad("no node number".into()))?;
            let position = entry["position"]
                .as_str()
                .ok_or_else(|| bad("no position".into()))?
                .to_string();
            Ok(OpenLeaf {
                node,
                position,
                entry,
            })
        })
        .collect()
}

/// Where open leaf `node`'s own certificate of `goal` goes in `dir`:
/// `DIR/node-K.GOAL-wins.cert.gz`.
pub fn leaf_path(dir: &Path, node: u64, goal_part: &str) -> PathBuf {
    dir.join(format!("node-{node}.{goal_part}.cert.gz"))
}

/// What solving the open leaves did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Solving {
    /// Leaves whose certificate was written and checked.
    pub closed: u64,
    /// Nodes the leaves' searches created.
    pub search_nodes: u64,
    /// Whether `cancel` stopped it before every leaf was tried.
    pub cancelled: bool,
}

/// Solves each of `leaves` on its own, `opts.threads` at once, and writes the certificate
/// of each decided as `proves` claims for `goal` to its `path` (checked; one that fails the
/// check is removed, so the leaf stays open). `report` sees a line per leaf and one a minute
/// while a hard leaf runs; `cancel` stops it between steps of 10 M nodes.
#[allow(clippy::too_many_arguments)]
pub fn solve_leaves(
    goal: Goal,
    proves: bool,
    leaves: &[&Leaf],
    db: Option<&Database>,
    db_dir: Option<&Path>,
    opts: &CloseOptions<'_>,
    cancel: Option<&Cancel>,
    report: &(dyn Fn(&str) + Sync),
) -> Solving {
    let next = AtomicU64::new(0);
    let closed = AtomicU64::new(0);
    let nodes = AtomicU64::new(0);
    // Leaves given up on (or never tried) because of a cancel.
    let skipped = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..opts.threads.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                    let Some(leaf) = leaves.get(i) else { break };
                    if cancelled(cancel) {
                        skipped.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    let (said, searched) =
                        solve_one(goal, proves, leaf, db, db_dir, opts, cancel, report);
                    nodes.fetch_add(searched, Ordering::Relaxed);
                    let says = match said {
                        Said::Closed(lines) => {
                            closed.fetch_add(1, Ordering::Relaxed);
                            format!("closed ({lines} nodes)")
                        }
                        Said::Cancelled => {
                            skipped.fetch_add(1, Ordering::Relaxed);
                            "cancelled".to_string()
                        }
                        Said::Open(why) => why,
                    };
                    report(&format!(
                        "leaf {} ({} of {}): {says}, {searched} search nodes",
                        leaf.node,
                        i + 1,
                        leaves.len()
                    ));
                }
            });
        }
    });
    Solving {
        closed: closed.load(Ordering::Relaxed),
        search_nodes: nodes.load(Ordering::Relaxed),
        cancelled: skipped.load(Ordering::Relaxed) > 0,
    }
}

/// What became of one leaf.
enum Said {
    /// Its certificate, of this many lines, is written and checked.
    Closed(u64),
    /// Still open, and why.
    Open(String),
    Cancelled,
}

/// One leaf of `solve_leaves`: what became of it, and the nodes its search (and the writing
/// of its certificate) created.
#[allow(clippy::too_many_arguments)]
fn solve_one(
    goal: Goal,
    proves: bool,
    leaf: &Leaf,
    db: Option<&Database>,
    db_dir: Option<&Path>,
    opts: &CloseOptions<'_>,
    cancel: Option<&Cancel>,
    report: &(dyn Fn(&str) + Sync),
) -> (Said, u64) {
    let Ok(pos) = leaf.position.parse::<Position>() else {
        return (
            Said::Open(format!("'{}' is not a position", leaf.position)),
            0,
        );
    };
    let leaf_eval = LeafEval::new(db).with_first_numbers(opts.init, opts.model);
    let mut tree = PnTree::new(pos, goal, leaf_eval, Vec::new());
    tree.second_level = opts.second_level;
    // In steps, so that a cancel is seen within one; a line a minute while it runs.
    const STEP: u64 = 10_000_000;
    let start = std::time::Instant::now();
    let mut last = start;
    let mut curve = Vec::new();
    while !tree.decided() && tree.stats.nodes < opts.nodes {
        if cancelled(cancel) {
            return (Said::Cancelled, tree.stats.nodes);
        }
        let limits = Limits {
            nodes: Some(opts.nodes.min(tree.stats.nodes.saturating_add(STEP))),
            ..Limits::none()
        };
        curve.extend(pn::run(&mut tree, Algorithm::Pn2DfPn, limits, |p| {
            if last.elapsed().as_secs() >= 60 {
                last = std::time::Instant::now();
                report(&format!(
                    "leaf {}: {} nodes, root pn {} dn {}, {:.0} s",
                    leaf.node,
                    p.nodes,
                    p.pn,
                    p.dn,
                    start.elapsed().as_secs_f64()
                ));
            }
        }));
    }
    let result = tree.result(curve);
    let searched = result.stats.nodes;
    let decided = match result.outcome {
        Outcome::Proven => true,
        Outcome::Disproven => false,
        _ => return (Said::Open("undecided".to_string()), searched),
    };
    if decided != proves {
        let why = "decided the other way on its own (its past matters)";
        return (Said::Open(why.to_string()), searched);
    }
    let prefix = leaf.path.with_file_name(format!("node-{}", leaf.node));
    let solved = Solved {
        root: pos,
        goal,
        proves,
        db,
        tree: Some(&tree),
        dfpn: None,
    };
    let extra = header_extra(json!({
        "algorithm": "pn2-dfpn", "nodes": searched,
        "note": format!("open leaf {} of a partial certificate", leaf.node),
    }));
    let terms = Terms {
        cancel,
        ..Terms::default()
    };
    let made = make(&prefix, solved, extra, db_dir, terms, &mut |_| {});
    let searched = searched + made.as_ref().map_or(0, |m| m.written.resolve_search_nodes);
    // Written without a leaf budget, so whole: it is either checked or fails the check.
    let said = match made {
        Ok(m) => match m.check {
            Ok(_) => Said::Closed(m.written.nodes),
            Err(e) => {
                // Not stitched in: the leaf stays open.
                let _ = std::fs::remove_file(&m.path);
                Said::Open(format!("certificate FAILED verification: {e}"))
            }
        },
        Err(WriteError::Cancelled) => Said::Cancelled,
        Err(e) => Said::Open(format!("no certificate: {e}")),
    };
    (said, searched)
}
