//! Proof-number search (Allis) and PN² as Schadd et al. (2008) used it.
//!
//! The tree lives in one vector. A node is an OR node when the attacker is to move. A child
//! that repeats a position of its path (the tree's ancestors and the game before the root) is
//! a draw there: the attacker has not won. In a tree every node has exactly one path, so this
//! is exact (no graph-history problem; the transposition-table solvers must take care).
//!
//! PN²: each expansion of the first-level tree runs a second-level PN search from the leaf,
//! bounded by the size of the first-level tree; the second-level root's children, with their
//! numbers, become the leaf's children, and the rest of the second-level tree is discarded.

use std::time::Instant;

use crate::census;
use crate::dfpn::DfPn;
use crate::rote::{Rote, RoteKey};
use crate::{
    Algorithm, CurvePoint, Goal, INFINITE, Leaf, LeafEval, Limits, Outcome, SearchResult,
    SecondLevel, Stats, combine, outcome_of,
};
use fanorona_rules::movegen::successors;
use fanorona_rules::position::Position;
use fanorona_rules::repetition::{position_hash, since_capture, since_capture_of};

/// The parent of the root.
pub const NO_PARENT: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub pos: Position,
    pub pn: u64,
    pub dn: u64,
    pub parent: u32,
    /// Children are `first .. first + count`; `expanded` tells a leaf from a node whose
    /// children were generated.
    pub first: u32,
    pub count: u32,
    pub expanded: bool,
    /// Decided as a leaf: the end of the game, a table, or a repetition.
    pub leaf: Leaf,
    /// A draw by repetition of its path.
    pub repetition: bool,
    /// Decided by the rote store (its subtree was searched elsewhere).
    pub rote: bool,
    /// Order-free hash of the positions since the last capture, this one included.
    pub since: u64,
}

impl Node {
    pub fn proven(&self) -> bool {
        self.pn == 0
    }

    pub fn disproven(&self) -> bool {
        self.dn == 0
    }
}

/// A PN search tree for one goal.
pub struct PnTree<'a> {
    pub goal: Goal,
    leaf: LeafEval<'a>,
    /// Positions of the game before the root, oldest first.
    history: Vec<Position>,
    pub nodes: Vec<Node>,
    pub stats: Stats,
    /// Solved positions to consult before searching a new node.
    rote: Option<&'a dyn Rote>,
    /// PN²: how large a second-level search may grow (the paper's bound by default: the
    /// first-level tree's size).
    pub second_level: SecondLevel,
    /// PN² with df-pn at the second level: entries its table keeps at most (see
    /// `second_level_entries`).
    pub second_level_table: usize,
    /// PN² with df-pn at the second level: its table, kept across iterations.
    dfpn: Option<Box<DfPn<'a>>>,
    /// The second table, for the second of two leaves expanded at once (`iterate_pair`).
    dfpn2: Option<Box<DfPn<'a>>>,
}

impl<'a> PnTree<'a> {
    /// A tree of one node, `root`, evaluated; `history` is the game before it.
    pub fn new(root: Position, goal: Goal, leaf: LeafEval<'a>, history: Vec<Position>) -> Self {
        PnTree::with_rote(root, goal, leaf, history, None)
    }

    /// `new`, consulting `rote` before searching any node (the root included).
    pub fn with_rote(
        root: Position,
        goal: Goal,
        leaf: LeafEval<'a>,
        history: Vec<Position>,
        rote: Option<&'a dyn Rote>,
    ) -> Self {
        let mut t = PnTree {
            goal,
            leaf,
            history,
            nodes: Vec::new(),
            stats: Stats::default(),
            rote,
            second_level: SecondLevel::TreeSize,
            second_level_table: DFPN_SECOND_LEVEL_TABLE,
            dfpn: None,
            dfpn2: None,
        };
        let repeated = fanorona_rules::repetition::occurred_before(&t.history, &root);
        let node = t.evaluated(root, NO_PARENT, repeated, None);
        t.nodes.push(node);
        t
    }

    /// A tree rebuilt from its parts (as a checkpoint saved them).
    pub fn from_parts(
        goal: Goal,
        leaf: LeafEval<'a>,
        history: Vec<Position>,
        nodes: Vec<Node>,
        stats: Stats,
        rote: Option<&'a dyn Rote>,
    ) -> Self {
        PnTree {
            goal,
            leaf,
            history,
            nodes,
            stats,
            rote,
            second_level: SecondLevel::TreeSize,
            second_level_table: DFPN_SECOND_LEVEL_TABLE,
            dfpn: None,
            dfpn2: None,
        }
    }

