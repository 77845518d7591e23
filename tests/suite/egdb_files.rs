//! Endgame tables: an independent re-solve of small boards, verification, and damaged or
//! foreign files refused by name.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use fanorona::egdb::build::symmetric::convert_slice;
use fanorona::egdb::file::{FileError, Kind, SliceFile, build_state_path, slice_path};
use fanorona::egdb::scheme::{Index, Scheme};
use fanorona::egdb::verify::{verify_sample, verify_slice};
use fanorona::egdb::{BuildOptions, Database, Material, Slice, Wdl, build, build_pair_and_needs};
use fanorona::movegen::for_each_child;
use fanorona::{Board, Color, Position};

fn options() -> BuildOptions {
    crate::common::tables::quiet()
}

/// `options` under the symmetric index.
fn symmetric() -> BuildOptions {
    BuildOptions {
        index: Scheme::Symmetric,
        ..options()
    }
}

/// Asserts that a finished build left nothing but its tables and their manifest in `dir` (no
/// working, state, lock or temporary file).
fn assert_only_tables(dir: &Path) {
    let left: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.ends_with(".wdl") && n != "SHA256SUMS")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Asserts that the WDL slices of `board` up to `pieces` pieces under `a` and `b` are the
/// same, byte for byte.
fn assert_same_tables(a: &Path, b: &Path, board: Board, pieces: usize) {
    for m in (2..=pieces).flat_map(Material::with_pieces) {
        let x = fs::read(slice_path(a, board, m, Kind::Wdl)).unwrap();
        let y = fs::read(slice_path(b, board, m, Kind::Wdl)).unwrap();
        assert!(x == y, "slice {m} differs");
    }
}

/// Every (us, them) with 1.. pieces each and at most `max` in all, on `board`.
fn all_positions(board: Board, max: usize) -> Vec<(u64, u64)> {
    let n = board.size();
    let mut out = Vec::new();
    for occupied in 0u64..(1 << n) {
        let m = occupied.count_ones() as usize;
        if !(2..=max).contains(&m) {
            continue;
        }
        // Every split of the occupied points between the two sides.
        let pts: Vec<u64> = (0..n)
            .filter(|&p| occupied >> p & 1 == 1)
            .map(|p| 1 << p)
            .collect();
        for mask in 1..(1u32 << m) - 1 {
            let us = pts
                .iter()
                .enumerate()
                .filter(|(i, _)| mask >> i & 1 == 1)
                .fold(0, |a, (_, b)| a | b);
            out.push((us, occupied & !us));
        }
    }
    out
}

