//! Depth-first proof-number search (df-pn, Nagai) with a transposition table.
//!
//! The graph-history problem: a position repeated on the current path is a draw, so a value
//! found for a position on one path may not hold on another. Which positions a node can
//! repeat is known exactly, though: pieces never come back, so it can only repeat positions
//! of the same material, which are the positions since the last capture on its path. The
//! table therefore keys each entry by the position *and* the set of positions since the last
//! capture (an order-free hash of them). Two nodes with equal keys have the same future and
//! the same repeatable past, so they have the same value: the table is exact, with no
//! special cases. After a capture the set is empty, so the transpositions that matter most
//! (different capture orders reaching one position) are all shared. (The set is kept as a
//! 64-bit hash, so "exact" is up to a hash collision; the independent check of every
//! solution tree would turn such a collision into a failed check, never a wrong answer.)

mod table;

use std::time::Instant;

use crate::{
    CurvePoint, Goal, INFINITE, Leaf, LeafEval, Limits, SearchResult, Stats, add, census,
    outcome_of,
};
use fanorona_rules::movegen::{has_capture, successors, successors_into};
use fanorona_rules::position::Position;
use table::Table;

/// The table's key: the position and the set of positions since the last capture before it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Key {
    pos: Position,
    since_capture: u64,
}

/// A node's proof and disproof numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub pn: u64,
    pub dn: u64,
}

impl Entry {
    /// The numbers of a decided node: proven (the attacker wins) or disproven.
    fn decided(proven: bool) -> Entry {
        if proven {
            Entry {
                pn: 0,
                dn: INFINITE,
            }
        } else {
            Entry {
                pn: INFINITE,
                dn: 0,
            }
        }
    }
}

/// The path from the root: positions, and for each the hash of the set of positions since
/// the last capture up to and including it.
#[derive(Default)]
pub struct Path {
    positions: Vec<Position>,
    sets: Vec<u64>,
}

impl Path {
    /// The positions at the path's end that `pos`, as its next position, could repeat:
    /// those since the last capture (oldest first).
    pub fn repeatable_by(&self, pos: &Position) -> &[Position] {
        let pieces = pos.piece_count();
        let kept = self
            .positions
            .iter()
            .rev()
            .take_while(|p| p.piece_count() == pieces)
            .count();
        &self.positions[self.positions.len() - kept..]
    }

    /// The key of `child` as a successor of the path's last position.
    fn key_after(&self, child: &Position) -> Key {
        let last = self.positions.last().expect("the path holds the parent");
        let set = if child.piece_count() < last.piece_count() {
            0
        } else {
            *self.sets.last().expect("one set per position")
        };
        Key {
            pos: *child,
            since_capture: set,
        }
    }

    /// Whether `child` repeats a position since the last capture (only those can repeat).
    fn repeats(&self, child: &Position) -> bool {
        fanorona_rules::repetition::occurred_before(&self.positions, child)
    }

    pub fn push(&mut self, pos: Position) {
        let before = self.positions.last().zip(self.sets.last().copied());
        let set = fanorona_rules::repetition::since_capture_key(before, &pos);
        self.positions.push(pos);
        self.sets.push(set);
    }

    pub fn pop(&mut self) {
        self.positions.pop();
        self.sets.pop();
    }
}

/// A node's working lists while `mid` runs there, reused from node to node so the search
/// allocates nothing once the deepest path has been reached.
#[derive(Default)]
struct Frame {
    successors: Vec<Position>,
    children: Vec<(Key, bool)>,
    numbers: Vec<Entry>,
}

/// A df-pn search for one goal.
pub struct DfPn<'a> {
    goal: Goal,
    leaf: LeafEval<'a>,
    /// At most `capacity` entries, the cheapest dropped when it is full.
    table: Table<Key, Entry>,
    pub stats: Stats,
    limits: Limits,
    start: Instant,
    stopped: bool,
    /// Score a repetition of the path as a win for the attacker instead of a draw. Not the
    /// rules: a stress test of a disproof (one that holds this way never relies on a
    /// repetition). Proofs found this way may rely on repetitions and do not hold.
    pub repetition_wins: bool,
    /// Frames of nodes `mid` has left, for the next ones it enters.
    spare: Vec<Frame>,
    /// Set from outside to stop the search as its limits would (a certificate writer told
    /// to give up).
    stop: Option<crate::Cancel>,
    /// One piece more than the tables hold: a new node with this many pieces whose side to
    /// move must capture is decided from its children's table values at once (see
    /// `by_captures`). `None` without tables.
    captures_into_tables: Option<u32>,
    /// The children `by_captures` probes, reused.
    probed: Vec<Position>,
}

