//! A certificate's tree held in memory and indexed once, so that it can be walked (the node
//! at the end of any line of moves from the root, its moves, the subtree below each and how
//! each line ends) and cut (`cut`), without reading the file again. Reading checks only the
//! shape (depths, node numbers); what the moves and leaves are worth is the checker's.

use std::io::BufRead;
use std::path::Path;

use thiserror::Error;

use crate::format::{self, Header, NodeLine, Tag};
use crate::stitch::{self, StitchError};
use fanorona_rules::moves::Move;
use fanorona_rules::position::{Color, Position};

/// A move of an asked line that is not legal where it is played.
#[derive(Debug, Error)]
#[error("move {index} '{text}' of the line: {reason}")]
pub struct LineError {
    /// Its place in the line, from 1.
    pub index: usize,
    pub text: String,
    pub reason: String,
}

/// Kinds of node, one byte each (`Tag` without its argument).
const INNER: u8 = 0;
const TABLE_WIN: u8 = 1;
const TABLE_DRAW: u8 = 2;
const TABLE_LOSS: u8 = 3;
const TERMINAL: u8 = 4;
const REPETITION: u8 = 5;
const SHARED: u8 = 6;
const OPEN: u8 = 7;

/// A certificate's nodes, in file order (node K is the file's line K + 2). About 17 bytes a
/// node and its move's text: the 5x9 start's 2.3 million nodes take some 50 MB.
pub struct Tree {
    pub header: Header,
    pub root: Position,
    /// The side whose win the certificate is about.
    pub attacker: Color,
    pub proven: bool,
    kind: Vec<u8>,
    /// The node a repetition or shared leaf names; 0 for the others.
    arg: Vec<u32>,
    /// One past the last node of each node's subtree (pre-order: the subtree is a range).
    end: Vec<u32>,
    parent: Vec<u32>,
    depth: Vec<u32>,
    /// The moves' text, one after the other; node K's is `moves[move_at[K]..move_at[K+1]]`.
    moves: String,
    move_at: Vec<u32>,
}

/// How a node's line ends in the certificate (or that it goes on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The certificate goes on below: `nodes` nodes in the subtree, this one counted.
    Inner { nodes: u64 },
    /// The tables' value for the side to move there.
    Table(fanorona_tables::Wdl),
    /// The side to move has no piece or no move: it has lost.
    Terminal,
    /// The position of the ancestor `plies` plies above, again.
    Repetition { plies: u32 },
    /// The position of an earlier node, whose subtree stands for this one too.
    Shared { node: u32 },
    /// Left open (a partial certificate).
    Open,
}

impl Tree {
    /// Reads and indexes the certificate file `path` (gzip for `.gz`).
    pub fn open(path: &Path) -> Result<Tree, StitchError> {
        let mut input = format::open(path, |_| {}).map_err(stitch::io_at(path))?;
        Tree::read(path, &mut input)
    }

    /// Reads and indexes a certificate's text; `path` names it in errors.
    pub fn read(path: &Path, input: &mut dyn BufRead) -> Result<Tree, StitchError> {
        let bad = |line: u64, reason: String| StitchError::Bad {
            path: path.to_path_buf(),
            line,
            reason,
        };
        let header = stitch::header_of(path, input)?;
        let root: Position = header
            .position
            .parse()
            .map_err(|e| bad(1, format!("root position: {e}")))?;
        let attacker = header
            .attacker()
            .ok_or_else(|| bad(1, format!("goal '{}'", header.goal)))?;
        let mut tree = Tree {
            proven: header.claim == "proven",
            header,
            root,
            attacker,
            kind: Vec::new(),
            arg: Vec::new(),
            end: Vec::new(),
            parent: Vec::new(),
            depth: Vec::new(),
            moves: String::new(),
            move_at: vec![0],
        };
        // The inner nodes whose subtrees are still open, the root's first.
        let mut open: Vec<u32> = Vec::new();
        stitch::node_lines(path, input, |i, NodeLine { depth, mv, tag }| {
            let line = i + 2;
            let id = u32::try_from(i).map_err(|_| bad(line, "more than 4 billion nodes".into()))?;
            let d = depth as usize;
            if d > open.len() || (d == 0 && id > 0) {
                return Err(bad(
                    line,
                    format!("depth {depth} under {} open inner nodes", open.len()),
                ));
            }
            for closed in open.drain(d..) {
                tree.end[closed as usize] = id;
            }
            let (kind, arg) = match tag {
                Tag::Inner => (INNER, 0),
                Tag::Table(fanorona_tables::Wdl::Win) => (TABLE_WIN, 0),
                Tag::Table(fanorona_tables::Wdl::Draw) => (TABLE_DRAW, 0),
                Tag::Table(fanorona_tables::Wdl::Loss) => (TABLE_LOSS, 0),
                Tag::Terminal => (TERMINAL, 0),
                Tag::Repetition(k) | Tag::Shared(k) if k >= u64::from(id) => {
                    return Err(bad(line, format!("node {k} is not an earlier node")));
                }
                Tag::Repetition(k) => (REPETITION, k as u32),
                Tag::Shared(k) => (SHARED, k as u32),
                Tag::Open => (OPEN, 0),
            };
            tree.kind.push(kind);
            tree.arg.push(arg);
            tree.end.push(id + 1);
            tree.parent.push(open.last().copied().unwrap_or(0));
            tree.depth.push(depth);
            tree.moves.push_str(mv);
            tree.move_at.push(tree.moves.len() as u32);
            if kind == INNER {
                open.push(id);
            }
            Ok(())
        })?;
        if tree.kind.is_empty() {
            return Err(bad(2, "no node lines after the header".into()));
        }
        let n = tree.kind.len() as u32;
        for closed in open {
            tree.end[closed as usize] = n;
        }
        Ok(tree)
    }