/// Value iteration straight from the rules: no index, no unmoves, no files.
fn solve_naively(board: Board, max: usize) -> HashMap<(u64, u64), Wdl> {
    let positions = all_positions(board, max);
    let mut value: HashMap<(u64, u64), Option<Wdl>> =
        positions.iter().map(|&p| (p, None)).collect();
    loop {
        let mut changed = false;
        for &(us, them) in &positions {
            if value[&(us, them)].is_some() {
                continue;
            }
            let pos = Position::from_parts(board, us, them, Color::White);
            let (mut any, mut win, mut all_win) = (false, false, true);
            for_each_child(&pos, |c| {
                any = true;
                let v = if c.us() == 0 {
                    Some(Wdl::Loss)
                } else {
                    value[&(c.us(), c.them())]
                };
                match v {
                    Some(Wdl::Loss) => win = true,
                    Some(Wdl::Win) => {}
                    _ => all_win = false,
                }
            });
            let decided = if win {
                Some(Wdl::Win)
            } else if !any || all_win {
                Some(Wdl::Loss)
            } else {
                None
            };
            if decided.is_some() {
                value.insert((us, them), decided);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    value
        .into_iter()
        .map(|(k, v)| (k, v.unwrap_or(Wdl::Draw)))
        .collect()
}

#[test]
fn small_boards_agree_with_an_independent_value_iteration() {
    for (board, max, index) in [
        ("3x3", 5, Scheme::Paper),
        ("3x5", 4, Scheme::Paper),
        ("3x3", 5, Scheme::Symmetric),
        ("3x5", 5, Scheme::Symmetric),
    ] {
        let board: Board = board.parse().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let o = BuildOptions { index, ..options() };
        build(dir.path(), board, max, &o, &mut |_| {}).unwrap();
        let db = Database::new(dir.path(), board);
        let naive = solve_naively(board, max);
        let mut wins = 0;
        for (&(us, them), &v) in &naive {
            assert_eq!(
                db.probe_sides(us, them),
                Some(v),
                "{board} us {us:b} them {them:b}"
            );
            wins += (v == Wdl::Win) as usize;
        }
        assert!(wins > 0 && wins < naive.len());
        // The transpose shares the tables.
        if board.rows() != board.cols() {
            let t = board.transposed();
            let pos = Position::from_parts(board, 0b1, 0b110_0000, Color::White);
            assert_eq!(db.probe(&pos.transposed()), db.probe(&pos));
            assert_eq!(
                Database::new(dir.path(), t).probe(&pos.transposed()),
                db.probe(&pos)
            );
        }
    }
}

#[test]
fn verify_passes_on_built_tables_and_catches_a_wrong_entry() {
    let board = Board::STANDARD;
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), board, 3, &options(), &mut |_| {}).unwrap();
    let db = Database::new(dir.path(), board);
    for m in ["1-1", "2-1", "1-2"] {
        let m: Material = m.parse().unwrap();
        let slice = Slice::new(board, m).unwrap();
        let file = db.slice(m).unwrap().unwrap();
        assert_eq!(
            verify_slice(&db, &Index::Paper(slice), file.payload(), None, 2).mismatches,
            0,
            "{m}"
        );
    }
    // Change one entry of 2-1 in memory: one-ply consistency must notice.
    let m: Material = "2-1".parse().unwrap();
    let slice = Slice::new(board, m).unwrap();
    let mut payload = db.slice(m).unwrap().unwrap().payload().to_vec();
    payload[100] ^= 0b01;
    let check = verify_slice(&db, &Index::Paper(slice), &payload, None, 2);
    assert!(check.mismatches >= 1);
    assert_eq!(check.first[0].index / 4, 100);
}

#[test]
fn damaged_or_foreign_files_are_refused_by_name() {
    let board = Board::STANDARD;
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), board, 3, &options(), &mut |_| {}).unwrap();
    let m: Material = "2-1".parse().unwrap();
    let path = slice_path(dir.path(), board, m, Kind::Wdl);
    let good = fs::read(&path).unwrap();
    let open = || SliceFile::open(dir.path(), board, m, Kind::Wdl).map(|f| f.is_some());
    assert!(open().unwrap());

    // One flipped bit in the payload.
    let mut bad = good.clone();
    bad[64 + 1000] ^= 0b100;
    fs::write(&path, &bad).unwrap();
    let e = open().unwrap_err();
    assert!(matches!(e, FileError::PayloadChecksum { .. }), "{e}");
    assert!(e.to_string().contains("2-1.wdl"), "{e}");

    // One flipped bit in the header.
    let mut bad = good.clone();
    bad[14] ^= 1;
    fs::write(&path, &bad).unwrap();
    assert!(matches!(
        open().unwrap_err(),
        FileError::HeaderChecksum { .. }
    ));

    // Cut short.
    fs::write(&path, &good[..good.len() - 1]).unwrap();
    assert!(matches!(open().unwrap_err(), FileError::Truncated { .. }));

    // Not ours at all.
    fs::write(
        &path,
        b"hello, this is not an endgame table at all, not even close to it....",
    )
    .unwrap();
    assert!(matches!(open().unwrap_err(), FileError::Foreign { .. }));

    // Another slice's file under this name.
    fs::copy(
        slice_path(dir.path(), board, "1-2".parse().unwrap(), Kind::Wdl),
        &path,
    )
    .unwrap();
    assert!(matches!(open().unwrap_err(), FileError::Mismatch { .. }));

    // A damaged table stops a build that needs it, by name; restoring it lets the build go on.
    let e = build(dir.path(), board, 4, &options(), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("2-1.wdl"), "{e}");
    fs::write(&path, &good).unwrap();
    let reports = build(dir.path(), board, 4, &options(), &mut |_| {}).unwrap();
    assert!(
        reports
            .iter()
            .filter(|r| r.material.pieces() <= 3)
            .all(|r| !r.built)
    );
    assert!(
        reports
            .iter()
            .filter(|r| r.material.pieces() == 4)
            .all(|r| r.built)
    );
}

#[test]
fn a_half_written_file_is_not_taken_for_a_finished_one() {
    let board: Board = "3x3".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m: Material = "1-1".parse().unwrap();
    let path = slice_path(dir.path(), board, m, Kind::Wdl);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path.with_extension("wdl.tmp"), b"partial").unwrap();
    assert!(
        SliceFile::open(dir.path(), board, m, Kind::Wdl)
            .unwrap()
            .is_none()
    );
    let reports = build(dir.path(), board, 2, &options(), &mut |_| {}).unwrap();
    assert!(reports.iter().all(|r| r.built));
}