    /// The nodes of `n`'s subtree as a tree of their own, `n` first (children stay in
    /// contiguous blocks after their parent, as `from_parts` takes them).
    pub fn subtree(&self, n: usize) -> Vec<Node> {
        let mut out = vec![Node {
            parent: NO_PARENT,
            ..self.nodes[n]
        }];
        let mut from = vec![n];
        let mut i = 0;
        while i < out.len() {
            let node = self.nodes[from[i]];
            if node.expanded {
                out[i].first = out.len() as u32;
                for c in node.first..node.first + node.count {
                    out.push(Node {
                        parent: i as u32,
                        ..self.nodes[c as usize]
                    });
                    from.push(c as usize);
                }
            }
            i += 1;
        }
        out
    }

    /// Mends numbers that look decided without being so (pn infinite with dn not 0, or the
    /// reverse), which df-pn's second level could leave on leaves before its sums stopped
    /// below infinity: such a leaf gets its first numbers again, and
    /// every expanded node is recomputed from its children. Returns the nodes changed.
    pub fn repair_saturated(&mut self) -> Vec<usize> {
        let bad = |n: &Node| (n.pn >= INFINITE && n.dn != 0) || (n.dn >= INFINITE && n.pn != 0);
        let mut changed = Vec::new();
        for i in 0..self.nodes.len() {
            let n = self.nodes[i];
            if !n.expanded && n.leaf == Leaf::Open && !n.repetition && !n.rote && bad(&n) {
                (self.nodes[i].pn, self.nodes[i].dn) = self.leaf.initial(&n.pos, self.goal);
                changed.push(i);
            }
        }
        if changed.is_empty() && !self.nodes.iter().any(bad) {
            return changed;
        }
        // Children come after their parents: recompute from the last node back.
        for i in (0..self.nodes.len()).rev() {
            let before = (self.nodes[i].pn, self.nodes[i].dn);
            self.set_numbers(i);
            if (self.nodes[i].pn, self.nodes[i].dn) != before {
                changed.push(i);
            }
        }
        changed.sort_unstable();
        changed.dedup();
        changed
    }

    /// Takes what the rote store learned since this tree was last searched (another session
    /// proving a position this tree holds, under the same positions since the last capture):
    /// every reachable undecided node the store knows becomes a rote leaf (an expanded one
    /// drops its subtree, left unreachable in the vector), and the numbers above it are
    /// recomputed. Returns the nodes changed, ancestors included.
    pub fn adopt_rote(&mut self) -> Vec<usize> {
        let Some(rote) = self.rote else {
            return Vec::new();
        };
        self.adopt(
            |tree, i| rote.lookup(&tree.rote_key(i)),
            |tree, i| {
                tree.nodes[i].rote = true;
                tree.stats.rote_hits += 1;
            },
        )
    }

    /// Takes what the tables now decide: a tree searched over smaller tables and moved onto
    /// larger ones (`session tune --db`) holds open nodes the new tables decide, whose old
    /// numbers would steer the search until each happened to be expanded. Each becomes a
    /// table leaf (an expanded one drops its subtree) and the numbers above it are
    /// recomputed. Returns the nodes changed, ancestors included.
    pub fn adopt_tables(&mut self) -> Vec<usize> {
        // The tables alone: what the rules decide (a side without a move) was decided when
        // the node was made, and does not change. A probe of a slice not built is a lookup.
        let (leaf, goal) = (self.leaf, self.goal);
        if leaf.db.is_none() {
            return Vec::new();
        }
        self.adopt(
            |tree, i| leaf.from_tables(&tree.nodes[i].pos, goal),
            |tree, i| {
                let node = &mut tree.nodes[i];
                node.leaf = if node.pn == 0 {
                    Leaf::Proven
                } else {
                    Leaf::Disproven
                };
            },
        )
    }