impl<'a> DfPn<'a> {
    pub fn new(goal: Goal, leaf: LeafEval<'a>, limits: Limits, capacity: usize) -> DfPn<'a> {
        DfPn {
            goal,
            leaf,
            table: Table::new(capacity),
            stats: Stats::default(),
            limits,
            start: Instant::now(),
            stopped: false,
            repetition_wins: false,
            spare: Vec::new(),
            stop: None,
            captures_into_tables: leaf.db.map(|db| db.max_pieces_once() as u32 + 1),
            probed: Vec::new(),
        }
    }

    /// The numbers of a child that repeats its path: a draw (the attacker has not won), or
    /// under `repetition_wins` a win for the attacker.
    fn repetition(&self) -> Entry {
        Entry::decided(self.repetition_wins)
    }

    fn is_or(&self, pos: &Position) -> bool {
        pos.side_to_move() == self.goal.attacker
    }

    /// The numbers of a node not searched yet: from the table, or from its evaluation.
    fn lookup(&mut self, key: &Key, repeated: bool) -> Entry {
        if repeated {
            // A draw on this path: the attacker has not won.
            self.stats.repetitions += 1;
            return self.repetition();
        }
        if let Some(e) = self.table.get(key) {
            return e;
        }
        self.stats.nodes += 1;
        let e = match self.leaf.eval(&key.pos, self.goal, &mut self.stats) {
            Leaf::Proven => Entry::decided(true),
            Leaf::Disproven => Entry::decided(false),
            Leaf::Open => self.by_captures(&key.pos).map_or_else(
                || {
                    let (pn, dn) = self.leaf.initial(&key.pos, self.goal);
                    Entry { pn, dn }
                },
                Entry::decided,
            ),
        };
        self.table.store(*key, e, 1);
        e
    }

    /// Whether the attacker wins at `pos`, when its side to move must capture and it has one
    /// piece more than the tables hold: captures are compulsory, so every move takes at
    /// least one piece and the tables answer each child; nothing before a capture can repeat
    /// after it, so the value holds on any path. Each child probed counts as a node created,
    /// as it would be if the search expanded `pos`; `copy` still writes the children into a
    /// solution tree as table leaves, so a certificate never holds `pos` as a leaf.
    fn by_captures(&mut self, pos: &Position) -> Option<bool> {
        if Some(pos.piece_count()) != self.captures_into_tables || !has_capture(pos) {
            return None;
        }
        let mut probed = std::mem::take(&mut self.probed);
        successors_into(pos, &mut probed);
        let or = self.is_or(pos);
        let mut verdict = Some(!or);
        for child in &probed {
            self.stats.nodes += 1;
            match self.leaf.from_tables(child, self.goal) {
                None => {
                    verdict = None;
                    break;
                }
                Some(p) => {
                    self.stats.db_hits += 1;
                    if p == or {
                        // A winning capture for the attacker, or a holding one for the
                        // defender, decides the node.
                        verdict = Some(or);
                        break;
                    }
                }
            }
        }
        self.probed = probed;
        verdict
    }

    /// Multiple iterative deepening at `key` (the last position of `path`) until its numbers
    /// reach the thresholds.
    fn mid(&mut self, key: Key, th_pn: u64, th_dn: u64, path: &mut Path) -> Entry {
        self.mid_children(key, th_pn, th_dn, path, None)
    }

    /// `mid`, also leaving in `numbers` (when given) the numbers it left for each child (in
    /// `successors` order), which a full table may not hold.
    fn mid_children(
        &mut self,
        key: Key,
        th_pn: u64,
        th_dn: u64,
        path: &mut Path,
        numbers: Option<&mut Vec<Entry>>,
    ) -> Entry {
        let nodes_before = self.stats.nodes;
        let mut f = self.spare.pop().unwrap_or_default();
        path.push(key.pos);
        successors_into(&key.pos, &mut f.successors);
        f.children.clear();
        f.children.extend(
            f.successors
                .iter()
                .map(|c| (path.key_after(c), path.repeats(c))),
        );
        let or = self.is_or(&key.pos);
        f.numbers.clear();
        let created_before = self.stats.nodes;
        // Ask for every child's home slot first: their cache misses then overlap.
        for (k, _) in f.children.iter().filter(|(_, r)| !r) {
            self.table.prefetch(k);
        }
        for &(k, r) in &f.children {
            let e = self.lookup(&k, r);
            f.numbers.push(e);
        }
        census::count(&key.pos, self.stats.nodes - created_before);
        let result = loop {
            let node = combine(or, &f.numbers);
            if node.pn >= th_pn || node.dn >= th_dn || self.out_of_limits() {
                break node;
            }
            // The most proving child, and the second best for its threshold.
            let value = |e: &Entry| if or { e.pn } else { e.dn };
            let (mut best, mut second) = (0, INFINITE);
            for i in 1..f.numbers.len() {
                if value(&f.numbers[i]) < value(&f.numbers[best]) {
                    second = value(&f.numbers[best]);
                    best = i;
                } else {
                    second = second.min(value(&f.numbers[i]));
                }
            }
            if f.numbers.len() == 1 {
                second = INFINITE;
            }
            let c = f.numbers[best];
            // The 1 + epsilon trick: let the child run until it is a quarter worse than the
            // second best, not just one worse, so the search does not see-saw between them.
            let beyond_second = add(second, 1).max(second.saturating_add(second / 4).min(INFINITE));
            let (child_pn, child_dn) = if or {
                (
                    th_pn.min(beyond_second),
                    (th_dn - node.dn).saturating_add(c.dn).min(INFINITE),
                )
            } else {
                (
                    (th_pn - node.pn).saturating_add(c.pn).min(INFINITE),
                    th_dn.min(beyond_second),
                )
            };
            let (ck, repeated) = f.children[best];
            f.numbers[best] = if repeated {
                self.repetition()
            } else {
                self.stats.iterations += 1;
                self.mid(ck, child_pn, child_dn, path)
            };
        };
        // The nodes this visit created count towards the entry's worth when the table is full.
        self.table
            .store(key, result, self.stats.nodes - nodes_before);
        path.pop();
        if let Some(out) = numbers {
            out.clone_from(&f.numbers);
        }
        self.spare.push(f);
        result
    }

    /// Stops the search (as its limits would) once `flag` is set; `None` forgets it.
    pub fn stop_on(&mut self, flag: Option<crate::Cancel>) {
        self.stop = flag;
    }

    fn out_of_limits(&mut self) -> bool {
        if !self.stopped
            && (self
                .limits
                .exceeded(self.stats.nodes, self.start, self.bytes())
                || crate::cancelled(self.stop.as_ref()))
        {
            self.stopped = true;
        }
        self.stopped
    }

    /// The numbers of `pos` (the root, with no history), searched until decided or stopped.
    pub fn search(&mut self, pos: &Position, mut progress: impl FnMut(&CurvePoint)) -> Entry {
        let key = Key {
            pos: *pos,
            since_capture: 0,
        };
        let mut path = Path {
            positions: Vec::new(),
            sets: Vec::new(),
        };
        let root = self.lookup(&key, false);
        if root.pn == 0 || root.dn == 0 {
            return root;
        }
        // Each step is a point of the curve, as PN's iterations are.
        self.deepen(key, root, &mut path, |s, step, e| {
            progress(&CurvePoint {
                iteration: step,
                nodes: s.stats.nodes,
                seconds: s.start.elapsed().as_secs_f64(),
                pn: e.pn,
                dn: e.dn,
            })
        })
    }

    /// Searches `key` (after `path`; its numbers now `e`) with thresholds raised step by step,
    /// each to twice the numbers, until it is decided or the limits stop it; `each` sees the
    /// numbers after every step. Thresholds of infinity from the start would let the first
    /// child chosen be searched until decided, however costly, while a sibling may decide the
    /// node for little: a node the certificate writer needed >100 M nodes to decide that way
    /// took <1 M with steps.
    fn deepen(
        &mut self,
        key: Key,
        mut e: Entry,
        path: &mut Path,
        mut each: impl FnMut(&Self, u64, Entry),
    ) -> Entry {
        // A threshold above the numbers: twice them, or infinity once they are that large.
        let raise = |n: u64| {
            if n >= INFINITE - 1 {
                INFINITE
            } else {
                add(n, n.max(1))
            }
        };
        let mut step = 0u64;
        while e.pn != 0 && e.dn != 0 && !self.out_of_limits() {
            step += 1;
            let (before, nodes) = (e, self.stats.nodes);
            e = self.mid(key, raise(e.pn), raise(e.dn), path);
            if e == before && self.stats.nodes == nodes {
                // Nothing moved (which the thresholds above should rule out): stop rather
                // than spin; the node stays undecided.
                break;
            }
            each(self, step, e);
        }
        e
    }

    /// PN²'s second level: df-pn from `pos`, reached after `history` (oldest first), until
    /// `pos` is decided or `budget` more nodes were created. Returns the numbers this search
    /// left for each successor of `pos`, in `successors` order. The table is kept between
    /// calls: its keys carry the repeatable past, so its entries hold wherever they match.
    pub fn second_level(
        &mut self,
        pos: &Position,
        history: &[Position],
        budget: u64,
    ) -> Vec<Entry> {
        let mut path = Path {
            positions: Vec::new(),
            sets: Vec::new(),
        };
        for p in history {
            path.push(*p);
        }
        let key = if path.positions.is_empty() {
            Key {
                pos: *pos,
                since_capture: 0,
            }
        } else {
            path.key_after(pos)
        };
        self.limits = Limits {
            nodes: Some(self.stats.nodes.saturating_add(budget.max(1))),
            ..Limits::none()
        };
        self.stopped = false;
        let mut numbers = Vec::new();
        self.mid_children(key, INFINITE, INFINITE, &mut path, Some(&mut numbers));
        numbers
    }

    /// Bytes the table takes.
    pub fn bytes(&self) -> u64 {
        self.table.bytes()
    }

    /// Times the full table dropped its cheapest entries, and the entries dropped.
    pub fn table_collections(&self) -> (u64, u64) {
        (self.table.collections, self.table.dropped)
    }

    /// Searches `root` and reports: the outcome, the deciding move, the work and the curve.
    /// The table stays, for `solution`.
    pub fn result(
        &mut self,
        root: &Position,
        mut progress: impl FnMut(&CurvePoint),
    ) -> SearchResult {
        let mut curve = Vec::new();
        let e = self.search(root, |p| {
            progress(p);
            curve.push(*p);
        });
        self.stats.seconds = self.start.elapsed().as_secs_f64();
        SearchResult {
            goal: self.goal,
            outcome: outcome_of(e.pn, e.dn),
            best_move: self.best_move(root),
            stats: self.stats,
            curve,
        }
    }

    /// The deciding move at a decided root: to a proven child when the attacker moves and
    /// wins, to a disproven child when the defender moves and holds.
    pub fn best_move(&self, root: &Position) -> Option<fanorona_rules::moves::Move> {
        let or = self.is_or(root);
        fanorona_rules::moves::legal_moves(root)
            .into_iter()
            .find(|m| {
                let child = m.apply(root);
                match self.decided_child(root, &child) {
                    Some(c) if or => c.pn == 0,
                    Some(c) => c.dn == 0,
                    None => false,
                }
            })
    }

    /// The table's value for `child` reached from `parent` (a root), if decided.
    fn decided_child(&self, parent: &Position, child: &Position) -> Option<Entry> {
        // The root's set since the last capture holds the root alone.
        let since_capture = if child.piece_count() < parent.piece_count() {
            0
        } else {
            fanorona_rules::repetition::position_key(parent)
        };
        self.table.get(&Key {
            pos: *child,
            since_capture,
        })
    }
}

impl DfPn<'_> {
    /// The key and repetition of `pos` as the next position of `path`.
    fn key_on(path: &Path, pos: &Position) -> (Key, bool) {
        if path.positions.is_empty() {
            let key = Key {
                pos: *pos,
                since_capture: 0,
            };
            (key, false)
        } else {
            (path.key_after(pos), path.repeats(pos))
        }
    }

