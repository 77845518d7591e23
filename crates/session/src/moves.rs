//! Where a session's search stands below its root: each question's first-level tree, as last
//! checkpointed, summed up per move (its numbers and the nodes under it) at the root or at
//! the end of a line of moves from it, and the line the nodes go down. The root's disproof
//! number of "White wins?" at the 5x9 start, say, is the sum of its moves': this tells which
//! opening the disproof still waits for; the heaviest line tells which position below it the
//! search is stuck on.

use serde::{Deserialize, Serialize};

use crate::{SessionError, Sessions};
use fanorona_rules::moves::legal_moves;
use fanorona_rules::position::Position;
use fanorona_search::pn::Node;

/// One move in one question's first-level tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

/// Where the asked line of moves ends in one question's tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reached {
    /// An expanded node: its moves follow.
    Node,
    /// A leaf of the first-level tree (decided, or not searched below yet).
    Leaf,
    /// The line leaves the tree after this many of its moves (the search never went there).
    Outside { after: usize },
}

/// One question's tree at the root or at the end of a line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionMoves {
    /// Whose win is asked.
    pub attacker: fanorona_rules::Color,
    pub outcome: fanorona_search::Outcome,
    pub pn: u64,
    pub dn: u64,
    /// Nodes of the first-level tree.
    pub first_level: u64,
    /// Of those, the nodes no search visits again: below a decided node, or cut off from the
    /// root (a node the rote store settled keeps its old children).
    pub settled_below: u64,
    pub reached: Reached,
    /// The node at the end of the line (the root for an empty line): numbers and subtree size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<MoveNumbers>,
    pub moves: Vec<MoveNumbers>,
    /// With `heaviest`: from the node reached, the child holding the most nodes, then its
    /// heaviest child, down to a leaf.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heaviest: Vec<MoveNumbers>,
    /// With `pieces`: the nodes below the node reached (its own included) by the pieces on
    /// the board, fewest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pieces: Vec<PieceCount>,
    /// With `transpositions`: how often the live nodes below the node reached stand for the
    /// same search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transpositions: Option<Transpositions>,
}

/// The live nodes below a node (those a search may still visit: not below a decided node),
/// and how many distinct searches they stand for. Two nodes with the same position and the
/// same positions since the last capture (the node's `since`) have the same value, however
/// they were reached: the first level is a tree, so it searches them apart.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transpositions {
    /// Live nodes, the node reached included.
    pub live: u64,
    /// Distinct positions among them.
    pub positions: u64,
    /// Distinct positions with their sets since the last capture.
    pub keys: u64,
    /// Open leaves among the live nodes (where the next searches start), and their distinct
    /// keys.
    pub open_leaves: u64,
    pub open_leaf_keys: u64,
    /// Live nodes in the subtrees of expanded nodes whose key an expanded live node before
    /// them (in the tree's order) already has: work a shared node would not have repeated.
    pub in_repeated_subtrees: u64,
    /// Open leaves whose position is proven (disproven) at a node of the whole tree, under
    /// another past: what a table sharing values across pasts could decide at best (a proof
    /// holds under a smaller past, a disproof under a larger one).
    pub open_at_proven: u64,
    pub open_at_disproven: u64,
}

/// A tree's nodes with this many pieces on the board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PieceCount {
    pub pieces: u32,
    pub nodes: u64,
    /// Nodes a search may still visit (not below a decided node).
    pub live: u64,
    /// Live leaves not decided yet: where the next second-level searches start.
    pub open_leaves: u64,
}

/// What `moves_below` adds to the moves at the node.
#[derive(Clone, Copy, Debug, Default)]
pub struct Extras {
    /// The heaviest line from the node.
    pub heaviest: bool,
    /// The nodes below it by pieces on the board.
    pub pieces: bool,
    /// How many distinct searches the live nodes below it stand for.
    pub transpositions: bool,
}