    /// Every reachable undecided node that `known` decides (`Some(proven)`) becomes a leaf
    /// with that value, marked by `mark`; the numbers above are recomputed. Returns the
    /// nodes changed, ancestors included.
    fn adopt(
        &mut self,
        mut known: impl FnMut(&Self, usize) -> Option<bool>,
        mark: impl Fn(&mut Self, usize),
    ) -> Vec<usize> {
        let mut reachable = vec![false; self.nodes.len()];
        reachable[0] = true;
        let mut adopted = Vec::new();
        // Parents come before their children, so a node is reached before its subtree.
        for i in 0..self.nodes.len() {
            if !reachable[i] {
                continue;
            }
            let n = self.nodes[i];
            let open = n.pn != 0 && n.dn != 0 && !n.repetition && n.leaf == Leaf::Open;
            if open && let Some(proven) = known(self, i) {
                let node = &mut self.nodes[i];
                (node.pn, node.dn) = if proven { (0, INFINITE) } else { (INFINITE, 0) };
                node.expanded = false;
                node.first = 0;
                node.count = 0;
                mark(self, i);
                adopted.push(i);
                continue;
            }
            // Below a decided node nothing matters: its proof is kept as it is.
            if n.expanded && open {
                for c in n.first..n.first + n.count {
                    reachable[c as usize] = true;
                }
            }
        }
        let mut changed = Vec::new();
        for &i in &adopted {
            let mut j = i as u32;
            while j != NO_PARENT {
                changed.push(j as usize);
                j = self.nodes[j as usize].parent;
            }
            self.update_ancestors(i);
        }
        changed.sort_unstable();
        changed.dedup();
        changed
    }

    /// Bytes the tree's nodes take, with its second-level df-pn table if it has one.
    pub fn bytes(&self) -> u64 {
        (self.nodes.capacity() * std::mem::size_of::<Node>()) as u64
            + self.dfpn.as_ref().map_or(0, |d| d.bytes())
            + self.dfpn2.as_ref().map_or(0, |d| d.bytes())
    }

    /// The game before the root, oldest first.
    pub fn history(&self) -> &[Position] {
        &self.history
    }

    /// The rote key of node `n`: its position and the positions it can repeat.
    pub fn rote_key(&self, n: usize) -> RoteKey {
        let node = &self.nodes[n];
        RoteKey::new(node.pos, node.since ^ position_hash(&node.pos), self.goal)
    }

    /// How the tree sets the first numbers of its leaves.
    pub fn leaf_init(&self) -> crate::Init {
        self.leaf.init
    }

    pub fn root(&self) -> &Node {
        &self.nodes[0]
    }

    /// OR node: the attacker is to move.
    #[inline]
    pub fn is_or(&self, n: usize) -> bool {
        self.nodes[n].pos.side_to_move() == self.goal.attacker
    }

    /// A new node for `pos`: its leaf kind, and its first numbers if it is open; `searched`
    /// are numbers a search already gave it (its own count of them, the mobility walk that
    /// was most of a master's time a job, is skipped then).
    fn evaluated(
        &mut self,
        pos: Position,
        parent: u32,
        repeated: bool,
        searched: Option<(u64, u64)>,
    ) -> Node {
        let since = if parent == NO_PARENT {
            let mut path = self.history.clone();
            path.push(pos);
            since_capture_of(&path)
        } else {
            let p = &self.nodes[parent as usize];
            since_capture(Some((&p.pos, p.since)), &pos)
        };
        let leaf = if repeated {
            self.stats.repetitions += 1;
            Leaf::Disproven
        } else {
            self.leaf.eval(&pos, self.goal, &mut self.stats)
        };
        // The root is looked up at once; other nodes when they are about to be expanded.
        let known = match (leaf, self.rote) {
            (Leaf::Open, Some(rote)) if parent == NO_PARENT => {
                let key = RoteKey::new(pos, since ^ position_hash(&pos), self.goal);
                rote.lookup(&key)
            }
            _ => None,
        };
        if known.is_some() {
            self.stats.rote_hits += 1;
        }
        let (pn, dn) = match leaf {
            _ if known == Some(true) => (0, INFINITE),
            _ if known == Some(false) => (INFINITE, 0),
            Leaf::Proven => (0, INFINITE),
            Leaf::Disproven => (INFINITE, 0),
            Leaf::Open => searched.unwrap_or_else(|| self.leaf.initial(&pos, self.goal)),
        };
        Node {
            pos,
            pn,
            dn,
            parent,
            first: 0,
            count: 0,
            expanded: false,
            leaf,
            repetition: repeated,
            rote: known.is_some(),
            since,
        }
    }

    /// The positions on the path to `n` (the game before the root, then the tree's
    /// ancestors, `n` included), oldest first.
    pub fn path(&self, n: usize) -> Vec<Position> {
        let mut p = Vec::new();
        let mut i = n as u32;
        while i != NO_PARENT {
            p.push(self.nodes[i as usize].pos);
            i = self.nodes[i as usize].parent;
        }
        p.reverse();
        let mut all = self.history.clone();
        all.extend(p);
        all
    }

    /// Whether `pos` occurred on the path to `n`, `n` included.
    fn repeats(&self, n: usize, pos: &Position) -> bool {
        let pieces = pos.piece_count();
        let mut i = n as u32;
        while i != NO_PARENT {
            let p = &self.nodes[i as usize].pos;
            if p.piece_count() != pieces {
                // Pieces never come back: nothing earlier can repeat.
                return false;
            }
            if p == pos {
                return true;
            }
            i = self.nodes[i as usize].parent;
        }
        fanorona_rules::repetition::occurred_before(&self.history, pos)
    }