#[test]
fn distances_count_the_plies_to_a_capture_or_the_end() {
    let board: Board = "3x5".parse().unwrap();
    let plain = tempfile::tempdir().unwrap();
    let with = tempfile::tempdir().unwrap();
    build(plain.path(), board, 4, &options(), &mut |_| {}).unwrap();
    let mut o = options();
    o.distances = true;
    build(with.path(), board, 4, &o, &mut |_| {}).unwrap();
    let db = Database::new(with.path(), board);
    let mut longest = 0;
    for m in Material::with_pieces(4) {
        // The values do not depend on keeping distances.
        let a = fs::read(slice_path(plain.path(), board, m, Kind::Wdl)).unwrap();
        let b = fs::read(slice_path(with.path(), board, m, Kind::Wdl)).unwrap();
        assert_eq!(a, b, "{m}");
        let slice = Slice::new(board, m).unwrap();
        for i in 0..slice.len() {
            let (us, them) = slice.unrank(i);
            let pos = Position::from_parts(board, us, them, Color::White);
            let (value, distance) = (db.probe(&pos).unwrap(), db.distance(&pos));
            let mut children = Vec::new();
            for_each_child(&pos, |c| children.push(c));
            let capture = fanorona::movegen::has_capture(&pos);
            match value {
                Wdl::Draw => assert_eq!(distance, None),
                _ if capture || children.is_empty() => assert_eq!(distance, Some(0)),
                Wdl::Win => {
                    // Some move reaches a loss exactly one ply nearer the end.
                    let k = distance.unwrap();
                    assert!(
                        children.iter().any(
                            |c| db.probe(c) == Some(Wdl::Loss) && db.distance(c) == Some(k - 1)
                        ),
                        "{pos}"
                    );
                    assert!(
                        !children
                            .iter()
                            .any(|c| db.probe(c) == Some(Wdl::Loss)
                                && db.distance(c).unwrap() + 1 < k),
                        "{pos}"
                    );
                    longest = longest.max(k);
                }
                Wdl::Loss => {
                    // Every move reaches a win; the longest defence is one ply more.
                    let k = distance.unwrap();
                    let most = children
                        .iter()
                        .map(|c| db.distance(c).unwrap())
                        .max()
                        .unwrap();
                    assert_eq!(most + 1, k, "{pos}");
                }
            }
        }
    }
    assert!(longest > 2, "{longest}");
    // verify checks the distances too, and notices a wrong one.
    for m in Material::with_pieces(4) {
        let slice = Slice::new(board, m).unwrap();
        let wdl = fs::read(slice_path(with.path(), board, m, Kind::Wdl)).unwrap();
        let mut dtc = fs::read(slice_path(with.path(), board, m, Kind::Distance)).unwrap();
        let (wdl, dtc_payload) = (&wdl[64..], &mut dtc[64..]);
        assert_eq!(
            verify_slice(&db, &Index::Paper(slice), wdl, Some(dtc_payload), 2).mismatches,
            0,
            "{m}"
        );
        let i = dtc_payload.iter().position(|&a| a > 2).unwrap();
        dtc_payload[i] += 1;
        assert_eq!(
            verify_slice(&db, &Index::Paper(slice), wdl, Some(dtc_payload), 2).mismatches,
            1,
            "{m}"
        );
    }
}

#[test]
fn a_build_logging_to_a_file_reports_its_first_pass_and_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let options = BuildOptions {
        report_every: Some(std::time::Duration::from_millis(1)),
        ..options()
    };
    let mut lines = Vec::new();
    build(dir.path(), Board::STANDARD, 5, &options, &mut |l| {
        lines.push(l.to_string())
    })
    .unwrap();
    // The 4-1 slice's first pass (6.1 million positions) takes far longer than 1 ms.
    let passes: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("5x9 4-1 first pass: ") && l.contains("% ("))
        .collect();
    assert!(!passes.is_empty(), "{lines:#?}");
    assert!(
        passes
            .iter()
            .all(|l| l.contains(" of 6108795 positions) in ")),
        "{passes:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("5x9 4-1 + 1-4: round 1 (")),
        "{lines:#?}"
    );
}

