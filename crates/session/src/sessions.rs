//! `Sessions`: the sessions of one store, their records, trees, curves and rote entries,
//! read and written through one lock.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::codec::DecodeError;
use crate::record::{GoalRecord, SecondLevel, SessionRecord, Settings, State};
use crate::store::{Store, StoreError, Table, Write};
use crate::{SessionError, codec, format, name};
use fanorona_rules::Board;
use fanorona_rules::position::Position;
use fanorona_search::pn::Node;
use fanorona_search::rote::{RoteEntry, RoteKey, RoteTable};
use fanorona_search::{CurvePoint, Init};

/// The meta key of the highest session id given: a deleted session's id is not given again.
const LAST_GIVEN: &[u8] = b"last_session";

/// Rote entries kept per board before a search starts (all of them, in memory).
pub type SharedRote = RefCell<RoteTable>;

/// A first-level tree as last checkpointed, with what its next checkpoint needs to know of
/// how it is stored.
#[derive(Default)]
pub struct SavedTree {
    pub nodes: Vec<Node>,
    /// The last checkpoint that wrote to the tree (chunk stamps, patch keys); 0 if none.
    pub seq: u64,
    /// The checkpoints whose patches are not yet folded into chunks, in order.
    pub patches: Vec<u64>,
    /// The bytes of those patches.
    pub patch_bytes: u64,
    /// The chunks those patches change.
    pub patched: std::collections::BTreeSet<u32>,
}

/// What `tune` changes in a session's settings; `None` leaves one as it is.
#[derive(Clone, Debug, Default)]
pub struct Tuning {
    pub second_level: Option<SecondLevel>,
    pub init: Option<Init>,
    pub db_dir: Option<PathBuf>,
}

/// Bytes a checkpoint leaves free on the store's disk (`Sessions::check_room`).
pub const DISK_MARGIN: u64 = 64 << 20;

/// The sessions of a store. Record updates go through one lock, so the daemon's command
/// handler (pause, stop) and the solving thread (checkpoints) never overwrite each other.
pub struct Sessions {
    store: Arc<dyn Store>,
    lock: Mutex<()>,
    /// Held to read by every writer (before `lock`), and to write by a backup
    /// (`quiesced`): a backup holds back the writes, not the readers.
    writes: std::sync::RwLock<()>,
    /// A backup holds the writes back now.
    backing_up: std::sync::atomic::AtomicBool,
    /// Records committed but not synced yet (`update` syncs outside the lock), by session:
    /// the number of the latest such commit and the record on disk meanwhile, which `get`
    /// and `list` answer (a crash would undo the newer one).
    unsynced: Mutex<HashMap<u64, (u64, SessionRecord)>>,
    /// Commits of `update`, numbered.
    commits: AtomicU64,
}

impl Sessions {
    /// Checks the store's format (stamping a new one unless `created` says it existed
    /// before) and opens its sessions.
    pub fn open(store: Arc<dyn Store>, created: bool) -> Result<Sessions, SessionError> {
        format::open_checked(store.as_ref(), created)?;
        Ok(Sessions {
            store,
            lock: Mutex::new(()),
            writes: std::sync::RwLock::new(()),
            backing_up: Default::default(),
            unsynced: Mutex::default(),
            commits: AtomicU64::new(0),
        })
    }