    /// From the root, the child with the smallest proof number at OR nodes and the smallest
    /// disproof number at AND nodes, down to a leaf.
    pub fn select_most_proving(&self) -> usize {
        let mut n = 0;
        while self.nodes[n].expanded {
            let node = &self.nodes[n];
            let children = node.first as usize..(node.first + node.count) as usize;
            n = if self.is_or(n) {
                children.min_by_key(|&c| self.nodes[c].pn)
            } else {
                children.min_by_key(|&c| self.nodes[c].dn)
            }
            .expect("an expanded open node has children");
        }
        n
    }

    /// Generates and evaluates the children of leaf `n` (each distinct position once).
    pub fn expand(&mut self, n: usize) {
        if self.decide_by_rote(n) {
            return;
        }
        let children: Vec<Node> = successors(&self.nodes[n].pos)
            .into_iter()
            .map(|c| {
                let repeated = self.repeats(n, &c);
                self.evaluated(c, n as u32, repeated, None)
            })
            .collect();
        self.attach(n, children);
    }

    /// What a second-level search from leaf `n` starts from: its position, the positions
    /// before it (the game, then its ancestors) and its node budget.
    pub(crate) fn second_level_start(&self, n: usize) -> (Position, Vec<Position>, u64) {
        let budget = self.second_level.budget(self.nodes.len() as u64);
        let mut history = self.path(n);
        let pos = history.pop().expect("the path ends at the node");
        (pos, history, budget)
    }

    /// Before leaf `n` is expanded: if the rote store knows it, it is decided without search.
    pub fn decide_by_rote(&mut self, n: usize) -> bool {
        let Some(rote) = self.rote else { return false };
        let Some(proven) = rote.lookup(&self.rote_key(n)) else {
            return false;
        };
        self.stats.rote_hits += 1;
        let node = &mut self.nodes[n];
        (node.pn, node.dn) = if proven { (0, INFINITE) } else { (INFINITE, 0) };
        node.rote = true;
        true
    }

    /// Makes `children` the children of `n`.
    fn attach(&mut self, n: usize, children: Vec<Node>) {
        self.stats.nodes += created(&children);
        census::count(&self.nodes[n].pos, created(&children));
        let first = self.nodes.len() as u32;
        let count = children.len() as u32;
        self.nodes.extend(children);
        let node = &mut self.nodes[n];
        node.first = first;
        node.count = count;
        node.expanded = true;
        self.set_numbers(n);
    }

    /// Recomputes the numbers of an expanded node from its children. OR: pn = min, dn = sum;
    /// AND: pn = sum, dn = min.
    fn set_numbers(&mut self, n: usize) {
        let node = self.nodes[n];
        if !node.expanded {
            // A leaf keeps its own numbers (set when it was created or looked up).
            return;
        }
        let children = &self.nodes[node.first as usize..(node.first + node.count) as usize];
        let (pn, dn) = combine(self.is_or(n), children.iter().map(|c| (c.pn, c.dn)));
        self.nodes[n].pn = pn;
        self.nodes[n].dn = dn;
    }

    /// Updates `n` and its ancestors after `n` changed.
    pub fn update_ancestors(&mut self, n: usize) {
        let mut i = n as u32;
        while i != NO_PARENT {
            self.set_numbers(i as usize);
            i = self.nodes[i as usize].parent;
        }
    }

    pub fn decided(&self) -> bool {
        self.root().proven() || self.root().disproven()
    }

    pub fn outcome(&self) -> Outcome {
        outcome_of(self.root().pn, self.root().dn)
    }

    /// The search's result: the outcome, the move to the deciding child, the work and
    /// `curve`.
    pub fn result(&self, curve: Vec<CurvePoint>) -> SearchResult {
        let root = self.root().pos;
        let best_move = self.deciding_child().and_then(|child| {
            fanorona_rules::moves::legal_moves(&root)
                .into_iter()
                .find(|m| m.apply(&root) == child)
        });
        SearchResult {
            goal: self.goal,
            outcome: self.outcome(),
            best_move,
            stats: self.stats,
            curve,
        }
    }

