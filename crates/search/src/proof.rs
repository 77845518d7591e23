//! Solution trees and their independent check.
//!
//! A proof that the attacker wins holds one move at each node where the attacker is to move
//! and every move where the defender is, down to leaves where the game is over or the tables
//! decide; a disproof is the same with the roles exchanged, and may also end in a repetition
//! (a draw on its path). `check` re-verifies such a tree with nothing but the rules and the
//! table probe: it shares no code with the solvers.

use std::collections::HashSet;

use crate::Goal;
use fanorona_rules::movegen::{for_each_child, is_lost};
use fanorona_rules::position::{Color, Position};
use fanorona_tables::{Database, Wdl};

/// A node of a solution tree.
#[derive(Clone, Debug)]
pub struct ProofNode {
    pub pos: Position,
    /// Indices of the children in `SolutionTree::nodes`; empty at a leaf.
    pub children: Vec<usize>,
    /// A leaf taken from the rote store (solved by an earlier search) instead of re-proved:
    /// the check accepts it as given and counts it.
    pub from_rote: bool,
    /// A leaf decided by a PN² second-level search whose subtree was not kept, taken as
    /// given instead of re-solved (`extract_kept`; the certificate re-solves it).
    pub from_second_level: bool,
}

/// A proof (`proves == true`: the attacker wins) or a disproof, rooted at node 0.
#[derive(Clone, Debug)]
pub struct SolutionTree {
    pub goal: Goal,
    pub proves: bool,
    pub nodes: Vec<ProofNode>,
}

impl SolutionTree {
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Leaves taken from the rote store rather than proved here.
    pub fn rote_leaves(&self) -> usize {
        self.nodes.iter().filter(|n| n.from_rote).count()
    }

    /// Leaves whose second-level subtree was taken as given.
    pub fn second_level_leaves(&self) -> usize {
        self.nodes.iter().filter(|n| n.from_second_level).count()
    }
}

/// Why a solution tree does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckError {
    pub position: String,
    pub reason: String,
}

/// Re-verifies `tree` from the rules and the tables alone: every leaf is decided as claimed,
/// every single move is legal, every "all moves" node lists every distinct successor.
pub fn check(tree: &SolutionTree, db: Option<&Database>) -> Result<(), CheckError> {
    let mut path = Vec::new();
    check_node(tree, 0, db, &mut path)
}

fn fail(pos: &Position, reason: &str) -> CheckError {
    CheckError {
        position: pos.to_string(),
        reason: reason.to_string(),
    }
}

fn check_node(
    tree: &SolutionTree,
    n: usize,
    db: Option<&Database>,
    path: &mut Vec<Position>,
) -> Result<(), CheckError> {
    let node = &tree.nodes[n];
    let pos = node.pos;
    let attacker: Color = tree.goal.attacker;
    let mover = pos.side_to_move();
    // A repetition is a draw: it disproves, and cannot prove.
    if path.contains(&pos) {
        return if tree.proves {
            Err(fail(&pos, "a repetition (a draw) inside a proof"))
        } else if node.children.is_empty() {
            Ok(())
        } else {
            Err(fail(&pos, "a repetition is a leaf"))
        };
    }
    if node.from_rote || node.from_second_level {
        return if node.children.is_empty() {
            Ok(())
        } else {
            Err(fail(&pos, "a leaf taken as given, with children"))
        };
    }
    if node.children.is_empty() {
        // A leaf: the game is over, or the tables say so.
        let attacker_wins = if is_lost(&pos) {
            mover != attacker
        } else {
            match db.and_then(|d| d.probe(&pos)) {
                Some(Wdl::Win) => mover == attacker,
                Some(Wdl::Loss) => mover != attacker,
                Some(Wdl::Draw) => false,
                None => {
                    return Err(fail(
                        &pos,
                        "a leaf that neither the rules nor the tables decide",
                    ));
                }
            }
        };
        return if attacker_wins == tree.proves {
            Ok(())
        } else {
            Err(fail(&pos, "a leaf with the wrong value"))
        };
    }
    let mut successors = HashSet::new();
    for_each_child(&pos, |c| {
        successors.insert(c);
    });
    let listed: HashSet<Position> = node.children.iter().map(|&c| tree.nodes[c].pos).collect();
    let one = (mover == attacker) == tree.proves;
    if one {
        if node.children.len() != 1 || !successors.contains(&tree.nodes[node.children[0]].pos) {
            return Err(fail(&pos, "expected one legal move"));
        }
    } else if listed != successors || listed.len() != node.children.len() {
        return Err(fail(&pos, "expected every move, each once"));
    }
    path.push(pos);
    for &c in &node.children {
        check_node(tree, c, db, path)?;
    }
    path.pop();
    Ok(())
}
