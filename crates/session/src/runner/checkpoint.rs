//! What a question's checkpoint writes and how: the nodes changed since the last one (new
//! chunks whole, a patch for the stored ones), the curve points, the rote entries the search
//! decided, and the question's counters, in one batch; and the fold that rewrites patched
//! chunks once their patches outweigh them.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::time::Instant;

use crate::codec::{self, CHUNK};
use crate::store::{Table, Write};
use crate::{GoalRecord, SessionError, SessionRecord, Sessions, State};
use fanorona_search::pn::PnTree;
use fanorona_search::rote::{RoteEntry, RoteTable};
use fanorona_search::{CurvePoint, Leaf, Outcome, Value};

/// What a checkpoint has still to write.
#[derive(Default)]
pub(super) struct Pending {
    /// Nodes the store holds that changed since (repeats allowed; sorted out when written).
    pub(super) changed: Vec<u32>,
    pub(super) points: Vec<CurvePoint>,
    /// Nodes decided by search since the last checkpoint (rote candidates).
    decided: Vec<u32>,
    pub(super) stored: Stored,
    /// The iteration this run resumed at, until a checkpoint records it.
    pub(super) resumed_at: Option<u64>,
}

impl Pending {
    /// Nothing pending yet over the tree as `stored`.
    pub(super) fn over(stored: Stored) -> Pending {
        Pending {
            stored,
            ..Pending::default()
        }
    }

    /// Sorts out repeats once `changed` outgrows the stored tree (fast PN² on a small tree,
    /// or checkpoints failing on a full disk, would grow it without end).
    pub(super) fn bound_changed(&mut self) {
        if self.changed.len() > (2 * self.stored.len).max(1 << 20) {
            self.changed.sort_unstable();
            self.changed.dedup();
        }
    }
}

/// How the tree is stored. A checkpoint writes the chunks of the nodes new since the last
/// one, and a patch with what changed in the nodes stored before: a PN² iteration changes
/// the numbers along a path through the whole tree, so rewriting the chunks it touched would
/// rewrite most of a large tree every checkpoint. Once the patches outweigh the tree's
/// chunks, the chunks they touch are written again (stamped with the checkpoint, so that a
/// patch older than its chunk is skipped on load: the fold needs no single batch) and the
/// patches deleted.
#[derive(Default)]
pub(super) struct Stored {
    /// Nodes the stored chunks hold.
    len: usize,
    /// The last checkpoint written.
    seq: u64,
    /// The checkpoints whose patches are not folded yet.
    patches: Vec<u64>,
    patch_bytes: u64,
    /// The chunks those patches change.
    patched: BTreeSet<u32>,
    /// Patches are folded only once they outweigh the chunks and this many bytes.
    fold_at_least: u64,
    /// Bytes of tree the last checkpoint wrote (its fold included).
    pub(super) written: u64,
    /// After a failed fold, the patch bytes the next try waits for (a full disk is not
    /// filled again at every checkpoint).
    retry_fold_at: u64,
}

impl Stored {
    /// How `saved` is stored, and its nodes.
    pub(super) fn of(saved: crate::SavedTree) -> (Stored, Vec<fanorona_search::pn::Node>) {
        let stored = Stored {
            len: saved.nodes.len(),
            seq: saved.seq,
            patches: saved.patches,
            patch_bytes: saved.patch_bytes,
            patched: saved.patched,
            fold_at_least: FOLD_AT_LEAST,
            written: 0,
            retry_fold_at: 0,
        };
        (stored, saved.nodes)
    }

    /// Whether the patches should be folded into the chunks.
    fn fold_due(&self) -> bool {
        let chunk_bytes = self.len as u64 * codec::NODE_BYTES_STORED;
        self.patch_bytes > chunk_bytes.max(self.fold_at_least).max(self.retry_fold_at)
    }
}

/// Patches are folded only once they outweigh the chunks and this many bytes: a resume reads
/// them all (at about 1 GB/s), so a small tree's patches need not be folded often.
pub(super) const FOLD_AT_LEAST: u64 = 64 << 20;

/// Chunks a fold writes in one batch (`bench store` measures the memory a larger one costs).
pub const FOLD_BATCH: usize = 512;