/// A symmetric build reports each slice's wall time and its processor time (all threads),
/// which may not exceed what the processors give in that time; the phases say theirs too.
#[test]
fn a_symmetric_build_reports_its_processor_time() {
    let dir = tempfile::tempdir().unwrap();
    let o = symmetric();
    let mut lines = Vec::new();
    build(dir.path(), Board::STANDARD, 5, &o, &mut |l| {
        lines.push(l.to_string())
    })
    .unwrap();
    // "5x9 4-1: 1528575 entries, 8 rounds, 0.52 s (processor 0.9 s), peak resident ..."
    let times = |l: &str| -> Option<(f64, f64)> {
        let (_, rest) = l.split_once(" rounds, ")?;
        let (wall, rest) = rest.split_once(" s (processor ")?;
        let (cpu, _) = rest.split_once(" s)")?;
        Some((wall.parse().ok()?, cpu.parse().ok()?))
    };
    let slices: Vec<(f64, f64)> = lines
        .iter()
        .filter(|l| l.contains(" entries, "))
        .map(|l| times(l).unwrap_or_else(|| panic!("{l}")))
        .collect();
    // Every slice of 2 to 5 pieces: 1-1, 2-1 1-2, 3-1 2-2 1-3, and 4-1 to 1-4.
    assert_eq!(slices.len(), 10, "{lines:#?}");
    // The clock is the process's: in this test binary other tests' threads count too, so the
    // bound is the machine's processors where it has more than the build's threads.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for &(wall, cpu) in &slices {
        let most = o.threads.max(cores) as f64 * wall + 0.2;
        assert!(cpu >= 0.0 && cpu <= most, "{lines:#?}");
    }
    // The largest pair takes a measurable share of a processor.
    assert!(slices.iter().any(|&(_, cpu)| cpu > 0.0), "{lines:#?}");
    for phase in ["first pass 4-1 ", "rounds ("] {
        assert!(
            lines
                .iter()
                .any(|l| l.contains(phase) && l.contains(" s (processor ")),
            "{phase}: {lines:#?}"
        );
    }
}

/// The symmetric index's tables hold the values of the paper's, position by position (5x5
/// up to 5 pieces, every position of every slice), pass `verify` with their copies, and a
/// wrong entry is caught.
#[test]
fn symmetric_tables_agree_with_the_papers_and_verify() {
    let board: Board = "5x5".parse().unwrap();
    let (paper, sym) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    build(paper.path(), board, 5, &options(), &mut |_| {}).unwrap();
    let o = symmetric();
    build(sym.path(), board, 5, &o, &mut |_| {}).unwrap();
    let (p, s) = (
        Database::new(paper.path(), board),
        Database::new(sym.path(), board),
    );
    for m in (2..=5).flat_map(Material::with_pieces) {
        let slice = Slice::new(board, m).unwrap();
        for (us, them) in slice.positions(0, slice.len()) {
            assert_eq!(s.probe_sides(us, them), p.probe_sides(us, them), "{m}");
        }
        let file = s.slice(m).unwrap().unwrap();
        assert_eq!(file.slice.scheme(), Scheme::Symmetric);
        assert!(file.slice.len() * 2 < slice.len(), "{m}");
        assert_eq!(
            verify_slice(&s, &file.slice, file.payload(), None, 2).mismatches,
            0,
            "{m}"
        );
    }
    // Converting the paper's files gives the symmetric build's, byte for byte.
    for m in (2..=5).flat_map(Material::with_pieces) {
        let converted = convert_slice(paper.path(), board, m, 2).unwrap();
        assert!(converted.is_some_and(|(old, new)| new < old), "{m}");
        let a = fs::read(slice_path(paper.path(), board, m, Kind::Wdl)).unwrap();
        let b = fs::read(slice_path(sym.path(), board, m, Kind::Wdl)).unwrap();
        assert!(a == b, "slice {m}");
        assert_eq!(convert_slice(paper.path(), board, m, 2).unwrap(), None);
    }
    let m: Material = "3-2".parse().unwrap();
    let file = s.slice(m).unwrap().unwrap();
    let mut payload = file.payload().to_vec();
    payload[500] ^= 0b10;
    assert!(verify_slice(&s, &file.slice, &payload, None, 2).mismatches >= 1);
    // A sample checks as many entries as asked, and finds damage spread through a slice.
    let good = verify_sample(&s, &file.slice, file.payload(), 1000, 2);
    assert_eq!((good.positions, good.mismatches), (1000, 0));
    for b in payload.iter_mut().step_by(7) {
        *b ^= 0b0101_0101;
    }
    let bad = verify_sample(&s, &file.slice, &payload, 1000, 2);
    assert!(bad.mismatches > 50, "{}", bad.mismatches);
}