    /// The number of nodes.
    pub fn len(&self) -> u64 {
        self.kind.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.kind.is_empty()
    }

    /// The move that leads to `node` from its parent (`-` at the root).
    pub fn mv(&self, node: u32) -> &str {
        let k = node as usize;
        &self.moves[self.move_at[k] as usize..self.move_at[k + 1] as usize]
    }

    /// `node`'s depth: 0 at the root.
    pub fn depth(&self, node: u32) -> u32 {
        self.depth[node as usize]
    }

    /// One past the last node of `node`'s subtree.
    pub fn end(&self, node: u32) -> u32 {
        self.end[node as usize]
    }

    /// `node`'s tag, as its line has it.
    pub fn tag(&self, node: u32) -> Tag {
        let k = node as usize;
        match self.kind[k] {
            INNER => Tag::Inner,
            TABLE_WIN => Tag::Table(fanorona_tables::Wdl::Win),
            TABLE_DRAW => Tag::Table(fanorona_tables::Wdl::Draw),
            TABLE_LOSS => Tag::Table(fanorona_tables::Wdl::Loss),
            TERMINAL => Tag::Terminal,
            REPETITION => Tag::Repetition(u64::from(self.arg[k])),
            SHARED => Tag::Shared(u64::from(self.arg[k])),
            _ => Tag::Open,
        }
    }

    /// How `node`'s line ends, or how much goes on below it.
    pub fn ending(&self, node: u32) -> Ending {
        match self.tag(node) {
            Tag::Inner => Ending::Inner {
                nodes: u64::from(self.end(node) - node),
            },
            Tag::Table(v) => Ending::Table(v),
            Tag::Terminal => Ending::Terminal,
            Tag::Repetition(k) => Ending::Repetition {
                plies: self.depth(node) - self.depth(k as u32),
            },
            Tag::Shared(k) => Ending::Shared { node: k as u32 },
            Tag::Open => Ending::Open,
        }
    }

    /// The children of `node`, in file order (none for a leaf).
    pub fn children(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        let end = self.end[node as usize];
        let mut next = if self.kind[node as usize] == INNER {
            node + 1
        } else {
            end
        };
        std::iter::from_fn(move || {
            (next < end).then(|| {
                let c = next;
                next = self.end[c as usize];
                c
            })
        })
    }

    /// The node whose subtree stands for `node`'s position: `node` itself, or for a
    /// repetition or shared leaf the node it names (followed on as far as it goes).
    pub fn standing_for(&self, mut node: u32) -> u32 {
        while matches!(self.kind[node as usize], REPETITION | SHARED) {
            node = self.arg[node as usize];
        }
        node
    }

    /// The moves from the root to `node`.
    pub fn line_to(&self, node: u32) -> Vec<&str> {
        let mut line = Vec::new();
        let mut k = node;
        while k != 0 {
            line.push(self.mv(k));
            k = self.parent[k as usize];
        }
        line.reverse();
        line
    }

    /// Follows `line` (moves in notation, as the certificate writes them) from the root,
    /// through repetition and shared leaves, as far as the certificate goes: it leaves the
    /// line at a move of the choosing side it does not take.
    pub fn follow<S: AsRef<str>>(&self, line: &[S]) -> Followed {
        let mut at = Followed {
            node: self.standing_for(0),
            moves: 0,
        };
        for mv in line {
            let Some(child) = self.children(at.node).find(|&c| self.mv(c) == mv.as_ref()) else {
                break;
            };
            at.node = self.standing_for(child);
            at.moves += 1;
        }
        at
    }
}

