//! Writing a certificate from a decided search.
//!
//! The writer walks the solution depth-first with an explicit stack (a 5x9 proof is deep)
//! and writes each node as it reaches it. Where the search kept its tree (PN, a PN² first
//! level, a session's tree) the writer follows it; where it did not (PN²'s second level,
//! the rote store) or where it holds no tree at all (df-pn), a df-pn search fills in the
//! rest: its table is exact under repetitions because its keys carry the positions since
//! the last capture. Transpositions become shared leaves (`s K`): a position whose subtree
//! is already written is never written twice, and at a choosing node a move to such a
//! position (or, in a disproof, back to an ancestor) is preferred, since it costs one line.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::io::{self, Write};
use std::time::Instant;

use thiserror::Error;

use crate::format::{FORMAT_NAME, Header, Tables, Tag, VERSION};
use fanorona_rules::movegen::is_lost;
use fanorona_rules::moves::{Move, legal_moves};
use fanorona_rules::position::{Color, Position};
use fanorona_search::dfpn::{DfPn, Path};
use fanorona_search::pn::PnTree;
use fanorona_search::rote::WordHasher;
use fanorona_search::{Goal, LeafEval, Limits};
use fanorona_tables::{Database, Wdl};

/// Entries the re-solving df-pn keeps at most (the cheapest go when it is full).
const RESOLVE_TABLE: usize = 8_000_000;