/// A symmetric build killed (SIGKILL) again and again, in its first passes and its rounds,
/// then run to the end, writes the same files as one never stopped; no slice appears under its
/// final name unfinished.
#[test]
fn a_killed_symmetric_build_resumes_to_the_same_files() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let board = Board::STANDARD;
    let (whole, killed) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = symmetric();
    build(whole.path(), board, 5, &o, &mut |_| {}).unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_fanorona"))
            .args(["db", "build", "--board", "5x9", "--pieces", "5"])
            .args([
                "--index",
                "symmetric",
                "--checkpoint-every",
                "20ms",
                "--threads",
                "2",
            ])
            .arg("--db")
            .arg(killed.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let dir = killed.path().join("5x9");
    let mut kills = 0;
    let mut resumed = false;
    for wait_ms in [150u64, 300, 450, 600, 800, 1000, 1300] {
        let mut child = run();
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(wait_ms) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills += 1;
        }
        let out = child.wait_with_output().unwrap();
        resumed |= String::from_utf8_lossy(&out.stderr).contains("resuming");
        // Whatever is under a final name opens whole.
        let db = Database::new(killed.path(), board);
        for m in (2..=5).flat_map(Material::with_pieces) {
            db.slice(m).unwrap();
        }
    }
    let out = run().wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        kills >= 2,
        "{kills} kills: the build ended too soon to be killed"
    );
    assert!(resumed, "no run said it resumed");
    assert_same_tables(whole.path(), killed.path(), board, 5);
    assert_only_tables(&dir);
}

/// The forward check: df-pn over 4 pieces agrees with every 5-piece answer it decides, and
/// notices a 5-piece table whose wins and losses were swapped (written with a valid
/// checksum, so only the values are wrong).
#[test]
fn a_search_one_layer_down_checks_a_layer_of_tables() {
    use fanorona::search::table_check::forward_check;
    let board = Board::STANDARD;
    let dir = tempfile::tempdir().unwrap();
    let o = symmetric();
    build(dir.path(), board, 5, &o, &mut |_| {}).unwrap();
    let (tables, below) = (
        Database::new(dir.path(), board),
        Database::capped(dir.path(), board, 4),
    );
    assert_eq!(below.max_pieces(), 4);
    let good = forward_check(&tables, &below, 5, 60, 20_000, 2);
    assert_eq!(good.positions, 60);
    assert!(good.decided > 60, "{good:?}");
    assert_eq!(good.agreed, good.decided, "{:?}", good.disagreements);

    for m in Material::with_pieces(5) {
        let file = tables.slice(m).unwrap().unwrap();
        // Win (01) and loss (10) swapped in every entry.
        let swapped: Vec<u8> = file
            .payload()
            .iter()
            .map(|&b| ((b & 0x55) << 1) | ((b & 0xAA) >> 1))
            .collect();
        fanorona::egdb::writer::write_slice(dir.path(), &file.slice, Kind::Wdl, &swapped).unwrap();
    }
    let tables = Database::new(dir.path(), board);
    let bad = forward_check(&tables, &below, 5, 60, 20_000, 2);
    assert!(bad.agreed < bad.decided / 2, "{bad:?}");
    assert!(!bad.disagreements.is_empty());
}

/// Why `dir`'s tables of `board` are refused as a whole.
fn refusal(dir: &Path, board: Board) -> String {
    Database::open_whole(dir, board).err().unwrap().to_string()
}

fn remove_slice(dir: &Path, board: Board, m: &str) {
    fs::remove_file(slice_path(dir, board, m.parse().unwrap(), Kind::Wdl)).unwrap();
}

/// A slice file far above the built tables (a stray copy) is named, not the dozens of slices
/// between; a slice missing among built ones is named as before.
#[test]
fn a_stray_slice_file_is_named() {
    let board: Board = "3x5".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), board, 4, &options(), &mut |_| {}).unwrap();
    let stray = slice_path(dir.path(), board, "5-5".parse().unwrap(), Kind::Wdl);
    fs::copy(
        slice_path(dir.path(), board, "2-2".parse().unwrap(), Kind::Wdl),
        &stray,
    )
    .unwrap();
    let e = refusal(dir.path(), board);
    assert!(e.contains("no slice of 5 pieces is built"), "{e}");
    assert!(e.contains(&stray.display().to_string()), "{e}");
    assert!(e.len() < 400, "{e}");
    fs::remove_file(&stray).unwrap();
    remove_slice(dir.path(), board, "3-1");
    let e = refusal(dir.path(), board);
    assert!(e.contains("(slice 3-1 missing)"), "{e}");
    assert!(e.contains("build the missing slices with"), "{e}");
}