    /// What the table already knows of `pos` as the next position of `path`: its numbers if
    /// it holds them (a repetition of the path is a draw there, without a lookup).
    pub fn peek(&self, path: &Path, pos: &Position) -> Option<Entry> {
        let (key, repeated) = Self::key_on(path, pos);
        if repeated {
            return Some(self.repetition());
        }
        self.table.get(&key)
    }

    /// The value of `pos` as the next position of `path`, searched until decided (without
    /// limits) if the table does not decide it yet. Certificates use this to fill in what
    /// a search did not keep.
    pub fn decide(&mut self, path: &mut Path, pos: &Position) -> Entry {
        self.decide_within(path, pos, None)
    }

    /// `decide`, giving up once `budget` more nodes were created (the numbers it then
    /// returns leave `pos` undecided).
    pub fn decide_within(&mut self, path: &mut Path, pos: &Position, budget: Option<u64>) -> Entry {
        let (key, repeated) = Self::key_on(path, pos);
        let e = self.lookup(&key, repeated);
        if e.pn == 0 || e.dn == 0 {
            return e;
        }
        self.limits = Limits {
            nodes: budget.map(|b| self.stats.nodes.saturating_add(b.max(1))),
            ..Limits::none()
        };
        self.stopped = false;
        self.deepen(key, e, path, |_, _, _| {})
    }