#[derive(Debug, Error)]
pub enum WriteError {
    #[error("writing the certificate: {0}")]
    Io(#[from] io::Error),
    /// The search's claim did not hold where the writer looked (a solver bug).
    #[error("the solution does not hold at {position}: {reason}")]
    NoSolution { position: String, reason: String },
    /// Given up on request (the daemon shutting down).
    #[error("the certificate was abandoned: the writer was asked to stop")]
    Cancelled,
    /// Closing a partial certificate's leaves: its list or the stitch.
    #[error(transparent)]
    Stitch(#[from] crate::stitch::StitchError),
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Written {
    /// Node lines.
    pub nodes: u64,
    /// Shared leaves among them.
    pub shared: u64,
    /// Node lines the search's tree did not hold (below nodes whose subtree it had not
    /// kept), filled in by re-solving.
    pub resolved: u64,
    /// Nodes the re-solving search created to fill those in.
    pub resolve_search_nodes: u64,
    /// Open leaves (a partial certificate): nodes not decided again within the budget.
    pub open: u64,
    /// Open leaves then closed: solved on their own and stitched in (`close`).
    pub closed: u64,
    /// Bytes of the file (compressed, for `.gz`); set by the file writer.
    pub bytes: u64,
    pub seconds: f64,
}

impl Written {
    /// How far a certificate being written has got, for progress lines.
    pub fn progress_line(&self) -> String {
        let open = if self.open > 0 {
            format!(", {} open leaves", self.open)
        } else {
            String::new()
        };
        format!(
            "{} nodes written ({} re-solved, {} search nodes{open}), {:.0} s",
            self.nodes, self.resolved, self.resolve_search_nodes, self.seconds
        )
    }
}

/// A decided goal to write: where its solution comes from.
pub struct Solved<'s, 'a> {
    pub root: Position,
    pub goal: Goal,
    /// `true`: the attacker wins; `false`: the attacker does not.
    pub proves: bool,
    pub db: Option<&'a Database>,
    /// The search's tree, when it kept one (PN, PN², a session's first level).
    pub tree: Option<&'s PnTree<'a>>,
    /// The df-pn search that decided the goal, when it was df-pn: its table is read first.
    pub dfpn: Option<&'s mut DfPn<'a>>,
}

/// A partial certificate's terms: re-deciding one node may take at most `leaf_budget`
/// search nodes; past that the node is written as an open leaf (`o`) and listed in `list`,
/// one JSON object a line: its node number, position and the positions since the last
/// capture before it (what it could repeat), so it can be decided on its own later.
pub struct Partial<'o> {
    pub leaf_budget: u64,
    pub list: &'o mut dyn Write,
}

/// What a choosing node's search through its children found.
enum Child {
    /// This child holds the claim.
    Holds(Position),
    /// Not decided within the budget (or cancelled): the node is left open.
    Open,
    /// Every child is decided, none the claim's way.
    NoneHolds,
}

/// Set from outside, it makes a writer give up (`WriteError::Cancelled`).
pub use fanorona_search::Cancel;

/// The header line of `solved`'s certificate; `extra` keys follow the format's own.
pub fn header(
    solved: &Solved<'_, '_>,
    extra: serde_json::Map<String, serde_json::Value>,
) -> Header {
    Header {
        format: FORMAT_NAME.to_string(),
        version: VERSION,
        position: solved.root.to_string(),
        goal: solved.goal.to_string(),
        claim: if solved.proves { "proven" } else { "disproven" }.to_string(),
        tables: solved.db.map(|db| Tables {
            board: db.board().to_string(),
            pieces: db.max_pieces() as u32,
        }),
        partial: false,
        extra,
    }
}

/// Writes `solved` as a certificate to `out`, header first. `progress` sees what is written
/// so far every million nodes and every ten seconds (re-solving can take long between nodes).
/// With `partial`, the header must say `"partial": true`. `cancel`, once set, stops it
/// between nodes and the re-solving search within.
pub fn write(
    out: &mut dyn Write,
    header: &Header,
    solved: Solved<'_, '_>,
    partial: Option<Partial<'_>>,
    cancel: Option<&Cancel>,
    progress: &mut dyn FnMut(&Written),
) -> Result<Written, WriteError> {
    write_paced(
        out,
        header,
        solved,
        partial,
        cancel,
        progress,
        Pace::default(),
    )
}

/// How often the writer shows its progress.
#[derive(Clone, Copy, Debug)]
struct Pace {
    /// Seconds between two progress lines (also every million nodes written).
    period: f64,
    /// Search nodes a re-decision runs between two looks at the clock (a node can take
    /// minutes to decide again).
    chunk: u64,
}

impl Default for Pace {
    fn default() -> Pace {
        Pace {
            period: 10.0,
            chunk: 10_000_000,
        }
    }
}

fn write_paced(
    out: &mut dyn Write,
    header: &Header,
    solved: Solved<'_, '_>,
    partial: Option<Partial<'_>>,
    cancel: Option<&Cancel>,
    progress: &mut dyn FnMut(&Written),
    pace: Pace,
) -> Result<Written, WriteError> {
    assert_eq!(
        header.partial,
        partial.is_some(),
        "the header says what is written"
    );
    let start = Instant::now();
    let json = serde_json::to_string(header).map_err(io::Error::other)?;
    writeln!(out, "{json}")?;
    let Solved {
        root,
        goal,
        proves,
        db,
        tree,
        dfpn,
    } = solved;
    // Without the deciding search's tree or table, every node comes from re-solving.
    let all_resolved = tree.is_none() && dfpn.is_none();
    let mut own;
    let resolver: &mut DfPn<'_> = match dfpn {
        Some(d) => d,
        None => {
            own = DfPn::new(goal, LeafEval::new(db), Limits::none(), RESOLVE_TABLE);
            &mut own
        }
    };
    let before = resolver.stats.nodes;
    resolver.stop_on(cancel.cloned());
    let mut w = Walker {
        out,
        board: root.board(),
        goal,
        proves,
        db,
        pieces: header.tables.as_ref().map_or(0, |t| t.pieces),
        tree,
        resolver,
        path: Path::default(),
        ancestors: HashMap::default(),
        finished: HashMap::default(),
        stack: Vec::new(),
        written: Written::default(),
        twins: None,
        partial,
        cancel: cancel.cloned(),
        start,
        resolve_before: before,
        progress,
        reported: 0.0,
        pace,
    };
    let ran = w.run(root);
    w.resolver.stop_on(None);
    ran?;
    let mut written = w.written;
    written.resolve_search_nodes = w.resolver.stats.nodes - before;
    if all_resolved {
        written.resolved = written.nodes;
    }
    written.seconds = start.elapsed().as_secs_f64();
    Ok(written)
}

/// An inner node being written: its moves still to go.
struct Frame {
    index: u64,
    pos: Position,
    /// The search tree's node, while the writer follows the tree.
    handle: Option<usize>,
    moves: Vec<(Move, Position)>,
    next: usize,
}

type PositionMap = HashMap<Position, u64, BuildHasherDefault<WordHasher>>;

struct Walker<'w, 's, 'a, 'p> {
    out: &'w mut dyn Write,
    board: fanorona_rules::geometry::Board,
    goal: Goal,
    proves: bool,
    db: Option<&'a Database>,
    /// The largest piece count the header's tables hold.
    pieces: u32,
    tree: Option<&'s PnTree<'a>>,
    resolver: &'w mut DfPn<'a>,
    /// The positions from the root to the current node, for the resolver.
    path: Path,
    /// The current node's ancestors (and itself): position to node number.
    ancestors: PositionMap,
    /// Inner nodes whose subtree is written: position to node number.
    finished: PositionMap,
    stack: Vec<Frame>,
    written: Written,
    /// The tree's expanded, decided nodes by position and positions since the last
    /// capture, built on first need (for rote-decided nodes whose twin is in the tree).
    twins: Option<HashMap<(Position, u64), usize, BuildHasherDefault<WordHasher>>>,
    partial: Option<Partial<'p>>,
    cancel: Option<Cancel>,
    start: Instant,
    /// The resolver's node count before this certificate.
    resolve_before: u64,
    progress: &'w mut dyn FnMut(&Written),
    /// When `progress` last saw the count (seconds from the start).
    reported: f64,
    pace: Pace,
}

impl Walker<'_, '_, '_, '_> {
    /// The side that needs one good move: the attacker in a proof, the defender otherwise.
    fn choosing(&self) -> Color {
        if self.proves {
            self.goal.attacker
        } else {
            self.goal.attacker.opponent()
        }
    }

