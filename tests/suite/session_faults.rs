//! The session runner against the in-memory store model: a full disk during checkpoints
//! leaves the previous checkpoint whole and usable, and the solve resumes from it.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use fanorona::Position;
use fanorona::search::{Algorithm, Init};
use fanorona::session::runner::{Control, run};
use fanorona::session::store::{MemStore, Store};
use fanorona::session::{SecondLevel, Sessions, Settings, State};

fn settings() -> Settings {
    Settings {
        algo: Algorithm::Pn2,
        db_dir: None,
        second_level: SecondLevel::Fixed(3000),
        init: Init::Mobility,
        weights: None,
        checkpoint_ms: 20,
        verify: true,
        threads: 1,
        pairs: false,
    }
}

/// A store in memory, its sessions, a directory for the logs, and a session on 3x9's start.
fn a_3x9_session() -> (Arc<MemStore>, Sessions, tempfile::TempDir, Position, u64) {
    let mem = Arc::new(MemStore::new());
    let store: Arc<dyn Store> = mem.clone();
    let sessions = Sessions::open(store, false).unwrap();
    let root = Position::initial("3x9".parse().unwrap());
    let id = sessions.create(&root, None, settings()).unwrap().id;
    (mem, sessions, tempfile::tempdir().unwrap(), root, id)
}

#[test]
fn a_full_disk_keeps_the_last_checkpoint_and_the_solve_resumes_from_it() {
    let (mem, sessions, logs, root, id) = a_3x9_session();
    let control = Control::default();

    let failed = std::thread::scope(|s| {
        let h = s.spawn(|| run(&sessions, id, &control, logs.path()));
        let deadline = Instant::now() + Duration::from_secs(60);
        while sessions.get(id).unwrap().checkpoints < 3 {
            assert!(!h.is_finished(), "solved before the disk filled");
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(2));
        }
        mem.fail_writes.store(true, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(100));
        control.request_stop();
        h.join().unwrap()
    });
    assert!(failed.is_err(), "the final checkpoint cannot be written");

    // What the store holds is one whole checkpoint: counters, curve and tree agree.
    let rec = sessions.get(id).unwrap();
    assert_eq!(rec.state, State::Running);
    let g = &rec.goals[0];
    let curve = sessions.curve(id).unwrap();
    assert_eq!(
        curve.len() as u64,
        g.iterations,
        "one curve point per PN² iteration"
    );
    assert_eq!(curve.last().unwrap().1.iteration, g.iterations);
    assert_eq!(curve.last().unwrap().1.nodes, g.nodes);
    let tree = sessions
        .load_tree(id, 0, root.board(), g.first_level)
        .unwrap();
    assert_eq!(tree.len() as u64, g.first_level);
    // The tree is consistent: every child points back at its parent.
    for (i, n) in tree.iter().enumerate().filter(|(_, n)| n.expanded) {
        for c in n.first..n.first + n.count {
            assert_eq!(tree[c as usize].parent as usize, i);
        }
    }

    // Space again: the solve resumes from that checkpoint and finishes.
    mem.fail_writes.store(false, Ordering::SeqCst);
    control.clear();
    let done = run(&sessions, id, &control, logs.path()).unwrap();
    assert_eq!(done.state, State::Solved);
    assert_eq!(done.value.map(|v| v.name()), Some("white"));
    assert_eq!(done.goals[0].verified, Some(true));
    let curve = sessions.curve(id).unwrap();
    for (i, (_, p)) in curve.iter().enumerate() {
        assert_eq!(p.iteration, i as u64 + 1);
    }
}