    /// The root's child that decides it for the side to move: a proven child at a proven
    /// OR root, a disproven child at a disproven AND root.
    pub fn deciding_child(&self) -> Option<Position> {
        let root = self.root();
        if !root.expanded {
            return None;
        }
        let children = &self.nodes[root.first as usize..(root.first + root.count) as usize];
        match (self.is_or(0), self.outcome()) {
            (true, Outcome::Proven) => children.iter().find(|c| c.proven()).map(|c| c.pos),
            (false, Outcome::Disproven) => children.iter().find(|c| c.disproven()).map(|c| c.pos),
            _ => None,
        }
    }
}

/// Nodes created among `children`: every child but those that repeat their path (a
/// repetition is counted in `Stats::repetitions` instead, as df-pn counts it).
fn created(children: &[Node]) -> u64 {
    children.iter().filter(|c| !c.repetition).count() as u64
}

/// Runs PN or PN² for `goal` from `root` until it is decided or `limits` run out; returns
/// the (first-level) tree and the root's curve. `progress` sees each curve point.
///
/// Panics with `Algorithm::DfPn`, which builds no first-level tree (see `iterate`).
pub fn search<'a>(
    root: &Position,
    goal: Goal,
    leaf: LeafEval<'a>,
    algorithm: Algorithm,
    limits: Limits,
    progress: impl FnMut(&CurvePoint),
) -> (PnTree<'a>, Vec<CurvePoint>) {
    let mut tree = PnTree::new(*root, goal, leaf, Vec::new());
    let curve = run(&mut tree, algorithm, limits, progress);
    (tree, curve)
}

/// Iterates `tree` (PN or PN² by `algorithm`) until it is decided or `limits` run out; returns
/// the root's curve. `progress` sees each curve point.
pub fn run(
    tree: &mut PnTree<'_>,
    algorithm: Algorithm,
    limits: Limits,
    mut progress: impl FnMut(&CurvePoint),
) -> Vec<CurvePoint> {
    let start = Instant::now();
    let mut curve = Vec::new();
    while !tree.decided() && !limits.exceeded(tree.stats.nodes, start, tree.bytes()) {
        iterate(tree, algorithm);
        // PN² records every first-level iteration; PN, which has many more, a sample.
        let record = algorithm != Algorithm::Pn
            || tree.stats.iterations.is_power_of_two()
            || tree.stats.iterations.is_multiple_of(4096);
        if record || tree.decided() {
            let point = CurvePoint {
                iteration: tree.stats.iterations,
                nodes: tree.stats.nodes,
                seconds: start.elapsed().as_secs_f64(),
                pn: tree.root().pn,
                dn: tree.root().dn,
            };
            progress(&point);
            curve.push(point);
        }
    }
    tree.stats.seconds = start.elapsed().as_secs_f64();
    curve
}

/// One iteration: the most-proving leaf is expanded (by `algorithm`) and its ancestors
/// updated. Returns the expanded node; the nodes changed are it, its ancestors and its new
/// children.
///
/// Panics with `Algorithm::DfPn`: df-pn builds no first-level tree (`dfpn::DfPn` runs it),
/// and every caller chooses a first-level algorithm (`Algorithm::has_first_level`).
pub fn iterate(tree: &mut PnTree<'_>, algorithm: Algorithm) -> usize {
    let n = tree.select_most_proving();
    match algorithm {
        Algorithm::Pn => tree.expand(n),
        Algorithm::Pn2 => expand_by_second_level(tree, n),
        Algorithm::Pn2DfPn => expand_by_dfpn(tree, n),
        Algorithm::DfPn => panic!("df-pn builds no first-level tree: run it with dfpn::DfPn"),
    }
    tree.update_ancestors(n);
    tree.stats.iterations += 1;
    n
}

/// `search`, reduced to its result: the outcome, the deciding move and the work done.
pub fn solve(
    root: &Position,
    goal: Goal,
    leaf: LeafEval<'_>,
    algorithm: Algorithm,
    limits: Limits,
    progress: impl FnMut(&CurvePoint),
) -> SearchResult {
    let (tree, curve) = search(root, goal, leaf, algorithm, limits, progress);
    tree.result(curve)
}