    /// Whether a resolver entry decides the claim's way.
    fn wanted(&self, pn: u64, dn: u64) -> bool {
        if self.proves { pn == 0 } else { dn == 0 }
    }

    fn no_solution(&self, pos: &Position, reason: &str) -> WriteError {
        WriteError::NoSolution {
            position: pos.to_string(),
            reason: reason.to_string(),
        }
    }

    /// A leaf's value for the claim: `Some(true)` when the game is over or the tables decide
    /// it the claim's way, `Some(false)` when they decide it the other way.
    fn leaf(&self, pos: &Position) -> Option<(Tag, bool)> {
        let attacker_to_move = pos.side_to_move() == self.goal.attacker;
        if is_lost(pos) {
            return Some((Tag::Terminal, attacker_to_move != self.proves));
        }
        // Only what the header's tables hold (a side without pieces is in no slice).
        if pos.us() == 0 || pos.them() == 0 || pos.piece_count() > self.pieces {
            return None;
        }
        let v = self.db?.probe(pos)?;
        let attacker_wins = matches!((v, attacker_to_move), (Wdl::Win, true) | (Wdl::Loss, false));
        Some((Tag::Table(v), attacker_wins == self.proves))
    }

    /// The tree node of `child` below tree node `parent`, if the tree kept its subtree.
    /// A child the rote store decided stands for the node that decided it when that node is
    /// in this tree (a transposition with the same positions since the last capture, hence
    /// the same value): its subtree is followed instead of re-solved.
    fn tree_child(&mut self, parent: Option<usize>, child: &Position) -> Option<usize> {
        let tree = self.tree?;
        let node = &tree.nodes[parent?];
        if !node.expanded {
            return None;
        }
        let range = node.first as usize..(node.first + node.count) as usize;
        let c = range.into_iter().find(|&c| tree.nodes[c].pos == *child)?;
        let n = &tree.nodes[c];
        if n.expanded {
            return Some(c);
        }
        if !n.rote {
            return None;
        }
        let twins = self.twins.get_or_insert_with(|| {
            // Expanded, decided nodes by (position, positions since the last capture).
            let mut map = HashMap::default();
            for (i, t) in tree.nodes.iter().enumerate() {
                if t.expanded && (t.pn == 0 || t.dn == 0) {
                    map.entry((t.pos, t.since)).or_insert(i);
                }
            }
            map
        });
        let &twin = twins.get(&(n.pos, n.since))?;
        let t = &tree.nodes[twin];
        self.wanted(t.pn, t.dn).then_some(twin)
    }

    fn run(&mut self, root: Position) -> Result<(), WriteError> {
        let handle = self.tree.filter(|t| t.nodes[0].expanded).map(|_| 0);
        self.node(0, "-", root, handle, self.tree.is_some())?;
        while let Some(top) = self.stack.last_mut() {
            if top.next == top.moves.len() {
                let done = self.stack.pop().expect("a frame");
                self.ancestors.remove(&done.pos);
                self.finished.insert(done.pos, done.index);
                self.path.pop();
                continue;
            }
            let (mv, child) = top.moves[top.next];
            top.next += 1;
            if fanorona_search::cancelled(self.cancel.as_ref()) {
                return Err(WriteError::Cancelled);
            }
            let depth = self.stack.len() as u32;
            let parent = self.stack.last().and_then(|f| f.handle);
            let handle = self.tree_child(parent, &child);
            let text = mv.notation(self.board);
            self.node(depth, &text, child, handle, parent.is_some())?;
            self.report(self.written.nodes.is_multiple_of(1 << 20));
        }
        Ok(())
    }