/// The position at the end of a line and each question's tree there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Below {
    /// The position after the line (the session's root for an empty one).
    pub position: Position,
    pub questions: Vec<QuestionMoves>,
}

/// The moves at the end of `line` (moves in notation, played from the session's root) in
/// every question's tree that the session has, as last checkpointed, with the `extras`
/// asked for. An illegal move is refused.
pub fn moves_below(
    sessions: &Sessions,
    id: u64,
    line: &[String],
    extras: Extras,
) -> Result<Below, SessionError> {
    let rec = sessions.get(id)?;
    let root: Position = rec
        .root
        .parse()
        .map_err(|e| SessionError::Damaged(format!("session {id}'s root: {e}")))?;
    let positions = play_line(&root, line)?;
    let mut out = Vec::new();
    for (g, goal) in rec.goals.iter().enumerate() {
        if goal.first_level == 0 {
            continue;
        }
        // Under the record lock: a checkpoint or fold of a running session cannot mix in.
        let nodes = sessions.load_tree_now(id, g as u8, root.board())?;
        let size = subtree_sizes(&nodes);
        let (index, reached) = follow(&nodes, &positions);
        let repeats = (extras.transpositions && !matches!(reached, Reached::Outside { .. }))
            .then(|| transpositions(&nodes, index));
        let (at, moves, down, pieces) = if let Reached::Outside { .. } = reached {
            (None, Vec::new(), Vec::new(), Vec::new())
        } else {
            let name = line.last().cloned().unwrap_or_else(|| "(root)".to_string());
            let down = if extras.heaviest {
                heaviest_line(&nodes, &size, index)
            } else {
                Vec::new()
            };
            let pieces = if extras.pieces {
                by_pieces(&nodes, index)
            } else {
                Vec::new()
            };
            (
                Some(numbers(&nodes[index], size[index], name)),
                children(&nodes, &size, index),
                down,
                pieces,
            )
        };
        out.push(QuestionMoves {
            attacker: goal.attacker,
            outcome: goal.outcome,
            pn: nodes[0].pn,
            dn: nodes[0].dn,
            first_level: nodes.len() as u64,
            settled_below: settled_below(&nodes),
            reached,
            at,
            moves,
            heaviest: down,
            pieces,
            transpositions: repeats,
        });
    }
    Ok(Below {
        position: positions[positions.len() - 1],
        questions: out,
    })
}

/// The positions of `line` played from `root`, the root first.
fn play_line(root: &Position, line: &[String]) -> Result<Vec<Position>, SessionError> {
    let played = fanorona_certificate::explore::play_line(root, line);
    match played.error {
        None => Ok(played.positions),
        Some(e) => Err(SessionError::Line {
            index: e.index,
            text: e.text,
            position: played
                .positions
                .last()
                .expect("the root at least")
                .to_string(),
            reason: e.reason,
        }),
    }
}

/// The node reached by following `positions` (the root's first) down the tree, and how far
/// it got.
fn follow(nodes: &[Node], positions: &[Position]) -> (usize, Reached) {
    let mut index = 0;
    for (k, pos) in positions.iter().enumerate().skip(1) {
        let n = &nodes[index];
        let child = (n.first as usize..(n.first + n.count) as usize)
            .find(|&c| n.expanded && nodes[c].pos == *pos);
        match child {
            Some(c) => index = c,
            None => return (index, Reached::Outside { after: k - 1 }),
        }
    }
    let reached = if nodes[index].expanded {
        Reached::Node
    } else {
        Reached::Leaf
    };
    (index, reached)
}

/// The nodes below a decided node or cut off from the root, in a tree whose children come
/// after their parent.
fn settled_below(nodes: &[Node]) -> u64 {
    let live = live_below(nodes, 0);
    (nodes.len() - live.iter().filter(|&&l| l).count()) as u64
}