impl Tree {
    /// The first node (in file order) whose position is `target`, found by playing the
    /// certificate's moves from the root; `None` if no node of it is that position. Lines
    /// are left where they have fewer pieces than `target` (pieces never come back), and
    /// repetition and shared leaves stand for nodes searched elsewhere.
    pub fn find(&self, target: &Position) -> Option<u32> {
        let pieces = target.piece_count();
        let mut stack = vec![(0u32, self.root)];
        while let Some((node, pos)) = stack.pop() {
            if pos == *target {
                return Some(node);
            }
            if pos.piece_count() < pieces || pos.piece_count() == 0 {
                continue;
            }
            // Children pushed in reverse: the first child is searched first.
            let mut children: Vec<u32> = self
                .children(node)
                .filter(|&c| !matches!(self.kind[c as usize], REPETITION | SHARED))
                .collect();
            children.reverse();
            for c in children {
                if let Ok(mv) = Move::parse(&pos, self.mv(c)) {
                    stack.push((c, mv.apply(&pos)));
                }
            }
        }
        None
    }
}

/// How far a line goes in a certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Followed {
    /// The node for the position after the moves followed.
    pub node: u32,
    /// Moves of the line followed (all of them when the certificate holds the whole line).
    pub moves: usize,
}

/// A line of moves played from a root as far as its moves are legal.
pub struct Played {
    /// The root, then the position after each legal move.
    pub positions: Vec<Position>,
    /// Those moves, written back in the program's notation (as certificates write them).
    pub moves: Vec<String>,
    /// The first move that is not legal where it is played, if one is not.
    pub error: Option<LineError>,
}

/// Plays `line` (moves in notation) from `root`, each move parsed where it is played.
pub fn play_line<S: AsRef<str>>(root: &Position, line: &[S]) -> Played {
    let mut played = Played {
        positions: vec![*root],
        moves: Vec::new(),
        error: None,
    };
    for (k, text) in line.iter().enumerate() {
        let pos = played.positions[k];
        let text = text.as_ref();
        match Move::parse(&pos, text) {
            Ok(mv) => {
                played.moves.push(mv.notation(pos.board()));
                played.positions.push(mv.apply(&pos));
            }
            Err(e) => {
                played.error = Some(LineError {
                    index: k + 1,
                    text: fanorona_rules::geometry::clipped(text),
                    reason: e.to_string(),
                });
                break;
            }
        }
    }
    played
}

#[cfg(test)]
mod tests {
    use super::*;

    const CERT: &str = "{\"format\":\"fanorona-certificate\",\"version\":1,\"position\":\"W.B/.../... w\",\"goal\":\"white wins\",\"claim\":\"proven\",\"tables\":null}\n\
0 - i\n\
1 a3-b3A t\n\
1 a3-a2 i\n\
2 c3-b3 i\n\
3 a2-a3 r 0\n\
2 c3-c2 s 1\n\
1 a3-b2 o\n";

    #[test]
    fn subtrees_children_and_leaves_are_indexed() {
        let t = Tree::read(Path::new("t"), &mut CERT.as_bytes()).unwrap();
        assert_eq!(t.len(), 7);
        assert_eq!(t.children(0).collect::<Vec<_>>(), vec![1, 2, 6]);
        assert_eq!(t.children(2).collect::<Vec<_>>(), vec![3, 5]);
        assert_eq!(t.ending(0), Ending::Inner { nodes: 7 });
        assert_eq!(t.ending(2), Ending::Inner { nodes: 4 });
        assert_eq!(t.ending(1), Ending::Terminal);
        assert_eq!(t.ending(4), Ending::Repetition { plies: 3 });
        assert_eq!(t.ending(5), Ending::Shared { node: 1 });
        assert_eq!(t.ending(6), Ending::Open);
        assert_eq!(t.line_to(4), vec!["a3-a2", "c3-b3", "a2-a3"]);
        assert_eq!(t.mv(0), "-");
        // Through the repetition back to the root, and through the shared leaf.
        let at = |node, moves| Followed { node, moves };
        assert_eq!(t.follow(&["a3-a2", "c3-b3", "a2-a3"]), at(0, 3));
        assert_eq!(t.follow(&["a3-a2", "c3-c2"]), at(1, 2));
        assert_eq!(t.follow(&["a3-a2", "c3-a1", "a2-a3"]), at(2, 1));
        // Positions found by playing the moves (this tree's other moves are not legal: only
        // the checker minds); a position the tree never reaches is not found.
        let after = |line: &[&str]| *play_line(&t.root, line).positions.last().unwrap();
        assert_eq!(t.find(&t.root), Some(0));
        assert_eq!(t.find(&after(&["a3-b3A"])), Some(1));
        let elsewhere: Position = "..B/W../... w".parse().unwrap();
        assert_eq!(t.find(&elsewhere), None);
    }

    #[test]
    fn a_tree_out_of_order_is_refused_with_its_line() {
        let bad = CERT.replace("2 c3-c2 s 1", "4 c3-c2 s 1");
        let e = Tree::read(Path::new("t"), &mut bad.as_bytes())
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("t: line 7: depth 4"), "{e}");
        let bad = CERT.replace("s 1", "s 9");
        let e = Tree::read(Path::new("t"), &mut bad.as_bytes())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("node 9 is not an earlier node"), "{e}");
    }
}