/// A disk short of room: the checkpoints wait (nothing is handed to the store), the search
/// goes on, the control says what the store holds, and once space is back the next
/// checkpoint writes it all: the run never stops, and the curve has every iteration once.
/// While the disk stays full the search waits, so the room a checkpoint asks stays put.
#[test]
fn a_disk_short_of_room_holds_the_checkpoints_back_and_loses_nothing() {
    let (mem, sessions, logs, _, id) = a_3x9_session();
    let control = Control::default();
    let done = std::thread::scope(|s| {
        let h = s.spawn(|| run(&sessions, id, &control, logs.path()));
        let deadline = Instant::now() + Duration::from_secs(60);
        while sessions.get(id).unwrap().checkpoints < 2 {
            assert!(!h.is_finished(), "solved before the disk filled");
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(1));
        }
        mem.free.store(10 << 20, Ordering::SeqCst);
        let f = loop {
            let f = control.checkpoint_failure.lock().unwrap().clone();
            if let Some(f) = f.filter(|f| f.tries >= 3) {
                break f;
            }
            assert!(!h.is_finished(), "solved before a checkpoint failed");
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(1));
        };
        // What the store holds is what the failure says it holds, and it stays put.
        let on_disk = sessions.get(id).unwrap();
        assert_eq!(f.checkpoints_on_disk, on_disk.checkpoints);
        assert!(!f.poisoned);
        assert!(f.message.contains("10 MiB free"), "{}", f.message);
        assert!(f.describe().contains("in memory only"), "{}", f.describe());
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(sessions.get(id).unwrap().checkpoints, on_disk.checkpoints);
        // While the disk stays full the search waits: the room asked does not grow.
        let later = loop {
            let g = control.checkpoint_failure.lock().unwrap().clone().unwrap();
            if g.tries >= f.tries + 3 {
                break g;
            }
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(later.message, f.message, "the same room asked");
        assert_eq!(later.iteration_in_memory, f.iteration_in_memory);
        mem.free.store(u64::MAX, Ordering::SeqCst);
        h.join().unwrap().unwrap()
    });
    assert_eq!(done.state, State::Solved);
    assert_eq!(done.value.map(|v| v.name()), Some("white"));
    assert!(control.checkpoint_failure.lock().unwrap().is_none());
    let curve = sessions.curve(id).unwrap();
    for (i, (_, p)) in curve.iter().enumerate() {
        assert_eq!(p.iteration, i as u64 + 1);
    }
    let log = std::fs::read_to_string(logs.path().join(format!("session-{id}.jsonl"))).unwrap();
    assert!(log.contains("failed tries: the store holds the search again, nothing was lost"));
}

/// A tree the store cannot read (its file damaged) marks the session damaged, saying why,
/// instead of leaving it queued and retried forever.
#[test]
fn a_tree_the_store_cannot_read_marks_its_session_damaged() {
    use fanorona::session::runner::run_guarded;
    let (mem, sessions, logs, _, id) = a_3x9_session();
    let control = Control::default();
    std::thread::scope(|s| {
        let h = s.spawn(|| run(&sessions, id, &control, logs.path()));
        while sessions.get(id).unwrap().checkpoints < 2 {
            assert!(!h.is_finished(), "solved before it was stopped");
            std::thread::sleep(Duration::from_millis(1));
        }
        control.request_stop();
        h.join().unwrap().unwrap();
    });
    mem.fail_reads.store(true, Ordering::SeqCst);
    control.clear();
    assert!(run_guarded(&sessions, id, &control, logs.path()).is_err());
    let rec = sessions.get(id).unwrap();
    assert_eq!(rec.state, State::Damaged);
    let why = rec.error.unwrap();
    assert!(
        why.contains("first-level tree") && why.contains("cannot be read"),
        "{why}"
    );
}

/// A draw asks both questions, here at once on two threads; each goal's tree and curve are
/// kept apart.
#[test]
fn a_drawn_position_answers_both_goals() {
    let sessions = Sessions::open(Arc::new(MemStore::new()), false).unwrap();
    let logs = tempfile::tempdir().unwrap();
    // A 3x5 position df-pn finds drawn (`fanorona solve '...../...BW/..W.B w' --algo dfpn`).
    let root: Position = "...../...BW/..W.B w".parse().unwrap();
    // Both questions at once (two threads).
    let both = Settings {
        threads: 2,
        ..settings()
    };
    let id = sessions.create(&root, None, both).unwrap().id;
    let rec = run(&sessions, id, &Control::default(), logs.path()).unwrap();
    assert_eq!(rec.value.map(|v| v.name()), Some("draw"));
    assert_eq!(rec.goals.len(), 2);
    assert!(
        rec.goals
            .iter()
            .all(|g| g.outcome.name() == "disproven" && g.verified == Some(true))
    );
    let curve = sessions.curve(id).unwrap();
    assert!(curve.iter().any(|(g, _)| *g == 0) && curve.iter().any(|(g, _)| *g == 1));
}