    /// Shows `progress` the count if its period has passed since it last did, or `now`.
    fn report(&mut self, now: bool) {
        let seconds = self.start.elapsed().as_secs_f64();
        if now || seconds >= self.reported + self.pace.period {
            self.reported = seconds;
            self.written.resolve_search_nodes = self.resolver.stats.nodes - self.resolve_before;
            self.written.seconds = seconds;
            (self.progress)(&self.written);
        }
    }

    /// The resolver's `decide_within` (`pos` the next position of the path), run in chunks
    /// of the pace's nodes with a progress line between them when one is due; the table
    /// keeps what a chunk found, so the next goes on from there.
    fn decide(&mut self, pos: &Position, budget: Option<u64>) -> fanorona_search::dfpn::Entry {
        let start = self.resolver.stats.nodes;
        loop {
            let spent = self.resolver.stats.nodes - start;
            let left = budget.map(|b| b.saturating_sub(spent));
            let chunk = left.map_or(self.pace.chunk, |l| l.clamp(1, self.pace.chunk));
            let e = self
                .resolver
                .decide_within(&mut self.path, pos, Some(chunk));
            let spent = self.resolver.stats.nodes - start;
            if e.pn == 0
                || e.dn == 0
                || budget.is_some_and(|b| spent >= b)
                || fanorona_search::cancelled(self.cancel.as_ref())
            {
                return e;
            }
            self.report(false);
        }
    }

    /// Writes node `pos` (reached by `mv` at `depth`), and opens a frame if it is inner.
    /// `kept`: the search's tree holds this node (its parent was expanded there).
    fn node(
        &mut self,
        depth: u32,
        mv: &str,
        pos: Position,
        handle: Option<usize>,
        kept: bool,
    ) -> Result<(), WriteError> {
        let index = self.written.nodes;
        let mut tag = if let Some(&k) = self.ancestors.get(&pos) {
            if self.proves {
                return Err(self.no_solution(&pos, "a repetition inside a proof"));
            }
            Tag::Repetition(k)
        } else if let Some(&k) = self.finished.get(&pos) {
            self.written.shared += 1;
            Tag::Shared(k)
        } else if let Some((tag, holds)) = self.leaf(&pos) {
            if !holds {
                return Err(self.no_solution(&pos, "a leaf decided against the claim"));
            }
            tag
        } else {
            Tag::Inner
        };
        let mut moves = Vec::new();
        if tag == Tag::Inner {
            if pos.side_to_move() == self.choosing() {
                match self.choose(&pos, handle)? {
                    Some(m) => moves.push(m),
                    None => tag = Tag::Open,
                }
            } else {
                moves.extend(legal_moves(&pos).into_iter().map(|m| (m, m.apply(&pos))));
                if moves.is_empty() {
                    return Err(self.no_solution(&pos, "an inner node without moves"));
                }
            }
        }
        writeln!(self.out, "{depth} {mv} {tag}")?;
        self.written.nodes += 1;
        if self.tree.is_some() && !kept {
            self.written.resolved += 1;
        }
        if tag == Tag::Open {
            self.list_open(index, &pos)?;
        }
        if tag == Tag::Inner {
            self.ancestors.insert(pos, index);
            self.path.push(pos);
            self.stack.push(Frame {
                index,
                pos,
                handle,
                moves,
                next: 0,
            });
        }
        Ok(())
    }

    /// Lists open leaf `index` at `pos` (the path ends at its parent).
    fn list_open(&mut self, index: u64, pos: &Position) -> Result<(), WriteError> {
        self.written.open += 1;
        let past: Vec<String> = self
            .path
            .repeatable_by(pos)
            .iter()
            .map(|p| p.to_string())
            .collect();
        let line =
            serde_json::json!({"node": index, "position": pos.to_string(), "since_capture": past});
        let list = &mut self
            .partial
            .as_mut()
            .expect("open leaves only when partial")
            .list;
        writeln!(list, "{line}")?;
        Ok(())
    }

    /// Search nodes one re-decision may take: unbounded unless the certificate is partial.
    fn budget(&self) -> Option<u64> {
        self.partial.as_ref().map(|p| p.leaf_budget)
    }