/// Tables whose top layer is being built are refused (a search would take its missing
/// positions for unknown ones), naming the build under way and the whole layers below.
#[test]
fn a_layer_under_construction_is_named_with_the_layers_below() {
    let board: Board = "3x5".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = symmetric();
    build(dir.path(), board, 4, &o, &mut |_| {}).unwrap();
    // 3-1 and 1-3 are built; 2-2's build is under way.
    remove_slice(dir.path(), board, "2-2");
    let state = build_state_path(dir.path(), board, "2-2".parse().unwrap());
    fs::write(
        &state,
        r#"{"first_pass":[10],"rounds":0,"finishing":false,"seconds":1.0}"#,
    )
    .unwrap();
    let e = refusal(dir.path(), board);
    assert!(e.contains("(slice 2-2 missing)"), "{e}");
    assert!(e.contains("the 4-piece layer is being built"), "{e}");
    assert!(e.contains(&state.display().to_string()), "{e}");
    assert!(e.contains("the tables up to 3 pieces are whole"), "{e}");
    // Without the build's state it is a plain gap to build.
    fs::remove_file(&state).unwrap();
    let e = refusal(dir.path(), board);
    assert!(e.contains("build the missing slices with"), "{e}");
}

/// A pair whose state file says it is under way but whose working files are gone (or a
/// stale working file with no state) is built over from nothing, to the same bytes.
#[test]
fn a_symmetric_pair_without_its_working_files_starts_over() {
    let board = Board::STANDARD;
    let (whole, broken) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = symmetric();
    build(whole.path(), board, 4, &o, &mut |_| {}).unwrap();
    build(broken.path(), board, 3, &o, &mut |_| {}).unwrap();
    let dir = broken.path().join("5x9");
    // 3-1's pair claims three rounds done, with no working files.
    fs::write(
        dir.join("3-1.build.json"),
        r#"{"first_pass":[198660,198660],"rounds":3,"finishing":false,"seconds":1.0}"#,
    )
    .unwrap();
    // 2-1's pair was finished by a build killed before it removed its state and lock.
    fs::write(
        dir.join("2-1.build.json"),
        r#"{"first_pass":[0,0],"rounds":2,"finishing":true,"seconds":1.0}"#,
    )
    .unwrap();
    fs::write(dir.join("2-1.build.lock"), "").unwrap();
    // 2-2 has a working file of garbage, of the right size, and no state.
    fs::write(
        dir.join("2-2.wdl.building"),
        vec![0xFFu8; 64 + 247_422usize.div_ceil(32) * 8],
    )
    .unwrap();
    let mut lines = Vec::new();
    build(broken.path(), board, 4, &o, &mut |l| {
        lines.push(l.to_string())
    })
    .unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("3-1 + 1-3: the working files are missing")),
        "{lines:?}"
    );
    assert_same_tables(whole.path(), broken.path(), board, 4);
    assert_only_tables(&dir);
}

/// A build killed in its last step, after it sealed 1-3's file (header written, cut to its
/// final length) but before it renamed it, and after 3-1 got its final name but not yet its
/// manifest line: the next run seals and renames 1-3 again, without starting the pair over,
/// records both, and leaves nothing behind. So does a finished pair without its lines (2-2).
#[test]
fn a_build_killed_between_sealing_and_renaming_a_file_finishes_it() {
    let board = Board::STANDARD;
    let (whole, killed) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = symmetric();
    build(whole.path(), board, 4, &o, &mut |_| {}).unwrap();
    build(killed.path(), board, 4, &o, &mut |_| {}).unwrap();
    let dir = killed.path().join("5x9");
    // 1-3 has 198,660 entries, not a multiple of 32: its sealed file is shorter than the
    // working one.
    fs::rename(dir.join("1-3.wdl"), dir.join("1-3.wdl.building")).unwrap();
    let manifest = fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    let cut: String = manifest
        .lines()
        .filter(|l| {
            !["3-1.wdl", "1-3.wdl", "2-2.wdl"]
                .iter()
                .any(|n| l.ends_with(n))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(cut.lines().count() + 3, manifest.lines().count());
    fs::write(dir.join("SHA256SUMS"), cut).unwrap();
    fs::write(
        build_state_path(killed.path(), board, "3-1".parse().unwrap()),
        r#"{"first_pass":[198660,198660],"rounds":5,"finishing":true,"seconds":1.0}"#,
    )
    .unwrap();
    let mut lines = Vec::new();
    build(killed.path(), board, 4, &o, &mut |l| {
        lines.push(l.to_string())
    })
    .unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("3-1 + 1-3: resuming (writing the files)")),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("starting the pair over")),
        "{lines:?}"
    );
    assert_same_tables(whole.path(), killed.path(), board, 4);
    assert_only_tables(&dir);
    assert_eq!(
        fs::read_to_string(dir.join("SHA256SUMS")).unwrap(),
        expected_manifest(&dir)
    );
}