/// Marks what an iteration changed: the paths from the leaves it `expanded` to the root, and
/// the new children from `before` on (written with the chunks of new nodes).
pub(super) fn note_iteration(
    tree: &PnTree<'_>,
    expanded: &[usize],
    before: usize,
    pending: &mut Pending,
) {
    for &n in expanded {
        let mut i = n as u32;
        while i != u32::MAX {
            pending.changed.push(i);
            note_decided(tree, i as usize, pending);
            i = tree.nodes[i as usize].parent;
        }
    }
    pending.bound_changed();
    for c in before..tree.nodes.len() {
        note_decided(tree, c, pending);
    }
}

/// Queues node `n` for the rote table if a search (not a leaf rule, a table, a repetition or
/// the rote table itself) decided it.
pub(super) fn note_decided(tree: &PnTree<'_>, n: usize, pending: &mut Pending) {
    let node = &tree.nodes[n];
    if (node.proven() || node.disproven())
        && node.leaf == Leaf::Open
        && !node.repetition
        && !node.rote
    {
        pending.decided.push(n as u32);
    }
}

/// The move from `n` to its child that decides it for the side to move, if it was expanded.
fn deciding_move(tree: &PnTree<'_>, n: usize) -> Option<fanorona_rules::moves::Move> {
    let node = &tree.nodes[n];
    if !node.expanded {
        return None;
    }
    let or = tree.is_or(n);
    let children = &tree.nodes[node.first as usize..(node.first + node.count) as usize];
    let child = children.iter().find(|c| {
        if or && node.proven() {
            c.proven()
        } else if !or && node.disproven() {
            c.disproven()
        } else {
            false
        }
    })?;
    fanorona_rules::moves::legal_moves(&node.pos)
        .into_iter()
        .find(|m| m.apply(&node.pos) == child.pos)
}