    /// The one move written at a choosing node: the cheapest that holds; `None` when the
    /// node is not decided again within a partial certificate's budget.
    fn choose(
        &mut self,
        pos: &Position,
        handle: Option<usize>,
    ) -> Result<Option<(Move, Position)>, WriteError> {
        let moves: Vec<(Move, Position)> = legal_moves(pos)
            .into_iter()
            .map(|m| (m, m.apply(pos)))
            .collect();
        // One line each: back to an ancestor (a draw, in a disproof), to a written subtree,
        // to a leaf that holds.
        let cheap = |w: &Self, c: &Position| {
            // (Not where repetitions are scored as the attacker's wins: a disproof written
            // then shows that it needs no repetition.)
            (!w.proves && !w.resolver.repetition_wins && w.ancestors.contains_key(c))
                || w.finished.contains_key(c)
                || w.leaf(c).is_some_and(|(_, holds)| holds)
        };
        if let Some(&m) = moves.iter().find(|(_, c)| cheap(self, c)) {
            return Ok(Some(m));
        }
        // The search's own tree.
        if let (Some(tree), Some(h)) = (self.tree, handle) {
            let node = &tree.nodes[h];
            let range = node.first as usize..(node.first + node.count) as usize;
            let good = range.into_iter().find(|&c| {
                let n = &tree.nodes[c];
                self.wanted(n.pn, n.dn)
            });
            if let Some(c) = good {
                let target = tree.nodes[c].pos;
                if let Some(&m) = moves.iter().find(|(_, c)| *c == target) {
                    return Ok(Some(m));
                }
            }
            return Err(self.no_solution(pos, "the tree has no child that holds"));
        }
        // The resolver: a child its table already decides; else decide this node (the path
        // holds its parent), which leaves the deciding child in the table.
        self.path.push(*pos);
        let known = self.resolved_choice(&moves);
        self.path.pop();
        if let Some(m) = known {
            return Ok(Some(m));
        }
        // The budget is the node's: what the children's searches below may take is what the
        // node's own left over.
        let budget = self.budget();
        let spent_before = self.resolver.stats.nodes;
        let e = self.decide(pos, budget);
        if e.pn != 0 && e.dn != 0 {
            return self.not_decided(pos);
        }
        if !self.wanted(e.pn, e.dn) {
            return Err(self.no_solution(pos, "the position is decided the other way"));
        }
        self.path.push(*pos);
        let known = self.resolved_choice(&moves);
        self.path.pop();
        let child = match known {
            Some(m) => Child::Holds(m.1),
            // The table kept the node decided but dropped the child that decided it: search
            // the node again through its children, best-first, within what is left.
            None => {
                let spent = self.resolver.stats.nodes - spent_before;
                self.decide_children(pos, budget.map(|b| b.saturating_sub(spent)))
            }
        };
        match child {
            Child::Holds(c) => match moves.iter().copied().find(|(_, p)| *p == c) {
                Some(m) => Ok(Some(m)),
                None => Err(self.no_solution(pos, "the deciding child is not a move's")),
            },
            Child::Open => self.not_decided(pos),
            Child::NoneHolds => Err(self.no_solution(pos, "no move holds")),
        }
    }

    /// A choosing node not decided again: given up on a cancel; an open leaf in a partial
    /// certificate; otherwise (no budget, so only a cancel should stop it) a failure.
    fn not_decided(&self, pos: &Position) -> Result<Option<(Move, Position)>, WriteError> {
        if fanorona_search::cancelled(self.cancel.as_ref()) {
            Err(WriteError::Cancelled)
        } else if self.partial.is_some() {
            Ok(None)
        } else {
            Err(self.no_solution(pos, "not decided again"))
        }
    }

    /// The child of `pos` (the next position of the path) that holds, found by the
    /// resolver's `decide_children_within` in chunks (progress lines and the cancel seen
    /// between them) until found or `budget` is spent.
    fn decide_children(&mut self, pos: &Position, budget: Option<u64>) -> Child {
        let start = self.resolver.stats.nodes;
        loop {
            let spent = self.resolver.stats.nodes - start;
            let left = budget.map(|b| b.saturating_sub(spent));
            if left == Some(0) || fanorona_search::cancelled(self.cancel.as_ref()) {
                return Child::Open;
            }
            let chunk = left.map_or(self.pace.chunk, |l| l.clamp(1, self.pace.chunk));
            let children = self
                .resolver
                .decide_children_within(&mut self.path, pos, Some(chunk));
            if let Some(&(c, _)) = children.iter().find(|(_, e)| self.wanted(e.pn, e.dn)) {
                return Child::Holds(c);
            }
            if children.iter().all(|(_, e)| e.pn == 0 || e.dn == 0) {
                return Child::NoneHolds;
            }
            self.report(false);
        }
    }