    /// Df-pn from `pos` (the next position of `path`) through its children, until `pos` is
    /// decided or `budget` more nodes were created; returns each successor (in `successors`
    /// order) with the numbers the search left it. Unlike `decide_within`, `pos`'s own entry
    /// is not taken as the answer: a full table can keep a decided node and drop the cheap
    /// child that decided it (often a leaf the tables decide), and this finds that child
    /// again best-first, where trying the children one by one can sink the budget into a
    /// hard child that does not hold.
    pub fn decide_children_within(
        &mut self,
        path: &mut Path,
        pos: &Position,
        budget: Option<u64>,
    ) -> Vec<(Position, Entry)> {
        let (key, _) = Self::key_on(path, pos);
        self.limits = Limits {
            nodes: budget.map(|b| self.stats.nodes.saturating_add(b.max(1))),
            ..Limits::none()
        };
        self.stopped = false;
        let numbers = self.children_again(key, path);
        successors(pos).into_iter().zip(numbers).collect()
    }

    /// `key`'s node (the path ends at its parent) searched through its children, whatever
    /// its own entry says, until it is decided or the limits stop it: each child's numbers
    /// (in `successors` order). Stopped short, the search would leave undecided numbers over
    /// a decided entry: the decision is put back, for the node's transpositions.
    fn children_again(&mut self, key: Key, path: &mut Path) -> Vec<Entry> {
        let known = self.table.get(&key);
        let mut numbers = Vec::new();
        let e = self.mid_children(key, INFINITE, INFINITE, path, Some(&mut numbers));
        if let Some(k) = known.filter(|k| (k.pn == 0 || k.dn == 0) && e.pn != 0 && e.dn != 0) {
            self.table.store(key, k, 0);
        }
        numbers
    }

