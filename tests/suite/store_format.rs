//! Stores written by earlier builds stay readable: `tests/data/store-v1` is a store of format
//! 1 (a solved 3x5 session, made by `fanorona --data-dir tests/data/store-v1 solve 3x5` before
//! format 2) and `tests/data/store-v2` one of format 2 (the same, made before format 3, both
//! questions searched), `tests/data/store-v3` one of format 3 (made before format 4), and
//! `tests/data/store-v4` one of format 4 (a solved 3x7 session with 20 ms checkpoints, made
//! before format 5), upgraded on open by the steps of `migrations/`. A change of the
//! stored layout must bump the format and add a step, or these tests fail.

use std::path::Path;

use fanorona::config::Config;
use fanorona::daemon::{DataDir, open_sessions};
use fanorona::search::Outcome;
use fanorona::session::State;
use fanorona::session::store::Table;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A copy of the fixture store `name` opened (so upgraded in place), its format record
/// checked to be this build's.
fn upgraded(name: &str) -> (tempfile::TempDir, DataDir, fanorona::session::Sessions) {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&Path::new("tests/data").join(name), tmp.path());
    let dir = DataDir::new(tmp.path());
    let sessions = open_sessions(&dir, &Config::defaults()).unwrap();
    let format = sessions
        .store()
        .get(Table::Meta, b"format")
        .unwrap()
        .unwrap();
    assert_eq!(format, fanorona::session::format::FORMAT.to_be_bytes());
    (tmp, dir, sessions)
}

#[test]
fn a_format_1_store_is_upgraded_and_keeps_its_session_curve_tree_and_rote_entries() {
    // Upgraded in place: the format record says so, and the record has the new fields.
    let (_tmp, _dir, sessions) = upgraded("store-v1");
    let s = sessions.get(1).unwrap();
    assert_eq!(
        s.settings.threads, 1,
        "format 1 sessions searched one question at a time"
    );
    assert_eq!(s.state, State::Solved);
    assert_eq!(
        s.settings.init,
        fanorona::search::Init::Mobility,
        "sessions before first numbers from material had them from mobility"
    );
    assert_eq!(s.value.map(|v| v.name()), Some("white"));
    assert_eq!(s.root, "BBBBB/BW.BW/WWWWW w");
    let g = &s.goals[0];
    assert_eq!((g.nodes, g.iterations, g.first_level), (1689, 30, 125));
    assert_eq!(sessions.curve(1).unwrap().len(), 30);
    let tree = sessions
        .load_tree(1, 0, "3x5".parse().unwrap(), 125)
        .unwrap();
    assert_eq!(tree.len(), 125);
    assert_eq!(tree[0].pn, 0, "the root is proven");
    let rote = sessions.rote(None).unwrap();
    assert!(!rote.is_empty());
    assert!(
        rote.iter()
            .any(|(k, e)| k.pos.to_string() == s.root && e.proven && e.best_move.is_some())
    );
}

#[test]
fn a_format_2_store_is_upgraded_to_rkyv_node_chunks_and_keeps_its_tree() {
    let (_tmp, dir, sessions) = upgraded("store-v2");
    // Every chunk now an archive (its version byte), and the tree as it was: the same
    // numbers as the format 1 store of the same solve.
    let mut versions = Vec::new();
    sessions
        .store()
        .scan(Table::Nodes, &[], &mut |_, v| versions.push(v[0]))
        .unwrap();
    assert!(!versions.is_empty());
    assert!(
        versions
            .iter()
            .all(|&v| v == fanorona::session::codec::NODES_VERSION),
        "{versions:?}"
    );
    let s = sessions.get(1).unwrap();
    assert_eq!(s.state, State::Solved);
    assert_eq!(s.value.map(|v| v.name()), Some("white"));
    assert_eq!(s.settings.threads, 2);
    let g = &s.goals[0];
    assert_eq!((g.nodes, g.iterations, g.first_level), (1689, 30, 125));
    let tree = sessions
        .load_tree(1, 0, "3x5".parse().unwrap(), 125)
        .unwrap();
    assert_eq!(tree.len(), 125);
    assert_eq!(tree[0].pn, 0, "the root is proven");
    assert_eq!(tree[0].pos.to_string(), s.root);
    // The same tree as the format 1 fixture's (both were made by the same search).
    let (_tmp1, _, old) = upgraded("store-v1");
    let tree1 = old.load_tree(1, 0, "3x5".parse().unwrap(), 125).unwrap();
    for (a, b) in tree.iter().zip(&tree1) {
        assert_eq!(
            (
                a.pos, a.pn, a.dn, a.parent, a.first, a.count, a.expanded, a.since
            ),
            (
                b.pos, b.pn, b.dn, b.parent, b.first, b.count, b.expanded, b.since
            )
        );
    }
    // Opened again: nothing more to upgrade, the same tree.
    drop(sessions);
    let again = open_sessions(&dir, &Config::defaults()).unwrap();
    assert_eq!(
        again
            .load_tree(1, 0, "3x5".parse().unwrap(), 125)
            .unwrap()
            .len(),
        125
    );
}