/// PN²'s expansion of first-level leaf `n`: a second-level PN search from it, bounded by the
/// first-level tree's size; its root's children (with their numbers) are kept.
pub(crate) fn expand_by_second_level(tree: &mut PnTree<'_>, n: usize) {
    if tree.decide_by_rote(n) {
        return;
    }
    let (pos, history, limit) = tree.second_level_start(n);
    let mut second = PnTree::with_rote(pos, tree.goal, tree.leaf, history, tree.rote);
    // At least one expansion, so the first level always grows.
    loop {
        let m = second.select_most_proving();
        second.expand(m);
        second.update_ancestors(m);
        if second.decided() || second.stats.nodes >= limit {
            break;
        }
    }
    let root = second.nodes[0];
    let kept = &second.nodes[root.first as usize..(root.first + root.count) as usize];
    // `attach` below counts the kept children again.
    tree.stats.nodes += second.stats.nodes - created(kept);
    census::uncount(&pos, created(kept));
    tree.stats.db_hits += second.stats.db_hits;
    tree.stats.repetitions += second.stats.repetitions;
    tree.stats.rote_hits += second.stats.rote_hits;
    if !root.expanded {
        // Decided without children (the rote store knew it): so is the first-level leaf.
        let node = &mut tree.nodes[n];
        (node.pn, node.dn, node.rote) = (root.pn, root.dn, root.rote);
        return;
    }
    let children: Vec<Node> = second.nodes[root.first as usize..(root.first + root.count) as usize]
        .iter()
        .map(|c| Node {
            parent: n as u32,
            first: 0,
            count: 0,
            expanded: false,
            ..*c
        })
        .collect();
    tree.attach(n, children);
}

/// Entries the second-level df-pn table keeps by default (the cheapest go when it is full):
/// 4 M, in 8 M slots of 64 bytes, 512 MiB.
pub const DFPN_SECOND_LEVEL_TABLE: usize = 4_000_000;

/// Entries a second-level df-pn table of at most `bytes` keeps: its slots are a power of two
/// of 64 bytes, filled to the default's share (4 M entries in 8 M slots, 512 MiB), where
/// probes stay short.
pub fn second_level_entries(bytes: u64) -> usize {
    let slots = (bytes / 64).max(2);
    let slots = 1u64 << (63 - slots.leading_zeros());
    (slots as u128 * DFPN_SECOND_LEVEL_TABLE as u128 / (8u128 << 20)).max(2) as usize
}

/// PN²'s expansion of first-level leaf `n` by df-pn: a bounded df-pn search from it (the
/// same bound as the PN second level); the leaf's children get the numbers it left them.
pub(crate) fn expand_by_dfpn(tree: &mut PnTree<'_>, n: usize) {
    if tree.decide_by_rote(n) {
        return;
    }
    let (pos, history, budget) = tree.second_level_start(n);
    let mut dfpn = tree.dfpn.take().unwrap_or_else(|| second_level_table(tree));
    let before = dfpn.stats;
    let entries = dfpn.second_level(&pos, &history, budget);
    attach_dfpn(tree, n, &pos, &entries, before, dfpn.stats);
    tree.dfpn = Some(dfpn);
}

fn second_level_table<'a>(tree: &PnTree<'a>) -> Box<DfPn<'a>> {
    Box::new(DfPn::new(
        tree.goal,
        tree.leaf,
        Limits::none(),
        tree.second_level_table,
    ))
}

/// Gives leaf `n` (at `pos`) its children, with the numbers a df-pn search left them
/// (`entries`, in `successors` order); `before` and `after` are that search's counts.
fn attach_dfpn(
    tree: &mut PnTree<'_>,
    n: usize,
    pos: &Position,
    entries: &[crate::dfpn::Entry],
    before: Stats,
    after: Stats,
) {
    attach_searched(tree, n, pos, entries, Work::between(before, after));
}

/// What one second-level search did: nodes created, table leaves and repetitions met.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Work {
    pub nodes: u64,
    pub db_hits: u64,
    pub repetitions: u64,
}

impl Work {
    /// The work of a search whose counts went from `before` to `after`.
    pub fn between(before: Stats, after: Stats) -> Work {
        Work {
            nodes: after.nodes - before.nodes,
            db_hits: after.db_hits - before.db_hits,
            repetitions: after.repetitions - before.repetitions,
        }
    }
}

/// `attach_dfpn` with the search's work given as such.
pub(crate) fn attach_searched(
    tree: &mut PnTree<'_>,
    n: usize,
    pos: &Position,
    entries: &[crate::dfpn::Entry],
    work: Work,
) {
    // df-pn counted the nodes it created, the leaf's new children among them; `attach` below
    // counts all the children, so as many are taken off here.
    let created = work.nodes;
    tree.stats.db_hits += work.db_hits;
    tree.stats.repetitions += work.repetitions;
    // The children's leaf kinds, without counting their table hits and repetitions again.
    let counted = (tree.stats.db_hits, tree.stats.repetitions);
    let children: Vec<Node> = successors(pos)
        .into_iter()
        .zip(entries)
        .map(|(c, e)| {
            let repeated = tree.repeats(n, &c);
            tree.evaluated(c, n as u32, repeated, Some((e.pn, e.dn)))
        })
        .collect();
    (tree.stats.db_hits, tree.stats.repetitions) = counted;
    tree.stats.nodes += created.saturating_sub(self::created(&children));
    // df-pn counted the children it created; `attach` counts them all.
    census::uncount(pos, created.min(self::created(&children)));
    tree.attach(n, children);
}