    /// A move whose child the resolver's table already decides the claim's way (the path
    /// ends at the node).
    fn resolved_choice(&self, moves: &[(Move, Position)]) -> Option<(Move, Position)> {
        moves.iter().copied().find(|(_, c)| {
            self.resolver
                .peek(&self.path, c)
                .is_some_and(|e| self.wanted(e.pn, e.dn))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::verify;

    /// The 3x5 start's "White wins?" (proven, the paper's Table 4) written from nothing,
    /// every choosing node decided again, at `pace`: the certificate and each progress
    /// count's (nodes written, re-solving nodes).
    fn resolved_3x5(pace: Pace) -> (Vec<u8>, Vec<(u64, u64)>) {
        let root = Position::initial("3x5".parse().unwrap());
        let solved = Solved {
            root,
            goal: Goal {
                attacker: Color::White,
            },
            proves: true,
            db: None,
            tree: None,
            dfpn: None,
        };
        let header = header(&solved, Default::default());
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let mut progress = |w: &Written| seen.push((w.nodes, w.resolve_search_nodes));
        write_paced(&mut out, &header, solved, None, None, &mut progress, pace).unwrap();
        (out, seen)
    }

    #[test]
    fn a_long_re_decision_shows_progress_between_its_chunks_and_still_holds() {
        let (plain, _) = resolved_3x5(Pace::default());
        let (paced, seen) = resolved_3x5(Pace {
            period: 0.0,
            chunk: 50,
        });
        for text in [&plain, &paced] {
            let report = verify(&mut text.as_slice(), None, &mut |_| {}).unwrap();
            assert!(report.nodes > 10, "{report:?}");
        }
        // Progress came while a node was decided again: the re-solving count grew between
        // two lines with no node written in between.
        assert!(
            seen.windows(2).any(|w| w[0].0 == w[1].0 && w[1].1 > w[0].1),
            "{seen:?}"
        );
    }

    /// Writes `board`'s start for `attacker` with a resolver of `capacity` entries (so a full
    /// table drops its cheap entries as it goes), within `budget` a node:
    /// what was written, and the certificate.
    fn write_small_table(
        board: &str,
        attacker: Color,
        capacity: usize,
        budget: u64,
    ) -> (Written, Vec<u8>) {
        let root = Position::initial(board.parse().unwrap());
        let goal = Goal { attacker };
        let mut resolver = DfPn::new(goal, LeafEval::new(None), Limits::none(), capacity);
        let e = resolver.search(&root, |_| {});
        let proves = e.pn == 0;
        assert!(proves || e.dn == 0, "{board} decided");
        let solved = Solved {
            root,
            goal,
            proves,
            db: None,
            tree: None,
            dfpn: Some(&mut resolver),
        };
        let mut head = header(&solved, Default::default());
        head.partial = true;
        let (mut out, mut list) = (Vec::new(), Vec::new());
        let partial = Partial {
            leaf_budget: budget,
            list: &mut list,
        };
        let w = write(&mut out, &head, solved, Some(partial), None, &mut |_| {}).unwrap();
        (w, out)
    }

    /// A small table drops cheap entries all the time, as the 8-million-entry one does over a
    /// 5x9 certificate: nodes stay decided whose deciding child is gone. Searching such a node
    /// again through its children best-first finds that child in a few nodes; trying the
    /// children in move order spent the whole budget on one that does not hold (3x7: 14
    /// open leaves and 2,049,199 nodes; 7x3 within 1,000 nodes a node: 6 open leaves).
    #[test]
    fn a_decided_node_whose_deciding_child_was_dropped_is_searched_again_best_first() {
        for (board, budget, most) in [("3x7", 100_000, 10_000), ("7x3", 1_000, 2_000)] {
            let (w, out) = write_small_table(board, Color::White, 1024, budget);
            assert_eq!(w.open, 0, "{board}: {w:?}");
            assert!(w.resolve_search_nodes <= most, "{board}: {w:?}");
            let report = verify(&mut out.as_slice(), None, &mut |_| {}).unwrap();
            assert_eq!((report.nodes, report.open_leaves), (w.nodes, 0), "{board}");
            assert_eq!(report.claim, "proven");
        }
    }
}
