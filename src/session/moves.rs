//! Where a session's search stands below its root: each question's first-level tree, as last
//! checkpointed, summed up per move of the root (its numbers and the nodes under it). The
//! root's disproof number of "White wins?" at the 5x9 start, say, is the sum of its moves':
//! this tells which opening the disproof still waits for.

use serde::Serialize;

use crate::moves::legal_moves;
use crate::position::Position;
use crate::search::pn::Node;
use crate::session::{SessionError, Sessions};

/// One move of the root in one question's first-level tree.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveNumbers {
    /// The move in the paper's notation (the first of several reaching the same position).
    #[serde(rename = "move")]
    pub notation: String,
    pub pn: u64,
    pub dn: u64,
    /// Nodes of the first-level tree below the move, its own included.
    pub nodes: u64,
    /// Decided by the rote store (searched in another session or question).
    pub rote: bool,
}

/// One question's root and its moves.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuestionMoves {
    /// "white" or "black": whose win is asked.
    pub attacker: String,
    pub outcome: String,
    pub pn: u64,
    pub dn: u64,
    /// Nodes of the first-level tree.
    pub first_level: u64,
    pub moves: Vec<MoveNumbers>,
}

/// The root's moves of every question of session `id` that has a tree, as last checkpointed.
pub fn root_moves(sessions: &Sessions, id: u64) -> Result<Vec<QuestionMoves>, SessionError> {
    let rec = sessions.get(id)?;
    let root: Position = rec
        .root
        .parse()
        .map_err(|e| SessionError::Damaged(format!("session {id}'s root: {e}")))?;
    let mut out = Vec::new();
    for (g, goal) in rec.goals.iter().enumerate() {
        if goal.first_level == 0 {
            continue;
        }
        let nodes = sessions.load_tree(id, g as u8, root.board(), goal.first_level)?;
        out.push(QuestionMoves {
            attacker: goal.attacker.clone(),
            outcome: goal.outcome.clone(),
            pn: nodes[0].pn,
            dn: nodes[0].dn,
            first_level: nodes.len() as u64,
            moves: moves_of(&root, &nodes),
        });
    }
    Ok(out)
}

/// The root's children in `nodes` (a tree with its root first, every child after its
/// parent), each with its numbers and the size of its subtree.
fn moves_of(root: &Position, nodes: &[Node]) -> Vec<MoveNumbers> {
    let r = &nodes[0];
    if !r.expanded {
        return Vec::new();
    }
    // Children come after their parent, so one pass from the end sums every subtree.
    let mut size = vec![1u64; nodes.len()];
    for i in (1..nodes.len()).rev() {
        let parent = nodes[i].parent as usize;
        size[parent] += size[i];
    }
    let moves = legal_moves(root);
    (r.first as usize..(r.first + r.count) as usize)
        .map(|c| {
            let child = &nodes[c];
            let notation = moves
                .iter()
                .find(|m| m.apply(root) == child.pos)
                .map_or_else(|| "?".to_string(), |m| m.notation(root.board()));
            MoveNumbers {
                notation,
                pn: child.pn,
                dn: child.dn,
                nodes: size[c],
                rote: child.rote,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::pn::{Level, search};
    use crate::search::{Goal, INFINITE, LeafEval, Limits};

    #[test]
    fn the_moves_sum_to_the_root_and_cover_the_tree() {
        // 3x5 is a White win (the paper's Table 4): "White wins?" proven, "Black wins?"
        // disproven; the root's numbers are the min and the sum of its moves'.
        let root = Position::initial("3x5".parse().unwrap());
        for attacker in [crate::Color::White, crate::Color::Black] {
            let goal = Goal { attacker };
            let (tree, _) = search(
                &root,
                goal,
                LeafEval::rules_only(),
                Level::Pn,
                Limits::none(),
                |_| {},
            );
            let nodes = tree.nodes.clone();
            let moves = moves_of(&root, &nodes);
            assert_eq!(moves.len(), legal_moves(&root).len());
            assert!(moves.iter().all(|m| m.notation != "?"));
            let total: u64 = moves.iter().map(|m| m.nodes).sum();
            assert_eq!(total + 1, nodes.len() as u64);
            let white = attacker == crate::Color::White;
            assert_eq!(nodes[0].pn, if white { 0 } else { INFINITE });
            // White moves at the root: one proven move proves "White wins?", one disproven
            // move disproves "Black wins?".
            if white {
                assert_eq!(moves.iter().map(|m| m.pn).min(), Some(0));
            } else {
                assert_eq!(nodes[0].dn, 0);
                assert_eq!(moves.iter().map(|m| m.dn).min(), Some(0));
            }
        }
    }
}