/// For each node from `index` on (in a tree whose children come after their parent),
/// whether a search may still visit it: `index` itself unless a decided node stands above
/// it, and the children of every live expanded node that is not decided.
fn live_below(nodes: &[Node], index: usize) -> Vec<bool> {
    let mut live = vec![false; nodes.len() - index];
    live[0] = !below_decided(nodes, index);
    for (k, n) in nodes[index..].iter().enumerate() {
        if live[k] && n.expanded && !(n.proven() || n.disproven()) {
            live[n.first as usize - index..(n.first + n.count) as usize - index].fill(true);
        }
    }
    live
}

/// The size of every node's subtree, its own node included, in a tree whose children come
/// after their parent (so one pass from the end sums them).
fn subtree_sizes(nodes: &[Node]) -> Vec<u64> {
    let mut size = vec![1u64; nodes.len()];
    for i in (1..nodes.len()).rev() {
        let parent = nodes[i].parent as usize;
        size[parent] += size[i];
    }
    size
}

fn numbers(node: &Node, nodes: u64, notation: String) -> MoveNumbers {
    MoveNumbers {
        notation,
        pn: node.pn,
        dn: node.dn,
        nodes,
        rote: node.rote,
    }
}

/// Node `index`'s children, each with its numbers and the size of its subtree.
fn children(nodes: &[Node], size: &[u64], index: usize) -> Vec<MoveNumbers> {
    let n = &nodes[index];
    if !n.expanded {
        return Vec::new();
    }
    let moves = legal_moves(&n.pos);
    (n.first as usize..(n.first + n.count) as usize)
        .map(|c| {
            let notation = moves
                .iter()
                .find(|m| m.apply(&n.pos) == nodes[c].pos)
                .map_or_else(|| "?".to_string(), |m| m.notation(n.pos.board()));
            numbers(&nodes[c], size[c], notation)
        })
        .collect()
}

/// The nodes of `index`'s subtree by pieces on the board, with the live ones (a search may
/// still visit them) and the open leaves among those.
fn by_pieces(nodes: &[Node], index: usize) -> Vec<PieceCount> {
    let live = live_below(nodes, index);
    let mut count = [(0u64, 0u64, 0u64); fanorona_search::census::MAX_PIECES];
    let mut stack = vec![index];
    while let Some(i) = stack.pop() {
        let n = &nodes[i];
        let c = &mut count[(n.pos.piece_count() as usize).min(count.len() - 1)];
        c.0 += 1;
        if live[i - index] {
            c.1 += 1;
            c.2 += u64::from(!(n.expanded || n.proven() || n.disproven()));
        }
        if n.expanded {
            stack.extend(n.first as usize..(n.first + n.count) as usize);
        }
    }
    (0..count.len())
        .filter(|&p| count[p].0 > 0)
        .map(|p| PieceCount {
            pieces: p as u32,
            nodes: count[p].0,
            live: count[p].1,
            open_leaves: count[p].2,
        })
        .collect()
}

/// Whether a decided node stands above `index` (a line followed past it): nothing below
/// one is live.
fn below_decided(nodes: &[Node], index: usize) -> bool {
    let mut up = nodes[index].parent;
    while up != u32::MAX {
        let a = &nodes[up as usize];
        if a.proven() || a.disproven() {
            return true;
        }
        up = a.parent;
    }
    false
}