    /// The solution tree of a decided root: one move where the side that needs a single
    /// good move is to move, every move otherwise, down to leaves decided by the rules, the
    /// tables or a repetition. Children the table no longer holds as decided are searched
    /// again, with the path they have in the tree.
    pub fn solution(&mut self, root: &Position) -> Option<crate::proof::SolutionTree> {
        // Children searched again must be decided whatever limits the search had.
        self.limits = Limits::none();
        self.stopped = false;
        let key = Key {
            pos: *root,
            since_capture: 0,
        };
        let e = self.lookup(&key, false);
        let proves = if e.pn == 0 {
            true
        } else if e.dn == 0 {
            false
        } else {
            return None;
        };
        let mut tree = crate::proof::SolutionTree {
            goal: self.goal,
            proves,
            nodes: Vec::new(),
        };
        let mut path = Path {
            positions: Vec::new(),
            sets: Vec::new(),
        };
        self.copy(key, false, &mut path, &mut tree);
        Some(tree)
    }

    fn copy(
        &mut self,
        key: Key,
        repeated: bool,
        path: &mut Path,
        tree: &mut crate::proof::SolutionTree,
    ) -> usize {
        let index = tree.nodes.len();
        tree.nodes.push(crate::proof::ProofNode {
            pos: key.pos,
            children: Vec::new(),
            from_rote: false,
            from_second_level: false,
        });
        let mut scratch = Stats::default();
        if repeated || self.leaf.eval(&key.pos, self.goal, &mut scratch) != Leaf::Open {
            return index;
        }
        path.push(key.pos);
        let children: Vec<(Key, bool)> = successors(&key.pos)
            .into_iter()
            .map(|c| (path.key_after(&c), path.repeats(&c)))
            .collect();
        let wanted = |e: Entry| if tree.proves { e.pn == 0 } else { e.dn == 0 };
        let one = self.is_or(&key.pos) == tree.proves;
        let numbers: Vec<Entry> = children.iter().map(|(k, r)| self.lookup(k, *r)).collect();
        let mut picked = Vec::new();
        if one {
            // A child the table already decides the right way; else the table dropped it
            // (the node's own entry outlived it): the node searched again through its
            // children, best-first.
            let known = (0..children.len()).find(|&i| wanted(numbers[i]));
            let found = known.or_else(|| {
                path.pop();
                let again = self.children_again(key, path);
                path.push(key.pos);
                (0..children.len()).find(|&i| !children[i].1 && wanted(again[i]))
            });
            picked.extend(found.map(|i| children[i]));
        } else {
            for (i, &(k, r)) in children.iter().enumerate() {
                let e = if wanted(numbers[i]) || r {
                    numbers[i]
                } else {
                    self.mid(k, INFINITE, INFINITE, path)
                };
                if !wanted(e) {
                    // Every move must hold and this one does not: no solution tree here.
                    picked.clear();
                    break;
                }
                picked.push((k, r));
            }
        }
        let mut indices = Vec::new();
        for (k, r) in picked {
            indices.push(self.copy(k, r, path, tree));
        }
        path.pop();
        tree.nodes[index].children = indices;
        index
    }
}