/// The SHA-256 of a file, computed here apart from the program's own hashing.
fn sha256_hex(path: &Path) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What `sha256sum` prints for every slice file (values and distances) of a board
/// directory, sorted by name.
fn expected_manifest(dir: &Path) -> String {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".wdl") || n.ends_with(".dtc"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| format!("{}  {n}\n", sha256_hex(&dir.join(n))))
        .collect()
}

/// `sha256sum -c` on a board directory's manifest, where the tool is there.
fn assert_sha256sum_passes(dir: &Path) {
    match std::process::Command::new("sha256sum")
        .args(["-c", "--quiet", "SHA256SUMS"])
        .current_dir(dir)
        .output()
    {
        Ok(o) => assert!(o.status.success(), "{o:?}"),
        Err(e) => eprintln!("sha256sum not run: {e}"),
    }
}

/// Both builders (with distances, and the symmetric index) and `convert` leave a manifest
/// that lists every slice file with its SHA-256, as `sha256sum` writes it.
#[test]
fn a_build_keeps_a_manifest_of_its_files() {
    let board: Board = "3x5".parse().unwrap();
    let (paper, sym) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = BuildOptions {
        distances: true,
        ..options()
    };
    build(paper.path(), board, 4, &o, &mut |_| {}).unwrap();
    let o = symmetric();
    build(sym.path(), board, 4, &o, &mut |_| {}).unwrap();
    for root in [paper.path(), sym.path()] {
        let dir = root.join("3x5");
        let text = fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
        assert_eq!(text, expected_manifest(&dir), "{}", dir.display());
        assert_sha256sum_passes(&dir);
    }
    let dir = paper.path().join("3x5");
    let text = fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    // 6 slices, each with its values and its distances.
    assert_eq!(text.lines().count(), 12, "{text}");
    assert!(text.lines().any(|l| l.ends_with("  2-2.dtc")), "{text}");
    // A slice converted in place gets its new line.
    convert_slice(paper.path(), board, "2-2".parse().unwrap(), 2).unwrap();
    let after = fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    assert_ne!(after, text);
    assert_eq!(after, expected_manifest(&dir));
}

/// `db verify --quick` passes on built tables, and names a damaged file, a file not as the
/// manifest says, one missing from the manifest and one listed but absent; `db checksums`
/// writes for tables without a manifest the one their build wrote.
#[test]
fn verify_quick_compares_the_files_with_the_manifest() {
    use std::process::{Command, Output};
    let board: Board = "3x5".parse().unwrap();
    let root = tempfile::tempdir().unwrap();
    build(root.path(), board, 4, &options(), &mut |_| {}).unwrap();
    let dir = root.path().join("3x5");
    let manifest = dir.join("SHA256SUMS");
    let built = fs::read_to_string(&manifest).unwrap();
    let run = |args: &[&str]| -> Output {
        Command::new(env!("CARGO_BIN_EXE_fanorona"))
            .args(["db"])
            .args(args)
            .args(["--board", "3x5", "--db"])
            .arg(root.path())
            .output()
            .unwrap()
    };
    let quick = || run(&["verify", "--quick"]);
    let text = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let o = quick();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("3x5: 6 slice files match"),
        "{}",
        text(&o)
    );

    // Tables without a manifest pass on their headers and checksums, and `db checksums`
    // writes the manifest their build did.
    fs::remove_file(&manifest).unwrap();
    let o = quick();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("db checksums --board 3x5"),
        "{}",
        text(&o)
    );
    let o = run(&["checksums"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("3x5: 6 slice files"), "{}", text(&o));
    assert_eq!(fs::read_to_string(&manifest).unwrap(), built);

    // A file whose line is gone is named, with the command that lists it.
    let without: String = built
        .lines()
        .filter(|l| !l.ends_with(" 3-1.wdl"))
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(&manifest, without).unwrap();
    let o = quick();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("3x5 3-1.wdl: header and checksum whole, not in SHA256SUMS"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("(3-1.wdl) not in it"), "{}", text(&o));
    fs::write(&manifest, &built).unwrap();

    // A flipped byte.
    let file = dir.join("1-2.wdl");
    let good = fs::read(&file).unwrap();
    let mut bad = good.clone();
    bad[64 + 10] ^= 0x10;
    fs::write(&file, &bad).unwrap();
    let o = quick();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("3x5 1-2.wdl: DAMAGED"), "{}", text(&o));
    assert!(text(&o).contains("error: 3x5 under"), "{}", text(&o));
    fs::write(&file, &good).unwrap();

    // A whole slice file, but not the one listed (written with a valid header and checksum,
    // the manifest as it was).
    let m: Material = "2-2".parse().unwrap();
    let file = slice_path(root.path(), board, m, Kind::Wdl);
    let good = fs::read(&file).unwrap();
    let slice = SliceFile::open(root.path(), board, m, Kind::Wdl)
        .unwrap()
        .unwrap()
        .slice;
    let mut payload = good[64..].to_vec();
    payload[3] ^= 0b01;
    fanorona::egdb::writer::write_slice(root.path(), &slice, Kind::Wdl, &payload).unwrap();
    assert_ne!(fs::read_to_string(&manifest).unwrap(), built);
    fs::write(&manifest, &built).unwrap();
    let o = quick();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("3x5 2-2.wdl: MISMATCH"), "{}", text(&o));
    assert!(text(&o).contains("(2-2.wdl) MISMATCHING"), "{}", text(&o));
    let o = run(&["verify", "--quick", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["mismatching"], serde_json::json!(["2-2.wdl"]), "{v}");
    assert_eq!(
        (v["whole"].as_u64(), v["exit_code"].as_u64()),
        (Some(5), Some(1)),
        "{v}"
    );
    fs::write(&file, &good).unwrap();

    // A file listed and gone: missing (exit 2), named.
    fs::remove_file(dir.join("1-1.wdl")).unwrap();
    let o = quick();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("3x5 1-1.wdl: listed in SHA256SUMS, ABSENT"),
        "{}",
        text(&o)
    );
}