/// The live nodes of `index`'s subtree and the distinct searches they stand for, in a tree
/// whose children come after their parent.
fn transpositions(nodes: &[Node], index: usize) -> Transpositions {
    use std::collections::HashSet;
    use std::hash::{BuildHasher, RandomState};
    let hasher = RandomState::new();
    let key = |n: &Node| hasher.hash_one((n.pos, n.since));
    let mut t = Transpositions::default();
    let live = live_below(nodes, index);
    let (mut proven, mut disproven) = (HashSet::new(), HashSet::new());
    for n in nodes.iter().filter(|n| !n.repetition) {
        if n.proven() {
            proven.insert(hasher.hash_one(n.pos));
        } else if n.disproven() {
            disproven.insert(hasher.hash_one(n.pos));
        }
    }
    // Per node from `index` on: inside the subtree of a key expanded before.
    let mut repeated = vec![false; nodes.len() - index];
    let (mut positions, mut keys, mut leaf_keys, mut expanded_keys) = (
        HashSet::new(),
        HashSet::new(),
        HashSet::new(),
        HashSet::new(),
    );
    for (k, n) in nodes[index..].iter().enumerate() {
        if !live[k] {
            continue;
        }
        t.live += 1;
        positions.insert(hasher.hash_one(n.pos));
        keys.insert(key(n));
        let decided = n.proven() || n.disproven();
        if n.expanded && !decided {
            if !expanded_keys.insert(key(n)) {
                repeated[k] = true;
            }
            if repeated[k] {
                repeated[n.first as usize - index..(n.first + n.count) as usize - index].fill(true);
            }
        } else if !n.expanded && !decided {
            t.open_leaves += 1;
            leaf_keys.insert(key(n));
            let at = hasher.hash_one(n.pos);
            t.open_at_proven += u64::from(proven.contains(&at));
            t.open_at_disproven += u64::from(disproven.contains(&at));
        }
        t.in_repeated_subtrees += u64::from(repeated[k]);
    }
    t.positions = positions.len() as u64;
    t.keys = keys.len() as u64;
    t.open_leaf_keys = leaf_keys.len() as u64;
    t
}