/// The node's numbers from its children's entries.
fn combine(or: bool, children: &[Entry]) -> Entry {
    let (pn, dn) = crate::combine(or, children.iter().map(|c| (c.pn, c.dn)));
    Entry { pn, dn }
}

/// Runs df-pn for `goal` from `root`; `capacity` bounds the table's entries.
pub fn solve(
    root: &Position,
    goal: Goal,
    leaf: LeafEval<'_>,
    limits: Limits,
    capacity: usize,
    progress: impl FnMut(&CurvePoint),
) -> SearchResult {
    DfPn::new(goal, leaf, limits, capacity).result(root, progress)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proof::check;
    use fanorona_rules::position::Color;

    /// The solution of a df-pn search whose small table dropped, as it went, children that
    /// decided nodes it kept: each such node is searched again through its children,
    /// best-first (3x7 with 1,024 entries: 1,982 more nodes). Trying the children one by one
    /// in move order did not finish 3x7 in minutes.
    #[test]
    fn a_solution_finds_the_deciding_children_a_small_table_dropped() {
        for (board, capacity) in [("3x7", 1024), ("7x3", 256)] {
            let root = Position::initial(board.parse().unwrap());
            let goal = Goal {
                attacker: Color::White,
            };
            let mut d = DfPn::new(goal, LeafEval::new(None), Limits::none(), capacity);
            assert_eq!(d.search(&root, |_| {}).pn, 0, "{board}: White wins");
            let before = d.stats.nodes;
            let tree = d.solution(&root).unwrap();
            check(&tree, None).unwrap();
            assert!(
                d.stats.nodes - before < 20_000,
                "{board}: {}",
                d.stats.nodes - before
            );
        }
    }
}