/// A pair built on its own, with the smaller pairs it reads, gives the whole build's files byte
/// for byte and leaves the pairs it does not read unbuilt; a later whole build keeps it and
/// builds only those.
#[test]
fn a_pair_builds_alone_with_what_it_reads() {
    let board: Board = "5x5".parse().unwrap();
    let (whole, alone) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = symmetric();
    build(whole.path(), board, 5, &o, &mut |_| {}).unwrap();
    let pair: Material = "2-3".parse().unwrap();
    let reports = build_pair_and_needs(alone.path(), board, pair, &o, &mut |_| {}).unwrap();
    let built: Vec<String> = reports.iter().map(|r| r.material.to_string()).collect();
    // 3-2 captures to 1-3, 2-3 to 1-2 and 2-2, 1-3 to 1-1 and 2-1: never to 4-1 or 1-4.
    assert_eq!(
        built,
        ["1-1", "2-1", "1-2", "3-1", "1-3", "2-2", "3-2", "2-3"]
    );
    for m in (2..=5).flat_map(Material::with_pieces) {
        let path = slice_path(alone.path(), board, m, Kind::Wdl);
        if built.contains(&m.to_string()) {
            let x = fs::read(slice_path(whole.path(), board, m, Kind::Wdl)).unwrap();
            assert!(fs::read(&path).unwrap() == x, "slice {m} differs");
        } else {
            assert!(!path.exists(), "{m} built though not read");
        }
    }
    assert_only_tables(&alone.path().join("5x5"));
    let rest = build(alone.path(), board, 5, &o, &mut |_| {}).unwrap();
    let new: Vec<String> = rest
        .iter()
        .filter(|r| r.built)
        .map(|r| r.material.to_string())
        .collect();
    assert_eq!(new, ["4-1", "1-4"]);
    assert_same_tables(whole.path(), alone.path(), board, 5);
}

/// `db build` writes new slices in the symmetric index unless asked for the paper's, or for
/// distances, which only the paper's index keeps.
#[test]
fn db_build_writes_the_symmetric_index_unless_told_otherwise() {
    let board: Board = "3x3".parse().unwrap();
    let build = |flags: &[&str], dir: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_fanorona"))
            .args([
                "db",
                "build",
                "--board",
                "3x3",
                "--pieces",
                "3",
                "--threads",
                "1",
            ])
            .args(flags)
            .arg("--db")
            .arg(dir)
            .output()
            .unwrap()
    };
    for (flags, want) in [
        (&[][..], Scheme::Symmetric),
        (&["--index", "paper"][..], Scheme::Paper),
        (&["--distances"][..], Scheme::Paper),
        (&["--index", "symmetric"][..], Scheme::Symmetric),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let o = build(flags, dir.path());
        assert!(
            o.status.success(),
            "{flags:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        for m in Material::with_pieces(3) {
            let file = SliceFile::open(dir.path(), board, m, Kind::Wdl)
                .unwrap()
                .expect("built");
            assert_eq!(file.slice.scheme(), want, "{flags:?}, slice {m}");
        }
    }
    // Distances are the paper's index's alone.
    let dir = tempfile::tempdir().unwrap();
    let o = build(&["--index", "symmetric", "--distances"], dir.path());
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