/// A damaged first-level tree (a broken link, a lost chunk) is refused by name when it is
/// loaded, never followed into a panic or a loop.
#[test]
fn a_damaged_tree_is_refused_when_loaded() {
    use fanorona::session::codec;
    use fanorona::session::store::{Table, Write};
    let mem = Arc::new(MemStore::new());
    let store: Arc<dyn Store> = mem.clone();
    let sessions = Sessions::open(store.clone(), false).unwrap();
    let logs = tempfile::tempdir().unwrap();
    let root = Position::initial("3x7".parse().unwrap());
    let id = sessions.create(&root, None, settings()).unwrap().id;
    let rec = run(&sessions, id, &Control::default(), logs.path()).unwrap();
    let size = rec.goals[0].first_level;
    let mut nodes = sessions.load_tree(id, 0, root.board(), size).unwrap();
    // Too few nodes for the record.
    assert!(sessions.load_tree(id, 0, root.board(), size + 1).is_err());
    // A child whose parent comes after it.
    nodes[3].parent = 9;
    store
        .apply(&[Write::put(
            Table::Nodes,
            codec::chunk_key(id, 0, 0),
            codec::encode_chunk(&nodes[..nodes.len().min(codec::CHUNK)], 0),
        )])
        .unwrap();
    let e = sessions
        .load_tree(id, 0, root.board(), size)
        .unwrap_err()
        .to_string();
    assert!(e.contains("broken link"), "{e}");
}

/// The daemon's worker goes past a session whose record is damaged and solves the next, and a
/// damaged rote entry is left out rather than failing the sessions of its board.
#[test]
fn the_worker_skips_a_damaged_record() {
    use fanorona::config::Config;
    use fanorona::daemon::{DataDir, Service};
    use fanorona::session::codec;
    use fanorona::session::store::{Table, Write};
    let store: Arc<dyn Store> = Arc::new(MemStore::new());
    let sessions = Sessions::open(store.clone(), false).unwrap();
    let root = Position::initial("3x5".parse().unwrap());
    let broken = sessions.create(&root, None, settings()).unwrap().id;
    let good = sessions.create(&root, None, settings()).unwrap().id;
    // A damaged record, and a damaged rote entry of the same board (only a shortcut).
    let mut rote_key = codec::rote_prefix(root.board());
    rote_key.extend([9; 26]);
    store
        .apply(&[
            Write::put(Table::Sessions, codec::session_key(broken), vec![1, b'{']),
            Write::put(Table::Rote, rote_key, vec![1]),
        ])
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let service = Service::new(sessions, Config::defaults(), DataDir::new(dir.path()), true);
    let shutdown = fanorona::daemon::Shutdown::new();
    std::thread::scope(|s| {
        s.spawn(|| service.work(&shutdown));
        let deadline = Instant::now() + Duration::from_secs(60);
        while service.sessions.get(good).unwrap().state != State::Solved {
            assert!(Instant::now() < deadline, "the good session was not solved");
            std::thread::sleep(Duration::from_millis(5));
        }
        shutdown.trigger();
    });
    assert!(service.sessions.get(broken).is_err());
    assert_eq!(
        service.sessions.get(good).unwrap().value.map(|v| v.name()),
        Some("white")
    );
}

/// A daemon past its memory bound: the running session checkpoints and pauses itself, saying
/// why, and a resume (with room again) goes on from that checkpoint.
#[test]
fn a_session_past_the_memory_bound_pauses_itself_and_resumes() {
    let sessions = Sessions::open(Arc::new(MemStore::new()), false).unwrap();
    let logs = tempfile::tempdir().unwrap();
    // Long without tables: still open when the bound is first checked, after a second.
    let root = Position::initial("9x3".parse().unwrap());
    let id = sessions.create(&root, None, settings()).unwrap().id;
    let control = Control::default();
    // Any process takes more than a byte: the bound is passed at the first progress line.
    control.memory_bound.store(1, Ordering::SeqCst);
    let paused = run(&sessions, id, &control, logs.path()).unwrap();
    assert_eq!(paused.state, State::Paused);
    let why = paused.error.clone().unwrap_or_default();
    assert!(why.contains("memory_bound"), "{why}");
    let g = paused.goals[0].clone();
    assert_eq!(g.outcome.name(), "open", "paused before it was decided");
    assert!(g.first_level > 1 && g.iterations > 0);
    let tree = sessions
        .load_tree(id, 0, root.board(), g.first_level)
        .unwrap();
    assert_eq!(tree.len() as u64, g.first_level);

    // Room again: resumed, it goes on from there until asked to stop.
    control.memory_bound.store(0, Ordering::SeqCst);
    control.clear();
    let resumed = sessions.set_state(id, State::Running).unwrap();
    assert_eq!(resumed.error, None);
    let again = std::thread::scope(|s| {
        let h = s.spawn(|| run(&sessions, id, &control, logs.path()));
        std::thread::sleep(Duration::from_millis(1500));
        control.request_stop();
        h.join().unwrap()
    })
    .unwrap();
    assert_eq!(again.state, State::Running);
    assert!(again.goals[0].iterations > g.iterations);
    assert!(again.goals[0].nodes > g.nodes);
}