/// Writes what is pending, and the goal's counters, in one batch. With `decided`, the goal is
/// decided: its outcome is recorded and the next goal (or the value) set up. With `may_fold`,
/// then folds the patches if they are due.
#[allow(clippy::too_many_arguments)]
pub(super) fn write(
    sessions: &Sessions,
    id: u64,
    g: usize,
    tree: &PnTree<'_>,
    pending: &mut Pending,
    rote: &RefCell<RoteTable>,
    decided: Option<Outcome>,
    may_fold: bool,
) -> Result<SessionRecord, SessionError> {
    let board = tree.root().pos.board();
    let seq = pending.stored.seq + 1;
    let mut writes = Vec::new();
    // The chunks from the first not wholly stored on, whole; a patch for the nodes before.
    let tail = pending.stored.len / CHUNK;
    for c in tail..tree.nodes.len().div_ceil(CHUNK) {
        writes.push(chunk_write(tree, id, g, c as u32, seq));
    }
    let mut written: u64 = writes.iter().map(Write::value_bytes).sum();
    // Kept in `pending` until the batch is written: a failed checkpoint leaves them for the
    // next.
    pending.changed.sort_unstable();
    pending.changed.dedup();
    let changed: Vec<u32> = pending
        .changed
        .iter()
        .copied()
        .filter(|&i| (i as usize) < tail * CHUNK)
        .collect();
    let mut patch_bytes = 0;
    if !changed.is_empty() {
        let patch = codec::encode_patch(&tree.nodes, &changed);
        patch_bytes = patch.len() as u64;
        written += patch_bytes;
        writes.push(Write::put(
            Table::Patches,
            codec::patch_key(id, g as u8, seq),
            patch,
        ));
    }
    for p in &pending.points {
        writes.push(Write::put(
            Table::Curve,
            codec::curve_key(id, g as u8, p.iteration),
            codec::encode_point(p),
        ));
    }
    let mut learned = Vec::new();
    for &n in &pending.decided {
        let key = tree.rote_key(n as usize);
        if rote.borrow().known(&key).is_some() {
            continue;
        }
        let entry = RoteEntry {
            proven: tree.nodes[n as usize].proven(),
            best_move: deciding_move(tree, n as usize),
        };
        writes.push(Write::put(
            Table::Rote,
            codec::rote_key(&key),
            codec::encode_rote(&entry, board),
        ));
        learned.push((key, entry));
    }
    sessions.check_room(
        writes
            .iter()
            .map(|w| w.value_bytes() + w.key.len() as u64)
            .sum(),
    )?;
    let s = tree.stats;
    let resumed_at = pending.resumed_at;
    let rec = sessions.update(id, writes, |r| {
        let gr = &mut r.goals[g];
        gr.nodes = s.nodes;
        gr.iterations = s.iterations;
        gr.seconds = s.seconds;
        gr.db_hits = s.db_hits;
        gr.rote_hits = s.rote_hits;
        gr.repetitions = s.repetitions;
        gr.first_level = tree.nodes.len() as u64;
        // Once: a run killed before its first checkpoint resumes at the same iteration.
        if let Some(at) = resumed_at
            && gr.resumed_at.last() != Some(&at)
        {
            gr.resumed_at.push(at);
        }
        r.checkpoints += 1;
        if let Some(outcome) = decided {
            // Its kept tree is checked after the checkpoint (`QuestionRun::finish`).
            gr.verified = None;
            gr.rote_leaves = 0;
            gr.outcome = outcome;
            // The value: a side proven to win; both sides disproven is a draw; the side to
            // move disproven alone asks next whether the other side wins.
            if r.state != State::Solved {
                if let Some(w) = r.goals.iter().find(|g| g.outcome == Outcome::Proven) {
                    r.value = Some(Value::Win(w.attacker));
                    r.state = State::Solved;
                } else if r.goals.len() == 2
                    && r.goals.iter().all(|g| g.outcome == Outcome::Disproven)
                {
                    r.value = Some(Value::Draw);
                    r.state = State::Solved;
                } else if r.goals.len() == 1 {
                    r.goals
                        .push(GoalRecord::open(r.goals[0].attacker.opponent()));
                }
            }
        }
        Ok(())
    })?;
    // Written: the in-memory rote table learns it, and nothing stays pending.
    pending.resumed_at = None;
    let mut table = rote.borrow_mut();
    for (k, e) in learned {
        table.insert(k, e);
    }
    drop(table);
    let st = &mut pending.stored;
    st.len = tree.nodes.len();
    st.seq = seq;
    st.written = written;
    if !changed.is_empty() {
        st.patches.push(seq);
        st.patch_bytes += patch_bytes;
        st.patched.extend(changed.iter().map(|&i| i / CHUNK as u32));
    }
    pending.changed.clear();
    pending.points.clear();
    pending.decided.clear();
    if may_fold
        && st.fold_due()
        && let Err(e) = fold(sessions, id, g, tree, st)
    {
        // The patches stay; a later checkpoint tries again, once they grew by a quarter.
        st.retry_fold_at = st.patch_bytes + st.patch_bytes / 4;
        tracing::warn!("session {id}: folding the tree's patches into its chunks: {e}");
    }
    Ok(rec)
}

/// The write of chunk `c` of `tree` as checkpoint `seq` has it.
fn chunk_write(tree: &PnTree<'_>, id: u64, g: usize, c: u32, seq: u64) -> Write {
    let lo = c as usize * CHUNK;
    let hi = (lo + CHUNK).min(tree.nodes.len());
    Write::put(
        Table::Nodes,
        codec::chunk_key(id, g as u8, c),
        codec::encode_chunk(&tree.nodes[lo..hi], seq),
    )
}