/// `tests/data/store-v3`: a store of format 3 (`fanorona --data-dir DIR solve 3x5` before
/// format 4). Its chunks are not rewritten: they read as written by no checkpoint, with no
/// patches, and hold the tree the search left.
#[test]
fn a_format_3_store_is_upgraded_without_rewriting_its_chunks() {
    let (_tmp, _dir, sessions) = upgraded("store-v3");
    let mut versions = Vec::new();
    sessions
        .store()
        .scan(Table::Nodes, &[], &mut |_, v| versions.push(v[0]))
        .unwrap();
    assert_eq!(
        versions,
        vec![2, 2],
        "one chunk a question, still unstamped"
    );
    let s = sessions.get(1).unwrap();
    assert_eq!(s.state, State::Solved);
    assert_eq!(s.value.map(|v| v.name()), Some("white"));
    let g = &s.goals[0];
    assert_eq!((g.nodes, g.iterations, g.first_level), (1180, 25, 105));
    let saved = sessions
        .load_saved(1, 0, "3x5".parse().unwrap(), 105)
        .unwrap();
    assert_eq!((saved.nodes.len(), saved.seq), (105, 0));
    assert!(saved.patches.is_empty());
    assert_eq!(saved.nodes[0].pn, 0, "the root is proven");
    assert_eq!(saved.nodes[0].pos.to_string(), s.root);
    let mut children = saved.nodes[0].first..saved.nodes[0].first + saved.nodes[0].count;
    assert!(children.clone().any(|c| saved.nodes[c as usize].pn == 0));
    assert!(children.all(|c| saved.nodes[c as usize].parent == 0));
}

/// A session record read and written again is the same bytes: the typed fields (the
/// attacker, the outcome, the value) are written as the words the stores hold. The v3
/// fixture's records were written by a build of format 3 and not rewritten since.
#[test]
fn session_records_are_written_back_byte_for_byte() {
    use fanorona::session::codec::{decode_session, encode_session};
    let (_tmp, _dir, sessions) = upgraded("store-v3");
    let mut records = Vec::new();
    sessions
        .store()
        .scan(Table::Sessions, &[], &mut |_, v| records.push(v.to_vec()))
        .unwrap();
    assert!(!records.is_empty());
    for raw in records {
        let text = String::from_utf8_lossy(&raw[1..]).to_string();
        for word in [
            "\"attacker\":\"white\"",
            "\"outcome\":\"proven\"",
            "\"value\":\"white\"",
        ] {
            assert!(text.contains(word), "{word} in {text}");
        }
        assert_eq!(
            encode_session(&decode_session(&raw).unwrap()),
            raw,
            "{text}"
        );
    }
}

/// `tests/data/store-v4`: a store of format 4, its chunks and patches in sled. Upgraded, each
/// is in a record file of its own, the trees load as the search left them, and a byte
/// changed in one file is that record's error alone.
#[test]
fn a_format_4_store_is_upgraded_to_record_files() {
    let (tmp, _dir, sessions) = upgraded("store-v4");
    let mut raw = 0;
    for table in [Table::Nodes, Table::Patches] {
        sessions
            .store()
            .scan(table, &[], &mut |_, v| {
                assert!(v[0] < 0x80, "read through its file");
                raw += 1;
            })
            .unwrap();
    }
    let files: Vec<_> = std::fs::read_dir(tmp.path().join("store/records"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), raw, "one file a chunk or patch");
    let s = sessions.get(1).unwrap();
    assert_eq!(s.state, State::Solved);
    assert_eq!(s.value.map(|v| v.name()), Some("white"));
    let board = "3x7".parse().unwrap();
    let mut patches = 0;
    for (g, goal) in s.goals.iter().enumerate() {
        let saved = sessions
            .load_saved(1, g as u8, board, goal.first_level)
            .unwrap();
        assert_eq!(saved.nodes.len() as u64, goal.first_level);
        assert_eq!(saved.nodes[0].pos.to_string(), s.root);
        match goal.outcome {
            Outcome::Proven => assert_eq!(saved.nodes[0].pn, 0),
            Outcome::Disproven => assert_eq!(saved.nodes[0].dn, 0),
            Outcome::Unknown => assert!(saved.nodes[0].pn > 0 && saved.nodes[0].dn > 0),
        }
        patches += saved.patches.len();
    }
    // (The fixture's checkpoints wrote no patch; patches take the same step, and the tests
    // of checkpoints on a sled store write and fold them in record files.)
    assert_eq!(patches, 0);
    // One byte of the largest file changed: that record fails, with its file named.
    let largest = files
        .iter()
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let mut bytes = std::fs::read(largest).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 0x40;
    std::fs::write(largest, bytes).unwrap();
    let failed = (0..s.goals.len())
        .filter_map(|g| {
            sessions
                .load_saved(1, g as u8, board, s.goals[g].first_level)
                .err()
        })
        .map(|e| e.to_string())
        .collect::<Vec<_>>();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].contains("checksum"), "{}", failed[0]);
    assert!(sessions.get(1).is_ok(), "the session's record still reads");
}