/// Two iterations of PN² with df-pn at once, on two threads (job-level proof-number
/// search, Wu et al.): the most-proving leaf is chosen, then taken out of the choice by
/// virtual numbers (both near infinity, so neither a proof nor a disproof is sought there)
/// while a second leaf is chosen; each gets its own df-pn search and table, in parallel;
/// then both are attached. Returns the leaves expanded (one when no second leaf can be
/// chosen, or the rote store decided one).
pub fn iterate_pair(tree: &mut PnTree<'_>) -> Vec<usize> {
    let n1 = tree.select_most_proving();
    if tree.decide_by_rote(n1) {
        tree.update_ancestors(n1);
        tree.stats.iterations += 1;
        return vec![n1];
    }
    let saved = (tree.nodes[n1].pn, tree.nodes[n1].dn);
    (tree.nodes[n1].pn, tree.nodes[n1].dn) = (INFINITE - 1, INFINITE - 1);
    tree.update_ancestors(n1);
    let n2 = tree.select_most_proving();
    (tree.nodes[n1].pn, tree.nodes[n1].dn) = saved;
    tree.update_ancestors(n1);
    if n2 == n1 || tree.nodes[n2].expanded || tree.decided() {
        return vec![iterate(tree, Algorithm::Pn2DfPn)];
    }
    if tree.decide_by_rote(n2) {
        tree.update_ancestors(n2);
        expand_by_dfpn(tree, n1);
        tree.update_ancestors(n1);
        tree.stats.iterations += 2;
        return vec![n1, n2];
    }
    let (p1, h1, b1) = tree.second_level_start(n1);
    let (p2, h2, b2) = tree.second_level_start(n2);
    let mut d1 = tree.dfpn.take().unwrap_or_else(|| second_level_table(tree));
    let mut d2 = tree
        .dfpn2
        .take()
        .unwrap_or_else(|| second_level_table(tree));
    let (s1, s2) = (d1.stats, d2.stats);
    let (e1, e2) = std::thread::scope(|s| {
        let other = s.spawn(|| d2.second_level(&p2, &h2, b2));
        let e1 = d1.second_level(&p1, &h1, b1);
        (
            e1,
            other.join().expect("a second-level search does not panic"),
        )
    });
    attach_dfpn(tree, n1, &p1, &e1, s1, d1.stats);
    attach_dfpn(tree, n2, &p2, &e2, s2, d2.stats);
    tree.dfpn = Some(d1);
    tree.dfpn2 = Some(d2);
    tree.update_ancestors(n1);
    tree.update_ancestors(n2);
    tree.stats.iterations += 2;
    vec![n1, n2]
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_second_level_table_fits_its_bytes_at_the_defaults_fill() {
        assert_eq!(second_level_entries(512 << 20), DFPN_SECOND_LEVEL_TABLE);
        assert_eq!(second_level_entries(4 << 30), 8 * DFPN_SECOND_LEVEL_TABLE);
        // A size between powers of two gets the smaller one's table.
        assert_eq!(second_level_entries(768 << 20), DFPN_SECOND_LEVEL_TABLE);
        assert_eq!(second_level_entries(1 << 20), 7812);
        for bytes in [1u64 << 20, 3 << 20, 100 << 20, 512 << 20, 5 << 30] {
            let entries = second_level_entries(bytes);
            // The slots a table of that many entries grows to: three quarters full at most.
            let slots = (entries + entries / 3 + 1).next_power_of_two() as u64;
            assert!(
                slots * 64 <= bytes,
                "{bytes}: {entries} entries in {slots} slots"
            );
            assert!(slots * 64 * 2 > bytes, "{bytes}: {slots} slots waste half");
        }
    }
    use super::*;
    use fanorona_rules::position::Color;

    #[test]
    fn numbers_that_look_decided_without_being_so_are_mended() {
        let root = Position::initial("5x5".parse().unwrap());
        let goal = Goal {
            attacker: Color::White,
        };
        let mut tree = PnTree::new(root, goal, LeafEval::rules_only(), Vec::new());
        tree.expand(0);
        tree.update_ancestors(0);
        let good = tree.clone_numbers();
        // A leaf as an old second level could leave it: pn infinite, dn 7.
        let leaf = tree.nodes[0].first as usize;
        (tree.nodes[leaf].pn, tree.nodes[leaf].dn) = (INFINITE, 7);
        tree.update_ancestors(leaf);
        assert_ne!(tree.clone_numbers(), good);
        let changed = tree.repair_saturated();
        assert!(
            changed.contains(&leaf) && changed.contains(&0),
            "{changed:?}"
        );
        assert_eq!(tree.clone_numbers(), good);
        assert!(tree.repair_saturated().is_empty());
    }

    #[test]
    fn a_tree_moved_onto_tables_takes_what_they_decide() {
        use fanorona_tables::{BuildOptions, Database, build};
        let dir = tempfile::tempdir().unwrap();
        let board: fanorona_rules::geometry::Board = "3x5".parse().unwrap();
        let options = BuildOptions {
            threads: 2,
            progress: false,
            distances: false,
            report_every: None,
            index: fanorona_tables::scheme::Scheme::Paper,
            checkpoint_every: None,
        };
        build(dir.path(), board, 4, &options, &mut |_| {}).unwrap();
        let db = Database::open_whole(dir.path(), board).unwrap();
        // Eight pieces: Black wins, through captures down to the tables' four.
        let root: Position = "BB.BB/..W../W.W.W w".parse().unwrap();
        let goal = Goal {
            attacker: Color::Black,
        };
        // Searched a while with no tables, as a session over smaller ones would have.
        let mut tree = PnTree::new(root, goal, LeafEval::rules_only(), Vec::new());
        for _ in 0..300 {
            let m = tree.select_most_proving();
            tree.expand(m);
            tree.update_ancestors(m);
        }
        assert!(!tree.decided());
        let (nodes, stats) = (tree.nodes.clone(), tree.stats);
        let was_expanded: Vec<bool> = nodes.iter().map(|n| n.expanded).collect();
        let leaf = LeafEval::with_db(&db);
        let mut tree = PnTree::from_parts(goal, leaf, Vec::new(), nodes, stats, None);
        let changed = tree.adopt_tables();
        assert!(changed.contains(&0), "{changed:?}");
        let mut scratch = Stats::default();
        let mut adopted = 0;
        for i in 0..tree.nodes.len() {
            let n = tree.nodes[i];
            if n.leaf == Leaf::Open || !changed.contains(&i) {
                continue;
            }
            adopted += 1;
            assert!(!n.expanded && (n.proven() || n.disproven()));
            assert_eq!(leaf.eval(&n.pos, goal, &mut scratch), n.leaf, "node {i}");
            assert_eq!(n.leaf == Leaf::Proven, n.proven());
        }
        assert!(adopted > 0);
        assert!(
            (0..tree.nodes.len()).any(|i| was_expanded[i] && changed.contains(&i) && {
                let n = tree.nodes[i];
                n.leaf != Leaf::Open && !n.expanded
            }),
            "an expanded node the tables decide drops its subtree"
        );
        assert!(tree.adopt_tables().is_empty(), "nothing more to take");
        // It goes on to the answer a search over the tables from the start finds, checked.
        while !tree.decided() {
            let m = tree.select_most_proving();
            tree.expand(m);
            tree.update_ancestors(m);
        }
        assert!(tree.root().proven());
        let proof = crate::solution::extract(&tree, leaf).expect("a solution tree");
        assert!(crate::proof::check(&proof, Some(&db)).is_ok());
    }

    #[test]
    fn two_leaves_at_a_time_reach_the_same_answers_with_checked_proofs() {
        for board in ["3x7", "7x3", "5x3", "3x5"] {
            let root = Position::initial(board.parse().unwrap());
            for attacker in [Color::White, Color::Black] {
                let goal = Goal { attacker };
                let leaf = LeafEval::rules_only();
                let single = solve(
                    &root,
                    goal,
                    leaf,
                    Algorithm::Pn2DfPn,
                    Limits::none(),
                    |_| {},
                );
                let mut tree = PnTree::new(root, goal, leaf, Vec::new());
                let mut pairs = 0;
                while !tree.decided() {
                    pairs += usize::from(iterate_pair(&mut tree).len() == 2);
                }
                assert_eq!(tree.outcome(), single.outcome, "{board} {goal}");
                assert!(pairs > 0 || tree.stats.iterations < 3, "{board} {goal}");
                let proof = crate::solution::extract(&tree, leaf).expect("a solution tree");
                assert!(crate::proof::check(&proof, None).is_ok(), "{board} {goal}");
            }
        }
    }

    impl PnTree<'_> {
        fn clone_numbers(&self) -> Vec<(u64, u64)> {
            self.nodes.iter().map(|n| (n.pn, n.dn)).collect()
        }
    }
}
