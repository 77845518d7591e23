//! `fanorona play`, `match` and `show --record` as a user meets them, bad input included.

use crate::common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::{BIN, stderr};

fn run_with(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_person_plays_with_hints_undo_and_bad_moves_answered() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("game.txt");
    let o = run_with(
        &[
            "play",
            "3x3",
            "--black",
            "perfect",
            "--save",
            record.to_str().unwrap(),
        ],
        "hint\n9\nzz\n3\nundo\n3\nresign\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("  c1-b2A (best): win (search)"), "{text}");
    assert!(text.contains("9 is not in the list (1 to 4)"), "{text}");
    assert!(text.contains("not played: malformed move 'zz'"), "{text}");
    assert!(text.contains("black wins (white resigned)"), "{text}");
    // The record reads back, and show draws where it ended.
    let saved = std::fs::read_to_string(&record).unwrap();
    assert!(saved.contains("[Result \"0-1\"]") && saved.contains("[Termination \"resignation\"]"));
    let o = Command::new(BIN)
        .args(["show", "--record", record.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // A damaged record is refused with its line.
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, saved.replace("1. c1-b2A", "1. c1-c3A")).unwrap();
    let o = run_with(&["play", "--load", bad.to_str().unwrap()], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("line 9: move 1 'c1-c3A'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn two_players_play_and_bad_players_are_named() {
    let o = run_with(
        &["play", "3x3", "--white", "perfect", "--black", "random"],
        "",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("white wins"), "{}", stdout(&o));
    for (args, says) in [
        (
            &["match", "chess", "random"][..],
            "unknown player 'chess': use random, minimax, alphabeta, mcts, perfect, winimax or proof",
        ),
        (
            &["match", "mcts:insane", "random"],
            "unknown level 'insane': use easy, medium, hard or perfect",
        ),
        (
            &["match", "random", "random", "--games", "0"],
            "a match needs a game",
        ),
        (&["play", "--white", "robot"], "unknown player 'robot'"),
    ] {
        let o = run_with(args, "");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    // Perfect play pointed at tables that are not there: which to build.
    let empty = tempfile::tempdir().unwrap();
    let o = run_with(
        &[
            "match",
            "perfect",
            "random",
            "--board",
            "5x5",
            "--db",
            empty.path().to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("fanorona db build --board 5x5"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_match_alternates_colours_and_writes_a_row_a_game() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("m.csv");
    let o = run_with(
        &[
            "match",
            "alphabeta:easy",
            "random",
            "--board",
            "5x5",
            "--games",
            "10",
            "--csv",
            csv.to_str().unwrap(),
            "--json",
        ],
        "",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["games"], 10);
    let total =
        v["wins"].as_u64().unwrap() + v["draws"].as_u64().unwrap() + v["losses"].as_u64().unwrap();
    assert_eq!(total, 10);
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), 10);
    assert!(
        rows[0].contains(",white,") && rows[1].contains(",black,"),
        "{text}"
    );
    // The same seed replays the same games.
    let again = run_with(
        &[
            "match",
            "alphabeta:easy",
            "random",
            "--board",
            "5x5",
            "--games",
            "10",
            "--json",
        ],
        "",
    );
    let w: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["wins"], w["wins"]);
    assert_eq!(v["mean_plies"], w["mean_plies"]);
}

#[test]
fn perfect_play_reads_what_sessions_solved_from_the_rote_store() {
    let data = common::Data::new("log_level = \"warn\"\n");
    assert!(data.cmd(&["solve", "7x3"]).status.success());
    let o = data.cmd(&[
        "play", "7x3", "--white", "perfect", "--black", "random", "--rote",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 white plays c3-b4A (win for white, rote store)"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("white wins"), "{}", stdout(&o));
}

#[test]
fn a_loaded_game_keeps_its_cap_and_a_finished_one_is_not_played_on() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("capped.txt");
    let path = record.to_str().unwrap();
    let players = ["--white", "random", "--black", "random"];
    let mut args = vec!["play", "3x3", "--max-plies", "2", "--save", path];
    args.extend(players);
    let o = run_with(&args, "");
    assert!(o.status.success(), "{}", stderr(&o));
    let saved = std::fs::read_to_string(&record).unwrap();
    assert!(
        saved.contains("[MoveCap \"2\"]") && saved.contains("1/2-1/2"),
        "{saved}"
    );
    // Over: refused, and the record is left as it was.
    let mut args = vec!["play", "--load", path, "--save", path];
    args.extend(players);
    let o = run_with(&args, "");
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("the game is over after 2 plies"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&record).unwrap(), saved);
    // A larger cap given on purpose continues it.
    args.extend(["--max-plies", "0"]);
    let o = run_with(&args, "");
    assert!(o.status.success(), "{}", stderr(&o));
    let played_on = std::fs::read_to_string(&record).unwrap();
    assert!(
        !played_on.contains("MoveCap") && played_on.contains("2. "),
        "{played_on}"
    );
}

#[test]
fn a_loaded_game_keeps_its_players_and_a_person_can_ask_for_help() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("game.txt");
    let path = record.to_str().unwrap();
    // A person against perfect play, left after one move each.
    let o = run_with(
        &["play", "3x3", "--black", "perfect", "--save", path],
        "help\n-1\n1\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("or: hint (every move's value"), "{text}");
    assert!(text.contains("-1 is not in the list (1 to 4)"), "{text}");
    // The person's move is echoed as the player's is.
    assert!(text.contains("1 white plays a1-b2A"), "{text}");
    assert!(text.contains("2 black plays "), "{text}");
    // Loaded without players named: perfect play still answers, and the record says so.
    let o = run_with(&["play", "--load", path, "--save", path], "1\n");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("4 black plays "), "{}", stdout(&o));
    let saved = std::fs::read_to_string(&record).unwrap();
    assert!(
        saved.contains("[White \"human\"]") && saved.contains("[Black \"perfect\"]"),
        "{saved}"
    );
    // Named, a player takes the side over, and the record says so.
    let o = run_with(
        &["play", "--load", path, "--black", "random", "--save", path],
        "1\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let saved = std::fs::read_to_string(&record).unwrap();
    assert!(saved.contains("[Black \"random\"]"), "{saved}");
}

#[test]
fn a_match_stopped_by_ctrl_c_reports_and_writes_the_games_played() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("m.csv");
    let child = Command::new(BIN)
        .args([
            "match",
            "random",
            "random",
            "--board",
            "5x5",
            "--games",
            "100000000",
            "--threads",
            "1",
            "--csv",
            csv.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let text = stdout(&o);
    let played: usize = text
        .split("interrupted: ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(played > 0, "{text}");
    assert!(
        text.contains(&format!("{played} of 100000000 games played")),
        "{text}"
    );
    assert!(text.contains(&format!("5x5, {played} game")), "{text}");
    // Every game played is in the CSV, under its header.
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count();
    assert_eq!(rows, played + 1);
}

#[test]
fn a_match_from_a_finished_position_is_refused() {
    let o = run_with(
        &["match", "random", "random", "--board", "BBB/.../... w"],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the game is already over there (white has lost)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_proof_player_follows_a_certificate_solve_wrote_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let certs = dir.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    let prefix = certs.join("3x7");
    let o = run_with(
        &[
            "solve",
            "3x7",
            "--no-store",
            "--goal",
            "white",
            "--certificate",
            prefix.to_str().unwrap(),
        ],
        "",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run_with(
        &[
            "play",
            "3x7",
            "--white",
            "proof",
            "--black",
            "random",
            "--certificates",
            certs.to_str().unwrap(),
        ],
        "",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("1 white plays")
            && out.contains(
                "(win for white, certificate): 3x7.white-wins.cert.gz: its move, which wins"
            ),
        "{out}"
    );
    assert!(out.contains("white wins"), "{out}");
    // A match counts where the proof player's moves came from.
    let o = run_with(
        &[
            "match",
            "proof",
            "random",
            "--board",
            "3x7",
            "--games",
            "4",
            "--threads",
            "1",
            "--certificates",
            certs.to_str().unwrap(),
        ],
        "",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("4 wins, 0 draws, 0 losses"), "{out}");
    assert!(
        out.contains("proof's moves: ") && out.contains(" from certificates"),
        "{out}"
    );
    // A directory that is not there is named, and nothing is played.
    let missing = dir.path().join("none");
    let o = run_with(
        &[
            "play",
            "3x7",
            "--white",
            "proof",
            "--black",
            "random",
            "--certificates",
            missing.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains(missing.to_str().unwrap()),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains("plays"), "{}", stdout(&o));
}