    pub fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    /// A new session on `root`, running, asking first whether the side to move wins. A name
    /// given must pass `name::check_name` (one that does not print is refused here, so every
    /// way in, the command line's and the web app's, is held to it); a name another session
    /// has is refused (scripts start sessions by name and find them so).
    pub fn create(
        &self,
        root: &Position,
        name: Option<String>,
        settings: Settings,
    ) -> Result<SessionRecord, SessionError> {
        if let Some(n) = &name {
            name::check_name(n)?;
        }
        if let Some(why) = settings.refused_on(root.board()) {
            return Err(SessionError::Unusable(why));
        }
        let _w = self.writes.read().expect("writes lock");
        let _g = self.lock.lock().expect("sessions lock");
        if let Some(name) = &name {
            self.check_free(name, None)?;
        }
        let last = match self.store.last(Table::Sessions, &[])? {
            Some((k, _)) => u64::from_be_bytes(
                k.as_slice()
                    .try_into()
                    .map_err(|_| SessionError::Foreign("a session key is not 8 bytes".into()))?,
            ),
            None => 0,
        };
        // Past every id given before, deleted ones too: their certificates may still be
        // around under that number.
        let id = last.max(self.last_given()?) + 1;
        let rec = SessionRecord {
            id,
            name: name.unwrap_or_else(|| format!("{} #{id}", root.board())),
            root: root.to_string(),
            settings,
            state: State::Running,
            value: None,
            error: None,
            goals: vec![GoalRecord::open(root.side_to_move())],
            checkpoints: 0,
            created: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        self.store.apply(&[
            Write::put(
                Table::Sessions,
                codec::session_key(id),
                codec::encode_session(&rec),
            ),
            Write::put(Table::Meta, LAST_GIVEN.to_vec(), id.to_be_bytes().to_vec()),
        ])?;
        Ok(rec)
    }

    /// The highest session id ever given (0 in a store that never recorded one).
    fn last_given(&self) -> Result<u64, SessionError> {
        match self.store.get(Table::Meta, LAST_GIVEN)? {
            None => Ok(0),
            Some(v) => v
                .as_slice()
                .try_into()
                .map(u64::from_be_bytes)
                .map_err(|_| {
                    SessionError::Damaged("the last session id given is not 8 bytes".into())
                }),
        }
    }

    /// Refuses `name` if a session other than `except` has it (compared as shown: trimmed).
    /// Called under the record lock.
    fn check_free(&self, name: &str, except: Option<u64>) -> Result<(), SessionError> {
        let (list, _) = self.readable()?;
        match list
            .iter()
            .find(|r| Some(r.id) != except && r.name.trim() == name.trim())
        {
            Some(r) => Err(SessionError::NameTaken {
                id: r.id,
                name: r.name.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Gives session `id` another name, which no other session may have.
    pub fn rename(&self, id: u64, name: &str) -> Result<SessionRecord, SessionError> {
        name::check_name(name)?;
        // (`update` holds the record lock while it calls this: no start takes the name
        // between the check and the write.)
        self.update(id, Vec::new(), |r| {
            self.check_free(name, Some(id))?;
            r.name = name.to_string();
            Ok(())
        })
    }

    /// Removes session `id` whole: its record, its first-level trees, their patches and its
    /// curve, in one batch; the rote entries it made stay (they hold for every session).
    /// A running session is refused: stop it first. The caller makes sure no worker holds
    /// it (a pausing one may still be writing its checkpoint).
    pub fn delete(&self, id: u64) -> Result<SessionRecord, SessionError> {
        let _w = self.writes.read().expect("writes lock");
        let _g = self.lock.lock().expect("sessions lock");
        let rec = match self.on_disk(id) {
            Some(r) => r,
            None => self.read(id)?,
        };
        if rec.state == State::Running {
            return Err(SessionError::BadState {
                id,
                state: rec.state,
                action: "delete",
                needs: "a session that is not running (stop it first)",
            });
        }
        let mut writes: Vec<Write> = self
            .record_keys(id)?
            .into_iter()
            .map(|(table, key)| Write {
                table,
                key,
                value: None,
            })
            .collect();
        writes.push(Write {
            table: Table::Sessions,
            key: codec::session_key(id),
            value: None,
        });
        let given = self.last_given()?.max(id);
        writes.push(Write::put(
            Table::Meta,
            LAST_GIVEN.to_vec(),
            given.to_be_bytes().to_vec(),
        ));
        self.store.apply(&writes)?;
        self.unsynced.lock().expect("unsynced lock").remove(&id);
        Ok(rec)
    }

    /// The keys of every record of session `id`'s trees and curve, read without their values
    /// (so a damaged one is listed too).
    fn record_keys(&self, id: u64) -> Result<Vec<(Table, Vec<u8>)>, SessionError> {
        let mut keys = Vec::new();
        for table in [Table::Nodes, Table::Patches, Table::Curve] {
            self.store.scan_keys(table, &id.to_be_bytes(), &mut |k| {
                keys.push((table, k.to_vec()))
            })?;
        }
        Ok(keys)
    }

    /// Puts session `rec.id` back as another store (a backup) holds it: its record `rec` and
    /// the records of its trees and curve (`records`) replace all this store has of it, in
    /// one batch. Refused while a worker runs it.
    pub fn put_back(
        &self,
        rec: SessionRecord,
        records: Vec<Write>,
    ) -> Result<SessionRecord, SessionError> {
        let id = rec.id;
        let kept: std::collections::HashSet<(Table, &[u8])> = records
            .iter()
            .map(|w| (w.table, w.key.as_slice()))
            .collect();
        let mut writes: Vec<Write> = self
            .record_keys(id)?
            .into_iter()
            .filter(|(t, k)| !kept.contains(&(*t, k.as_slice())))
            .map(|(table, key)| Write {
                table,
                key,
                value: None,
            })
            .collect();
        drop(kept);
        writes.extend(records);
        self.update(id, writes, |r| {
            if r.state == State::Running {
                return Err(SessionError::BadState {
                    id,
                    state: r.state,
                    action: "put back",
                    needs: "a session no worker runs",
                });
            }
            *r = rec;
            Ok(())
        })
    }

    /// A session's record as last written to disk: while a newer one is committed but not
    /// yet synced (`update`), the one before it, so a status never shows a checkpoint that a
    /// crash could still undo.
    pub fn get(&self, id: u64) -> Result<SessionRecord, SessionError> {
        let _g = self.lock.lock().expect("sessions lock");
        match self.on_disk(id) {
            Some(r) => Ok(r),
            None => self.read(id),
        }
    }

    /// The record of session `id` on disk while a newer one is committed but not synced.
    fn on_disk(&self, id: u64) -> Option<SessionRecord> {
        let unsynced = self.unsynced.lock().expect("unsynced lock");
        unsynced.get(&id).map(|(_, r)| r.clone())
    }

    fn read(&self, id: u64) -> Result<SessionRecord, SessionError> {
        match self.store.get(Table::Sessions, &codec::session_key(id))? {
            Some(bytes) => Ok(codec::decode_session(&bytes)?),
            None => Err(SessionError::Unknown(id)),
        }
    }

    /// Every record of `table` under `prefix`, decoded; the first damaged one is an error.
    fn decode_all<T>(
        &self,
        table: Table,
        prefix: &[u8],
        decode: impl Fn(&[u8], &[u8]) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, SessionError> {
        let mut out = Vec::new();
        let mut bad = None;
        self.store.scan(table, prefix, &mut |k, v| {
            if bad.is_none() {
                match decode(k, v) {
                    Ok(r) => out.push(r),
                    Err(e) => bad = Some(e),
                }
            }
        })?;
        match bad {
            Some(e) => Err(e.into()),
            None => Ok(out),
        }
    }

    pub fn list(&self) -> Result<Vec<SessionRecord>, SessionError> {
        let _g = self.lock.lock().expect("sessions lock");
        let mut list = self.decode_all(Table::Sessions, &[], |_, v| codec::decode_session(v))?;
        for r in &mut list {
            if let Some(on_disk) = self.on_disk(r.id) {
                *r = on_disk;
            }
        }
        Ok(list)
    }

    /// Every session record that can be read, and the ids of those that cannot: the daemon
    /// goes on with the readable ones instead of stopping at a damaged record.
    pub fn list_readable(&self) -> Result<(Vec<SessionRecord>, Vec<u64>), SessionError> {
        let _g = self.lock.lock().expect("sessions lock");
        self.readable()
    }

    /// `list_readable` for a caller that holds the record lock.
    fn readable(&self) -> Result<(Vec<SessionRecord>, Vec<u64>), SessionError> {
        let (mut good, mut bad) = (Vec::new(), Vec::new());
        self.store.scan(
            Table::Sessions,
            &[],
            &mut |k, v| match codec::decode_session(v) {
                Ok(r) => good.push(r),
                Err(_) => bad.push(k.try_into().map_or(u64::MAX, u64::from_be_bytes)),
            },
        )?;
        Ok((good, bad))
    }

    /// Changes a session's record with `change`, together with `writes`, in one batch.
    pub fn update(
        &self,
        id: u64,
        writes: Vec<Write>,
        change: impl FnOnce(&mut SessionRecord) -> Result<(), SessionError>,
    ) -> Result<SessionRecord, SessionError> {
        let (rec, commit) = {
            let _w = self.writes.read().expect("writes lock");
            let _g = self.lock.lock().expect("sessions lock");
            let before = self.read(id)?;
            let mut rec = before.clone();
            change(&mut rec)?;
            let mut writes = writes;
            writes.push(Write::put(
                Table::Sessions,
                codec::session_key(id),
                codec::encode_session(&rec),
            ));
            self.store.commit(&writes)?;
            let commit = self.commits.fetch_add(1, Ordering::SeqCst) + 1;
            // Until the sync, readers get the record on disk: the one before, or, if an
            // earlier commit is not synced either, the one on disk before that.
            let mut unsynced = self.unsynced.lock().expect("unsynced lock");
            unsynced
                .entry(id)
                .and_modify(|e| e.0 = commit)
                .or_insert((commit, before));
            (rec, commit)
        };
        // Durable before it returns, but the flush and fsync (seconds for a large
        // checkpoint) are not made under the lock: readers (`status`, `list`) and the other
        // worker's checkpoint do not wait on them; meanwhile they read the record on disk.
        self.store.sync()?;
        let mut unsynced = self.unsynced.lock().expect("unsynced lock");
        match unsynced.get_mut(&id) {
            Some(e) if e.0 == commit => {
                unsynced.remove(&id);
            }
            // A later commit is not synced yet: this one is on disk now.
            Some(e) => e.1 = rec.clone(),
            None => {}
        }
        Ok(rec)
    }

    /// Refuses a write of about `bytes` that would leave the store's disk with less than
    /// `DISK_MARGIN` free. A write that meets a full disk fails the store for good (sled
    /// keeps the error), so a checkpoint waits for space instead, its work kept in memory.
    pub fn check_room(&self, bytes: u64) -> Result<(), SessionError> {
        let Some(free) = self.store.free_bytes() else {
            return Ok(());
        };
        // The batch goes to sled's log, and again to its pages as they are rewritten.
        let need = bytes.saturating_mul(2).saturating_add(DISK_MARGIN);
        if free < need {
            return Err(SessionError::DiskFull {
                free_mib: free >> 20,
                need_mib: need.div_ceil(1 << 20),
                margin_mib: DISK_MARGIN >> 20,
            });
        }
        Ok(())
    }

    /// Sets the state of a session the user controls: pause, resume or stop.
    pub fn set_state(&self, id: u64, to: State) -> Result<SessionRecord, SessionError> {
        self.update(id, Vec::new(), |r| {
            let ok = match to {
                State::Paused | State::Stopped => {
                    r.state == State::Running || r.state == State::Paused
                }
                // A failed session is retried from its last checkpoint (its tables
                // rebuilt, say); if the cause remains it fails again, saying why.
                State::Running => matches!(
                    r.state,
                    State::Paused
                        | State::Stopped
                        | State::Running
                        | State::Failed
                        | State::Damaged
                ),
                _ => false,
            };
            if !ok {
                return Err(SessionError::BadState {
                    id,
                    state: r.state,
                    action: match to {
                        State::Paused => "pause",
                        State::Stopped => "stop",
                        _ => "resume",
                    },
                    needs: match to {
                        State::Running => "a paused, stopped, failed or damaged session",
                        _ => "a running or paused session",
                    },
                });
            }
            if to == State::Running {
                r.error = None;
            }
            r.state = to;
            Ok(())
        })
    }

    /// Changes how a session that no worker runs (paused, stopped or failed) is solved from
    /// its next resume: its second-level bound, its leaves' first numbers, its tables. The
    /// bound and the numbers steer the search, never its answer; tables give exact values,
    /// so other tables that decide at least what the old ones did (the caller checks) leave
    /// every value the trees hold true.
    pub fn tune(&self, id: u64, tuning: &Tuning) -> Result<SessionRecord, SessionError> {
        self.update(id, Vec::new(), |r| {
            if !matches!(r.state, State::Paused | State::Stopped | State::Failed) {
                return Err(SessionError::BadState {
                    id,
                    state: r.state,
                    action: "tune",
                    needs: "a paused, stopped or failed session (pause it first)",
                });
            }
            if let Some(b) = tuning.second_level {
                r.settings.second_level = b;
            }
            if let Some(i) = tuning.init {
                let board = r
                    .root
                    .parse::<Position>()
                    .map_err(|e| SessionError::Foreign(e.to_string()))?
                    .board();
                let tuned = Settings {
                    init: i,
                    ..r.settings.clone()
                };
                if let Some(why) = tuned.refused_on(board) {
                    return Err(SessionError::Unusable(why));
                }
                r.settings.init = i;
            }
            if let Some(d) = &tuning.db_dir {
                r.settings.db_dir = Some(d.clone());
            }
            Ok(())
        })
    }

    /// Runs `f` on the store, and the session records it holds, with every write held back
    /// (a periodic checkpoint waits for `backing_up` to end, its search going on; readers
    /// such as `get` and `list` go on too): what `f` reads is each session as one of its
    /// checkpoints left it.
    pub fn quiesced<R>(
        &self,
        f: impl FnOnce(&dyn Store, Vec<SessionRecord>) -> R,
    ) -> Result<R, SessionError> {
        self.backing_up.store(true, Ordering::SeqCst);
        let _w = self.writes.write().expect("writes lock");
        let _done = BackupDone(&self.backing_up);
        let (records, _) = {
            let _g = self.lock.lock().expect("sessions lock");
            self.readable()?
        };
        Ok(f(self.store.as_ref(), records))
    }

    /// Whether a backup holds the writes back now (a periodic checkpoint waits).
    pub fn backing_up(&self) -> bool {
        self.backing_up.load(Ordering::SeqCst)
    }

    /// Commits `writes` under the record lock (a reader of a whole tree, under that lock,
    /// sees them all or none); durable after the store's next sync.
    pub fn commit_locked(&self, writes: &[Write]) -> Result<(), SessionError> {
        let _w = self.writes.read().expect("writes lock");
        let _g = self.lock.lock().expect("sessions lock");
        Ok(self.store.commit(writes)?)
    }

    /// The first-level tree of goal `goal` of session `id` as last checkpointed, read under
    /// the record lock so that a checkpoint running meanwhile (a checkpoint writes the tree
    /// and the record in one batch under that lock) cannot mix two of them.
    pub fn load_tree_now(
        &self,
        id: u64,
        goal: u8,
        board: Board,
    ) -> Result<Vec<Node>, SessionError> {
        let _g = self.lock.lock().expect("sessions lock");
        let rec = self.read(id)?;
        let expected = rec.goals.get(goal as usize).map_or(0, |g| g.first_level);
        self.load_tree(id, goal, board, expected)
    }

    /// The first-level tree of goal `goal` of session `id` as last checkpointed, checked to
    /// hold `expected` nodes that form a tree: a damaged store is an error, not a panic.
    pub fn load_tree(
        &self,
        id: u64,
        goal: u8,
        board: Board,
        expected: u64,
    ) -> Result<Vec<Node>, SessionError> {
        Ok(self.load_saved(id, goal, board, expected)?.nodes)
    }

    /// `load_tree`, with how the tree is stored: its chunks, then every patch applied in
    /// order to the nodes of chunks written before it.
    pub fn load_saved(
        &self,
        id: u64,
        goal: u8,
        board: Board,
        expected: u64,
    ) -> Result<SavedTree, SessionError> {
        // Room for the tree at once (no doubling), but not whatever a damaged record says.
        let mut nodes = Vec::with_capacity(expected.min(1 << 26) as usize);
        let mut stamps = Vec::new();
        let mut bad = None;
        let prefix = codec::tree_prefix(id, goal);
        // The store cannot read it (a blob file deleted, truncated or changed): the session
        // is damaged, not waiting; said so, it is marked failed instead of retried forever.
        let unreadable = |e: StoreError| {
            SessionError::Damaged(format!(
                "session {id}'s first-level tree (question {goal}) cannot be read: {e}"
            ))
        };
        let scanned = self.store.scan(Table::Nodes, &prefix, &mut |k, v| {
            if bad.is_some() {
                return;
            }
            let chunk = k
                .get(9..13)
                .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")));
            if chunk != Some(stamps.len() as u32) {
                bad = Some(DecodeError {
                    what: "node chunk",
                    why: format!("chunk {} is missing", stamps.len()),
                });
                return;
            }
            match codec::decode_chunk(v, board, &mut nodes) {
                Ok(stamp) => stamps.push(stamp),
                Err(e) => bad = Some(e),
            }
        });
        match scanned {
            // Nothing of it was ever written (its record, written with its chunks, says no
            // node): what cannot be read is another session's, sharing sled's page with it.
            Err(_) if expected == 0 => return Ok(SavedTree::default()),
            other => other.map_err(unreadable)?,
        }
        if let Some(e) = bad {
            return Err(e.into());
        }
        let mut saved = SavedTree {
            seq: stamps.iter().copied().max().unwrap_or(0),
            ..SavedTree::default()
        };
        self.store
            .scan(Table::Patches, &prefix, &mut |k, v| {
                if bad.is_some() {
                    return;
                }
                let applied = codec::patch_seq(k).and_then(|seq| {
                    codec::apply_patch(v, seq, &mut nodes, |c| stamps[c], &mut saved.patched)?;
                    Ok(seq)
                });
                match applied {
                    Ok(seq) => {
                        saved.seq = saved.seq.max(seq);
                        saved.patches.push(seq);
                        saved.patch_bytes += v.len() as u64;
                    }
                    Err(e) => bad = Some(e),
                }
            })
            .map_err(unreadable)?;
        if let Some(e) = bad {
            return Err(e.into());
        }
        let broken = |why: String| DecodeError {
            what: "first-level tree",
            why,
        };
        if !nodes.is_empty() && nodes.len() as u64 != expected {
            return Err(broken(format!(
                "{} nodes, its session says {expected}",
                nodes.len()
            ))
            .into());
        }
        for (i, n) in nodes.iter().enumerate() {
            let parent_ok = if i == 0 {
                n.parent == u32::MAX
            } else {
                (n.parent as usize) < i
            };
            let children_ok = !n.expanded
                || (n.first as usize > i
                    && n.first
                        .checked_add(n.count)
                        .is_some_and(|e| e as usize <= nodes.len()));
            if !parent_ok || !children_ok {
                return Err(broken(format!("node {i} has a broken link")).into());
            }
        }
        saved.nodes = nodes;
        Ok(saved)
    }

    /// The root curve of a session: (goal index, point), in order.
    pub fn curve(&self, id: u64) -> Result<Vec<(u8, CurvePoint)>, SessionError> {
        self.decode_all(Table::Curve, &id.to_be_bytes(), |k, v| {
            Ok((k[8], codec::decode_point(k, v)?))
        })
    }

    /// The root curve's points after iteration `since[g]` of each goal g (all of a goal
    /// `since` does not reach): (goal index, point).
    pub fn curve_since(
        &self,
        id: u64,
        since: &[u64],
    ) -> Result<Vec<(u8, CurvePoint)>, SessionError> {
        let mut out = Vec::new();
        let mut bad = None;
        for g in 0..2u8 {
            let prefix = codec::tree_prefix(id, g);
            let after = since.get(g as usize).map_or(0, |s| s.saturating_add(1));
            let from = codec::curve_key(id, g, after);
            self.store
                .scan_from(
                    Table::Curve,
                    &prefix,
                    &from,
                    &mut |k, v| match codec::decode_point(k, v) {
                        Ok(p) => out.push((g, p)),
                        Err(e) => bad = Some(e),
                    },
                )?;
        }
        match bad {
            Some(e) => Err(e.into()),
            None => Ok(out),
        }
    }

    /// Every rote entry of `board` (all boards with `None`).
    pub fn rote(&self, board: Option<Board>) -> Result<Vec<(RoteKey, RoteEntry)>, SessionError> {
        let prefix = board.map(codec::rote_prefix).unwrap_or_default();
        self.decode_all(Table::Rote, &prefix, codec::decode_rote)
    }

    /// The rote entries of `board` as a table a search can consult. A damaged entry is left
    /// out (it is only a shortcut): it must not stop every session on the board.
    pub fn rote_table(&self, board: Board) -> Result<RoteTable, SessionError> {
        let mut t = RoteTable::new();
        let mut damaged = 0;
        self.store
            .scan(
                Table::Rote,
                &codec::rote_prefix(board),
                &mut |k, v| match codec::decode_rote(k, v) {
                    Ok((k, e)) => t.insert(k, e),
                    Err(_) => damaged += 1,
                },
            )?;
        if damaged > 0 {
            tracing::warn!("{damaged} damaged rote entries of {board} left out");
        }
        Ok(t)
    }
}

/// Clears the backup's flag when it ends, a panic included.
struct BackupDone<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for BackupDone<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}