/// Writes the chunks the patches change as the last checkpoint has them (the tree has not
/// changed since), in batches of `FOLD_BATCH`, makes them durable, then deletes the patches.
/// Stopped anywhere, the store still loads the last checkpoint: a chunk written here is
/// stamped with it, so the older patches skip its nodes.
fn fold(
    sessions: &Sessions,
    id: u64,
    g: usize,
    tree: &PnTree<'_>,
    st: &mut Stored,
) -> Result<(), SessionError> {
    let t = Instant::now();
    let chunks: Vec<u32> = st.patched.iter().copied().collect();
    sessions.check_room(chunks.len() as u64 * (CHUNK as u64 * codec::NODE_BYTES_STORED))?;
    for batch in chunks.chunks(FOLD_BATCH) {
        let writes: Vec<Write> = batch
            .iter()
            .map(|&c| chunk_write(tree, id, g, c, st.seq))
            .collect();
        st.written += writes.iter().map(Write::value_bytes).sum::<u64>();
        sessions.commit_locked(&writes)?;
    }
    sessions.store().sync()?;
    let deletes: Vec<Write> = st
        .patches
        .iter()
        .map(|&seq| Write {
            table: Table::Patches,
            key: codec::patch_key(id, g as u8, seq),
            value: None,
        })
        .collect();
    sessions.commit_locked(&deletes)?;
    sessions.store().sync()?;
    tracing::info!(
        "session {id}: folded {} patches ({} MB) into {} chunks in {:.1} s",
        st.patches.len(),
        st.patch_bytes >> 20,
        chunks.len(),
        t.elapsed().as_secs_f64()
    );
    st.patches.clear();
    st.patch_bytes = 0;
    st.patched.clear();
    st.retry_fold_at = 0;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemStore;
    use crate::{SecondLevel, Settings};
    use fanorona_rules::Color;
    use fanorona_rules::position::Position;
    use fanorona_search::pn::Node;
    use fanorona_search::pn::iterate;
    use fanorona_search::{Algorithm, LeafEval};
    use fanorona_search::{Goal, Init};
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    fn fields(n: &Node) -> impl PartialEq + std::fmt::Debug {
        (
            n.pos,
            n.pn,
            n.dn,
            n.parent,
            n.first,
            n.count,
            n.expanded,
            n.leaf,
            n.repetition,
            n.rote,
            n.since,
        )
    }

    /// After every checkpoint the store loads the tree exactly as it is in memory: new
    /// nodes' chunks, patches for the old ones, after a fold, and after a fold stopped half
    /// way (its chunks written, its patches not yet deleted) and checkpointed over.
    #[test]
    fn patches_and_folds_keep_the_stored_tree_exact() {
        let mem = Arc::new(MemStore::new());
        patches_and_folds(mem.clone(), Some(&mem));
    }

    /// The same on disk: every chunk and patch in a record file, none left behind by the
    /// folds, and the tree the same once the store is opened again.
    #[test]
    fn patches_and_folds_keep_the_stored_tree_exact_in_record_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(crate::store::SledStore::open(dir.path(), 8 << 20).unwrap());
        let (id, nodes) = patches_and_folds(store.clone(), None);
        let mut records = 0;
        for t in [Table::Nodes, Table::Patches] {
            crate::store::Store::scan(&*store, t, &[], &mut |_, _| records += 1).unwrap();
        }
        let files = std::fs::read_dir(dir.path().join(crate::record_files::DIR))
            .unwrap()
            .count();
        assert_eq!(
            files, records,
            "one file a record, the replaced ones removed"
        );
        drop(store);
        let store = Arc::new(crate::store::SledStore::open(dir.path(), 8 << 20).unwrap());
        let sessions = Sessions::open(store, true).unwrap();
        let saved = sessions
            .load_saved(id, 0, "3x9".parse().unwrap(), nodes.len() as u64)
            .unwrap();
        assert!(saved.nodes.iter().map(fields).eq(nodes.iter().map(fields)));
    }

    /// Checkpoints and folds of a 3x9 search into `store` (a full disk tried on `mem`),
    /// the stored tree checked after each; returns the session and the tree's nodes.
    fn patches_and_folds(
        store: Arc<dyn crate::store::Store>,
        mem: Option<&MemStore>,
    ) -> (u64, Vec<Node>) {
        let sessions = Sessions::open(store, false).unwrap();
        let root = Position::initial("3x9".parse().unwrap());
        let settings = Settings {
            algo: Algorithm::Pn2,
            db_dir: None,
            second_level: SecondLevel::Fixed(2000),
            init: Init::Mobility,
            weights: None,
            checkpoint_ms: 1,
            verify: false,
            threads: 1,
            pairs: false,
        };
        let id = sessions.create(&root, None, settings).unwrap().id;
        let rote = RefCell::new(RoteTable::new());
        let goal = Goal {
            attacker: Color::White,
        };
        let mut tree =
            PnTree::with_rote(root, goal, LeafEval::rules_only(), Vec::new(), Some(&rote));
        tree.second_level = SecondLevel::Fixed(2000);
        let mut pending = Pending::default();
        let (mut patched, mut folded, mut half) = (0, 0, false);
        for round in 0..24 {
            for _ in 0..40 {
                let before = tree.nodes.len();
                let n = iterate(&mut tree, Algorithm::Pn2);
                note_iteration(&tree, &[n], before, &mut pending);
            }
            assert!(!tree.decided(), "the test needs a longer solve");
            if let Some(mem) = mem
                && round == 12
            {
                // A full disk: the next checkpoint writes what this one could not.
                mem.fail_writes.store(true, Ordering::SeqCst);
                assert!(write(&sessions, id, 0, &tree, &mut pending, &rote, None, true).is_err());
                mem.fail_writes.store(false, Ordering::SeqCst);
                continue;
            }
            write(&sessions, id, 0, &tree, &mut pending, &rote, None, true).unwrap();
            let st = &mut pending.stored;
            if !st.patches.is_empty() {
                patched += 1;
            }
            if round == 9 {
                // A fold stopped after its chunks: the patches stay beside them.
                let half_of: Vec<u32> = st.patched.iter().copied().step_by(2).collect();
                let writes: Vec<Write> = half_of
                    .iter()
                    .map(|&c| chunk_write(&tree, id, 0, c, st.seq))
                    .collect();
                sessions.commit_locked(&writes).unwrap();
                half = !writes.is_empty();
            }
            if round % 8 == 7 {
                fold(&sessions, id, 0, &tree, st).unwrap();
                folded += 1;
                let mut left = 0;
                sessions
                    .store()
                    .scan(Table::Patches, &[], &mut |_, _| left += 1)
                    .unwrap();
                assert_eq!(left, 0, "a fold deletes the patches");
            }
            let first_level = sessions.get(id).unwrap().goals[0].first_level;
            assert_eq!(first_level, tree.nodes.len() as u64);
            let saved = sessions
                .load_saved(id, 0, root.board(), first_level)
                .unwrap();
            assert_eq!(saved.seq, pending.stored.seq);
            assert_eq!(saved.patches, pending.stored.patches);
            assert_eq!(saved.nodes.len(), tree.nodes.len());
            for (i, (a, b)) in saved.nodes.iter().zip(&tree.nodes).enumerate() {
                assert_eq!(fields(a), fields(b), "round {round}, node {i}");
            }
        }
        assert!(tree.nodes.len() > 3 * CHUNK, "{} nodes", tree.nodes.len());
        assert!(
            patched > 10 && folded == 3 && half,
            "{patched} {folded} {half}"
        );
        (id, tree.nodes.clone())
    }

    #[test]
    fn repeats_of_changed_nodes_are_sorted_out_once_they_outgrow_the_tree() {
        let mut p = Pending::default();
        p.stored.len = 10;
        p.changed = (0..(1u32 << 20)).map(|i| i % 7).collect();
        p.bound_changed();
        assert_eq!(p.changed.len(), 1 << 20, "up to the floor, as it came");
        p.changed.push(3);
        p.bound_changed();
        assert_eq!(p.changed, (0..7).collect::<Vec<u32>>());
    }

    #[test]
    fn patches_fold_once_they_outweigh_the_chunks() {
        let mut st = Stored {
            len: 10_000_000,
            patch_bytes: 500 << 20,
            fold_at_least: FOLD_AT_LEAST,
            ..Stored::default()
        };
        assert!(!st.fold_due(), "half the chunks' bytes");
        st.patch_bytes = 600 << 20;
        assert!(st.fold_due());
        st.len = 1000;
        st.patch_bytes = 60 << 20;
        assert!(!st.fold_due(), "a small tree's patches wait for the floor");
        st.patch_bytes = 80 << 20;
        assert!(st.fold_due());
        st.retry_fold_at = 100 << 20;
        assert!(!st.fold_due(), "after a failed fold, until they grew");
    }
}