/// From node `index`, the child with the most nodes below it, then its own, down to a leaf.
fn heaviest_line(nodes: &[Node], size: &[u64], mut index: usize) -> Vec<MoveNumbers> {
    let mut line = Vec::new();
    while nodes[index].expanded && nodes[index].count > 0 {
        let kids = children(nodes, size, index);
        let first = nodes[index].first as usize;
        let (k, best) = kids
            .into_iter()
            .enumerate()
            .max_by_key(|(_, m)| m.nodes)
            .expect("an expanded node with children");
        line.push(best);
        index = first + k;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use fanorona_search::Algorithm;
    use fanorona_search::pn::search;
    use fanorona_search::{Goal, INFINITE, LeafEval, Limits};

    /// The whole PN tree of `attacker`'s question from `root`, by the rules alone.
    fn pn_tree(root: &Position, attacker: fanorona_rules::Color) -> Vec<Node> {
        let goal = Goal { attacker };
        let (tree, _) = search(
            root,
            goal,
            LeafEval::rules_only(),
            Algorithm::Pn,
            Limits::none(),
            |_| {},
        );
        tree.nodes
    }

    /// "White wins?" on 3x9, stopped after 20,000 nodes: a tree with open and settled parts.
    fn stopped_3x9() -> Vec<Node> {
        let (tree, _) = search(
            &Position::initial("3x9".parse().unwrap()),
            Goal {
                attacker: fanorona_rules::Color::White,
            },
            LeafEval::rules_only(),
            Algorithm::Pn,
            Limits {
                nodes: Some(20_000),
                ..Limits::none()
            },
            |_| {},
        );
        tree.nodes
    }

    #[test]
    fn settled_nodes_are_those_no_search_reaches() {
        // Solved: everything below the root is settled.
        let root = Position::initial("3x5".parse().unwrap());
        let nodes = pn_tree(&root, fanorona_rules::Color::White);
        assert_eq!(settled_below(&nodes), nodes.len() as u64 - 1);
        // Stopped early: the nodes not reached from the root through undecided expanded
        // nodes, counted by a walk down the tree.
        let nodes = stopped_3x9();
        fn live(nodes: &[Node], i: usize) -> u64 {
            let n = &nodes[i];
            if !n.expanded || n.proven() || n.disproven() {
                return 1;
            }
            1 + (n.first..n.first + n.count)
                .map(|c| live(nodes, c as usize))
                .sum::<u64>()
        }
        let settled = nodes.len() as u64 - live(&nodes, 0);
        assert!(settled > 0 && settled < nodes.len() as u64 / 2, "{settled}");
        assert_eq!(settled_below(&nodes), settled);
    }

    #[test]
    fn the_moves_sum_to_the_root_and_cover_the_tree() {
        // 3x5 is a White win (the paper's Table 4): "White wins?" proven, "Black wins?"
        // disproven; the root's numbers are the min and the sum of its moves'.
        let root = Position::initial("3x5".parse().unwrap());
        for attacker in [fanorona_rules::Color::White, fanorona_rules::Color::Black] {
            let nodes = pn_tree(&root, attacker);
            let moves = children(&nodes, &subtree_sizes(&nodes), 0);
            assert_eq!(moves.len(), legal_moves(&root).len());
            assert!(moves.iter().all(|m| m.notation != "?"));
            let total: u64 = moves.iter().map(|m| m.nodes).sum();
            assert_eq!(total + 1, nodes.len() as u64);
            let white = attacker == fanorona_rules::Color::White;
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

    #[test]
    fn transpositions_count_the_live_nodes_standing_for_one_search() {
        // 3x9 stopped early: counted against a walk that keys each live node by hand.
        let nodes = stopped_3x9();
        let mut live = Vec::new();
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            live.push(i);
            let n = &nodes[i];
            if n.expanded && !(n.proven() || n.disproven()) {
                stack.extend(n.first as usize..(n.first + n.count) as usize);
            }
        }
        let t = transpositions(&nodes, 0);
        assert_eq!(t.live, live.len() as u64);
        assert_eq!(t.live + settled_below(&nodes), nodes.len() as u64);
        let distinct = |f: &dyn Fn(&Node) -> bool| {
            let mut keys: Vec<_> = live
                .iter()
                .map(|&i| &nodes[i])
                .filter(|n| f(n))
                .map(|n| (n.pos.to_string(), n.since))
                .collect();
            let all = keys.len() as u64;
            keys.sort();
            keys.dedup();
            (all, keys.len() as u64)
        };
        assert_eq!(distinct(&|_| true).1, t.keys);
        let mut positions: Vec<String> = live.iter().map(|&i| nodes[i].pos.to_string()).collect();
        positions.sort();
        positions.dedup();
        assert_eq!(positions.len() as u64, t.positions);
        let open = |n: &Node| !(n.expanded || n.proven() || n.disproven());
        assert_eq!(distinct(&open), (t.open_leaves, t.open_leaf_keys));
        let at = |f: &dyn Fn(&Node) -> bool| {
            let decided: Vec<_> = nodes.iter().filter(|n| !n.repetition && f(n)).collect();
            live.iter()
                .filter(|&&i| open(&nodes[i]) && decided.iter().any(|d| d.pos == nodes[i].pos))
                .count() as u64
        };
        assert_eq!(at(&|n| n.proven()), t.open_at_proven);
        assert_eq!(at(&|n| n.disproven()), t.open_at_disproven);
        assert!(t.open_at_proven > 0, "{t:?}");
        // 3x9's opening moves transpose: the same position is searched twice.
        assert!(t.keys < t.live, "{t:?}");
        assert!(t.positions <= t.keys);
        assert!(
            t.in_repeated_subtrees > 0 && t.in_repeated_subtrees < t.live,
            "{t:?}"
        );
        // Below a leaf: the leaf alone.
        let leaf = live.iter().copied().find(|&i| open(&nodes[i])).unwrap();
        let t = transpositions(&nodes, leaf);
        assert_eq!(
            (t.live, t.keys, t.open_leaves, t.in_repeated_subtrees),
            (1, 1, 1, 0)
        );
        // Below a decided node: nothing is live.
        let decided = (1..nodes.len())
            .find(|&i| nodes[i].expanded && (nodes[i].proven() || nodes[i].disproven()))
            .unwrap();
        let below = nodes[decided].first as usize;
        assert_eq!(transpositions(&nodes, below), Transpositions::default());
    }

    #[test]
    fn by_pieces_counts_as_live_only_what_a_search_may_still_visit() {
        // 3x9 stopped early, against a walk from the root that stops at decided nodes.
        let nodes = stopped_3x9();
        let pieces = by_pieces(&nodes, 0);
        let (mut live, mut open, mut stack) = (0u64, 0u64, vec![0usize]);
        while let Some(i) = stack.pop() {
            let n = &nodes[i];
            live += 1;
            if n.proven() || n.disproven() {
                continue;
            }
            if n.expanded {
                stack.extend(n.first as usize..(n.first + n.count) as usize);
            } else {
                open += 1;
            }
        }
        assert_eq!(pieces.iter().map(|p| p.live).sum::<u64>(), live);
        assert_eq!(pieces.iter().map(|p| p.open_leaves).sum::<u64>(), open);
        assert!(live < nodes.len() as u64 && open > 0, "{live} {open}");
        assert_eq!(
            pieces.iter().map(|p| p.nodes).sum::<u64>(),
            nodes.len() as u64
        );
    }

    #[test]
    fn a_line_is_followed_down_the_tree_and_refused_when_illegal() {
        let root = Position::initial("3x5".parse().unwrap());
        let nodes = pn_tree(&root, fanorona_rules::Color::Black);
        let size = subtree_sizes(&nodes);
        // The heaviest line goes down to a leaf, each step holding fewer nodes, the first
        // step the root's heaviest move.
        let line = heaviest_line(&nodes, &size, 0);
        assert!(line.len() >= 2, "{line:?}");
        assert!(line.windows(2).all(|w| w[0].nodes > w[1].nodes));
        let top = children(&nodes, &size, 0);
        assert_eq!(line[0].nodes, top.iter().map(|m| m.nodes).max().unwrap());
        // Played from the root, the line's notation reaches that leaf and every node on it.
        let text: Vec<String> = line.iter().map(|m| m.notation.clone()).collect();
        let positions = play_line(&root, &text).unwrap();
        let (index, reached) = follow(&nodes, &positions);
        assert_eq!(reached, Reached::Leaf);
        assert_eq!((nodes[index].pn, nodes[index].dn), {
            let last = line.last().unwrap();
            (last.pn, last.dn)
        });
        let (index, reached) = follow(&nodes, &positions[..2]);
        assert_eq!(reached, Reached::Node);
        assert_eq!(size[index], line[0].nodes);
        assert_eq!(
            children(&nodes, &size, index).len(),
            nodes[index].count as usize
        );
        // A move past the leaf leaves the tree after the line's length.
        let past = legal_moves(positions.last().unwrap());
        if let Some(m) = past.first() {
            let mut longer = positions.clone();
            longer.push(m.apply(positions.last().unwrap()));
            assert_eq!(
                follow(&nodes, &longer).1,
                Reached::Outside { after: line.len() }
            );
        }
        // By pieces: every node of the subtree once, the open leaves among them.
        let pieces = by_pieces(&nodes, 0);
        assert_eq!(
            pieces.iter().map(|p| p.nodes).sum::<u64>(),
            nodes.len() as u64
        );
        assert!(pieces.windows(2).all(|w| w[0].pieces < w[1].pieces));
        assert_eq!(pieces.last().unwrap().pieces, root.piece_count());
        let (index, _) = follow(&nodes, &positions[..2]);
        assert_eq!(
            by_pieces(&nodes, index)
                .iter()
                .map(|p| p.nodes)
                .sum::<u64>(),
            size[index]
        );
        // An illegal move is refused with its place in the line.
        let mut bad = text.clone();
        bad.insert(1, "a1-a9".to_string());
        match play_line(&root, &bad) {
            Err(SessionError::Line { index: 2, .. }) => {}
            other => panic!("{other:?}"),
        }
    }
}
