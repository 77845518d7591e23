//! The `fanorona` binary: outputs, JSON, and bad input (one line, exit status 2).

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fanorona"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// The command fails as bad input: exit status 2 and one line on stderr containing `message`.
fn assert_bad_input(args: &[&str], message: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(message), "{args:?}: {err}");
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn show_draws_the_5x9_start_with_its_five_moves() {
    let o = run(&["show"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(
        out.contains(" 3  B---W---B---W---.---B---W---B---W"),
        "{out}"
    );
    assert!(
        out.contains("    | / | \\ | / | \\ | / | \\ | / | \\ |"),
        "{out}"
    );
    assert!(out.contains("5 legal moves"), "{out}");
    let v = json(&["show", "--board", "5x9", "--json"]);
    assert_eq!(v["board"], "5x9");
    assert_eq!(v["moves"].as_array().unwrap().len(), 5);
}

#[test]
fn moves_prints_one_move_per_line() {
    let o = run(&["moves", "BBB/B.W/WWW w"]);
    assert!(o.status.success());
    let mut lines: Vec<&str> = std::str::from_utf8(&o.stdout).unwrap().lines().collect();
    lines.sort();
    assert_eq!(lines, ["a1-b2A", "b1-b2A", "c1-b2A", "c2-b2A"]);
}

#[test]
fn perft_json_reports_the_count() {
    let v = json(&["perft", "--board", "5x9", "--depth", "3", "--json"]);
    assert_eq!(v["board"], "5x9");
    assert_eq!(v["depth"], 3);
    assert_eq!(v["nodes"], 724);
    let v = json(&["perft", "--depth", "4", "--threads", "2", "--json"]);
    assert_eq!(v["nodes"], 18026);
    let v = json(&[
        "perft",
        "BBB/B.W/WWW w",
        "--depth",
        "3",
        "--divide",
        "--json",
    ]);
    assert_eq!(v["nodes"], 14);
    let parts = v["divide"].as_array().unwrap();
    assert_eq!(parts.len(), 4);
    assert_eq!(
        parts
            .iter()
            .map(|p| p["nodes"].as_u64().unwrap())
            .sum::<u64>(),
        14
    );
}

#[test]
fn bad_input_is_one_line_and_exit_status_2() {
    let cases: [(&[&str], &str); 10] = [
        (
            &["show", "BBB/B.W/WW w"],
            "ragged rows: rank 1 has 2 points",
        ),
        // Black has no pieces: the game ended before White's move.
        (
            &["show", "WWW/W.W/WWW w"],
            "black has no pieces, so the game ended with white's win",
        ),
        (&["solve", ".B./.../... b"], "white has no pieces"),
        (&["show", "BBB"], "malformed board 'BBB'"),
        (
            &["show", "BBB/BxW/WWW w"],
            "unknown character 'x' at b2 (rank 2)",
        ),
        (&["show", "BBB/B.W/WWW"], "missing side to move"),
        (&["show", "BBB/B.W/WWW q"], "wrong side to move 'q'"),
        (&["show", "--board", "7x7"], "unsupported board 7x7"),
        (
            &["perft", "BBBB/B..W/WWWW w", "--depth", "1"],
            "unsupported board 3x4",
        ),
        (&["moves", "BB/WW w"], "unsupported board 2x2"),
    ];
    for (args, message) in cases {
        assert_bad_input(args, message);
    }
}

#[test]
fn a_board_stands_for_its_start_on_every_command() {
    // show, moves and perft take the board as the target, as solve and play do; solve and
    // play take --board, as show, moves and match do.
    let start = json(&["show", "--board", "3x3", "--json"]);
    assert_eq!(json(&["show", "3x3", "--json"]), start);
    let (by_name, by_flag) = (run(&["moves", "3x3"]), run(&["moves", "--board", "3x3"]));
    assert!(by_name.status.success() && by_flag.status.success());
    assert_eq!(stdout(&by_name), stdout(&by_flag));
    assert_eq!(stdout(&by_name).lines().count(), 4);
    let v = json(&["perft", "5x5", "--depth", "2", "--json"]);
    assert_eq!(v["nodes"], 21);
    let by_flag = run(&["solve", "--board", "3x5", "--nodes", "1000000"]);
    assert!(by_flag.status.success(), "{}", stderr(&by_flag));
    assert!(
        stdout(&by_flag).contains("value: white wins"),
        "{}",
        stdout(&by_flag)
    );
    // One question disproven says what that leaves.
    let o = run(&["solve", "3x5", "--goal", "black", "--nodes", "1000000"]);
    assert!(
        stdout(&o).contains("value: black does not win (white wins or it is a draw"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn serve_refuses_named_directories_that_are_not_there_and_resolves_host_names() {
    assert_bad_input(
        &["serve", "--db", "/no/such/tables"],
        "--db /no/such/tables: no such directory",
    );
    assert_bad_input(
        &["serve", "--certificates", "/no/such/certificates"],
        "--certificates /no/such/certificates: no such directory",
    );
    assert_bad_input(
        &["serve", "--bind", "no-such-host.invalid:8080"],
        "is not HOST:PORT that resolves",
    );
}

#[test]
fn show_plays_moves_and_names_an_illegal_one() {
    let v = json(&["show", "--play", "d3-e3A", "--json"]);
    assert_eq!(v["side_to_move"], "black");
    let o = run(&["show", "--play", "d3-e3A e4-e3W"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("move 2 'e4-e3W'"), "{err}");
    assert!(err.contains("e3 is occupied"), "{err}");
    assert_eq!(err.lines().count(), 1);
    let o = run(&["show", "--play", "d3-e3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("capture is compulsory"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_arguments_are_one_line_and_exit_status_2() {
    let cases: [(&[&str], &str); 9] = [
        (&["perft"], "--depth"),
        (&["perft", "--depth", "x"], "invalid value 'x'"),
        // A negative number is the flag's value, refused by its check, not an unknown flag.
        (
            &["perft", "--depth", "-1"],
            "invalid value '-1' for '--depth",
        ),
        (
            &["play", "3x3", "--move-time", "-1"],
            "--move-time -1: give more than 0",
        ),
        (
            &["solve", "--board", "3x3", "BBB/B.W/WWW w"],
            "cannot be used with",
        ),
        (&["solve", "--board", "BBB/B.W/WWW w"], "malformed board"),
        (
            &["perft", "--depth", "2", "--threads", "100000"],
            "thread count",
        ),
        (&["frob"], "unrecognized subcommand"),
        (
            &["show", "--board", "5x9", "BBB/B.W/WWW w"],
            "cannot be used with",
        ),
    ];
    for (args, message) in cases {
        assert_bad_input(args, message);
    }
}

#[test]
fn a_closed_pipe_ends_quietly_but_not_as_a_success() {
    use std::io::Read;
    use std::process::Stdio;
    // The reader is gone before the first line (the program starts after it is: it would
    // otherwise write first). The exit status says the output was not delivered, as a tool
    // ended by SIGPIPE: 0 let a checker's verdict that nobody read pass for success.
    let mut child = Command::new("sh")
        .args([
            "-c",
            "sleep 0.3; exec \"$0\" show",
            env!("CARGO_BIN_EXE_fanorona"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(141), "{status:?}: {err}");
    assert!(err.is_empty(), "quietly: {err}");
}

#[test]
fn db_commands_build_count_probe_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = run(&[
        "db",
        "build",
        "--board",
        "9x5",
        "--pieces",
        "3",
        "--dir",
        d,
        "--threads",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("3 slices of 5x9"), "{}", stdout(&o));
    let v = json(&["db", "stats", "--board", "5x9", "--dir", d, "--json"]);
    assert_eq!(v["board"], "5x9");
    assert_eq!(v["slices"][0]["slice"], "1-1");
    assert_eq!(v["slices"][0]["win"], 158);
    assert_eq!(v["slices"][0]["matches_paper"], true);
    assert_eq!(v["paper_mismatches"], 0);
    // The transposed board reads the same tables: one white piece, two black, on 9x5.
    let v = json(&[
        "db",
        "probe",
        "W..../...../...../...../...../...../...../...../B...B w",
        "--dir",
        d,
        "--json",
    ]);
    assert!(
        ["win", "draw", "loss"].contains(&v["value"].as_str().unwrap()),
        "{v}"
    );
    let o = run(&["db", "verify", "--board", "5x9", "--dir", d]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("no errors in 3 slices"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn db_bad_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["db", "build", "--board", "7x7", "--pieces", "3", "--dir", d],
            "unsupported board 7x7",
        ),
        (
            &[
                "db", "build", "--board", "5x9", "--pieces", "20", "--dir", d,
            ],
            "GiB",
        ),
        (
            &["db", "stats", "--board", "5x9", "--dir", d],
            "no tables of 5x9",
        ),
        (
            &["db", "probe", "BBB/B.W/WWW w", "--dir", d],
            "fanorona db build --board 3x3 --pieces 8",
        ),
        // No machine builds the 44 pieces of a 5x9 start: search is named instead.
        (
            &["db", "probe", "5x9", "--dir", d],
            "solved by search: `fanorona solve POSITION",
        ),
    ];
    for (args, message) in cases {
        assert_bad_input(args, message);
    }
    // Nothing was written for refused builds.
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn solve_reports_the_value_the_best_move_and_a_checked_proof() {
    let v = json(&["solve", "3x5", "--no-store", "--json"]);
    assert_eq!(v["value"], "white");
    assert_eq!(v["verified"], true);
    assert!(v["nodes"].as_u64().unwrap() > 0);
    assert!(v["best_move"].is_string());
    let v = json(&["solve", "3x3", "--algo", "pn", "--moves", "--json"]);
    assert_eq!(v["value"], "white");
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 4);
    // The best move is one of the moves that keep White's win.
    assert!(
        moves
            .iter()
            .any(|m| m["move"] == v["best_move"] && m["value"] == "white")
    );
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("curve.csv");
    let o = run(&[
        "solve",
        "5x3",
        "--no-store",
        "--curve",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("iteration,nodes,seconds,root_pn,root_dpn,goal\n"));
    assert!(text.lines().count() > 10);
    // The last row is the proof: pn 0.
    assert!(
        text.lines().last().unwrap().split(',').nth(3) == Some("0"),
        "{text}"
    );
}

#[test]
fn the_second_level_bound_steers_pn2_but_not_its_answer() {
    // 3x7 is a White win (the paper's Table 4) under either bound; a bound of one node
    // makes every first-level expansion a single df-pn step, the paper's makes it as large
    // as the first-level tree.
    let per_iteration = |extra: &[&str]| {
        let mut args = vec!["solve", "3x7", "--algo", "pn2-dfpn", "--no-store", "--json"];
        args.extend_from_slice(extra);
        let v = json(&args);
        assert_eq!(v["value"], "white", "{v}");
        assert_eq!(v["verified"], true, "{v}");
        let s = &v["searches"][0];
        s["nodes"].as_f64().unwrap() / s["iterations"].as_f64().unwrap()
    };
    let paper = per_iteration(&[]);
    let one = per_iteration(&["--second-level", "1"]);
    assert!(paper > 100.0, "{paper}");
    assert!(one < 10.0, "{one}");
    assert_eq!(per_iteration(&["--second-level", "tree-size"]), paper);
    // A share of the tree: over one it is the paper's bound; with a floor above what the
    // share reaches, the floor is a fixed bound.
    assert_eq!(per_iteration(&["--second-level", "tree/1"]), paper);
    assert_eq!(
        per_iteration(&["--second-level", "max(5000,tree/1000000)"]),
        per_iteration(&["--second-level", "5000"])
    );
    assert_bad_input(&["solve", "3x7", "--second-level", "0"], "second-level");
    assert_bad_input(&["solve", "3x7", "--second-level", "tree/0"], "tree/D");
    // PN and df-pn have no second level: the bound is refused, not ignored.
    for algo in ["pn", "dfpn"] {
        assert_bad_input(
            &["solve", "3x3", "--algo", algo, "--second-level", "5"],
            "with --algo pn2",
        );
    }
}

#[test]
fn solve_stops_at_its_memory_limit_without_a_value() {
    // 9x3 without tables is far beyond a 1 MiB table.
    let v = json(&[
        "solve", "9x3", "--algo", "dfpn", "--memory", "1MiB", "--json",
    ]);
    assert_eq!(v["value"], "unknown");
    assert_eq!(v["searches"][0]["outcome"], "open");
    assert_bad_input(&["solve", "9x3", "--memory", "lots"], "not a size");
}

#[test]
fn solve_refuses_decided_positions_and_missing_tables() {
    assert_bad_input(&["solve", "BBB/.../... w"], "already decided");
    let dir = tempfile::tempdir().unwrap();
    assert_bad_input(
        &["solve", "5x5", "--db", dir.path().to_str().unwrap()],
        "fanorona db build --board 5x5",
    );
    assert_bad_input(&["solve", "4x4"], "unsupported board 4x4");
}

/// `solve --census` accounts for every node the search counts, by the pieces of the position
/// expanded: all of them for PN and PN² (roots are not created by an expansion and are not
/// counted there), all but each question's root for df-pn, which counts its root; and no
/// position is expanded with fewer pieces than any it created had.
#[test]
fn the_census_accounts_for_every_node() {
    for algo in ["pn", "pn2", "pn2-dfpn", "dfpn"] {
        let o = run(&[
            "solve",
            "3x5",
            "--no-store",
            "--census",
            "--algo",
            algo,
            "--json",
        ]);
        assert!(o.status.success(), "{algo}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let rows = v["census"].as_array().expect("a census");
        let created: u64 = rows.iter().map(|r| r["created"].as_u64().unwrap()).sum();
        let pieces: Vec<u64> = rows.iter().map(|r| r["pieces"].as_u64().unwrap()).collect();
        let nodes = v["nodes"].as_u64().unwrap();
        let roots = if algo == "dfpn" {
            v["searches"].as_array().unwrap().len() as u64
        } else {
            0
        };
        assert_eq!(created + roots, nodes, "{algo}");
        assert!(
            rows.iter().all(|r| r["created"].as_u64() > Some(0)),
            "{algo}"
        );
        // Most pieces first; the start's 14 pieces expanded, none above.
        assert!(pieces.windows(2).all(|w| w[0] > w[1]), "{algo}: {pieces:?}");
        assert_eq!(pieces[0], 14, "{algo}");
        // Each row split by pair of tables: "a-b", a >= b, a + b its pieces, the shares
        // summing to the row, largest first. The start has 7 a side.
        for r in rows {
            let pairs = r["pairs"].as_array().expect("pairs");
            let shares: Vec<u64> = pairs
                .iter()
                .map(|p| p["created"].as_u64().unwrap())
                .collect();
            assert_eq!(shares.iter().sum::<u64>(), r["created"].as_u64().unwrap());
            assert!(
                shares.windows(2).all(|w| w[0] >= w[1]),
                "{algo}: {shares:?}"
            );
            for p in pairs {
                let name = p["pair"].as_str().unwrap();
                let (a, b) = name.split_once('-').expect("a-b");
                let (a, b): (u64, u64) = (a.parse().unwrap(), b.parse().unwrap());
                assert!(a >= b && a + b == r["pieces"].as_u64().unwrap(), "{name}");
            }
        }
        assert_eq!(rows[0]["pairs"][0]["pair"], "7-7", "{algo}");
    }
    // Without --census, no census.
    let o = run(&["solve", "3x5", "--no-store", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v.get("census").is_none());
}

#[test]
fn init_steers_the_search_in_memory_and_in_a_session() {
    // In memory: both ways decide 3x7 (a White win), in different node counts.
    let nodes = |init: &str| {
        let v = json(&["solve", "3x7", "--no-store", "--init", init, "--json"]);
        assert_eq!(
            (&v["value"], &v["verified"]),
            (&"white".into(), &true.into()),
            "{v}"
        );
        v["nodes"].as_u64().unwrap()
    };
    assert_ne!(nodes("mobility"), nodes("material"));
    // As a session: the flag, not the config's default, is what the session records.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let v = json(&[
        "--data-dir",
        d,
        "solve",
        "3x5",
        "--init",
        "mobility",
        "--json",
    ]);
    assert_eq!(v["value"], "white", "{v}");
    let s = json(&["--data-dir", d, "session", "status", "1", "--json"]);
    assert_eq!(s["init"], "mobility", "{s}");
    let o = run(&["solve", "3x5", "--no-store", "--init", "eval"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("'eval' is not"), "{}", stderr(&o));
}

#[test]
fn bench_store_measures_and_removes_the_scratch_stores_of_interrupted_runs() {
    let tmp = tempfile::tempdir().unwrap();
    // An interrupted run's store (no process has that id: ids stop far below it), a running
    // one's (this test's own id) and a directory of another name.
    let abandoned = tmp.path().join("fanorona-bench-store-4000000000");
    let running = tmp
        .path()
        .join(format!("fanorona-bench-store-{}", std::process::id()));
    let other = tmp.path().join("fanorona-bench-store-notes");
    for d in [&abandoned, &running, &other] {
        std::fs::create_dir_all(d.join("store")).unwrap();
    }
    let o = Command::new(env!("CARGO_BIN_EXE_fanorona"))
        .args([
            "bench",
            "store",
            "--tree-nodes",
            "20000",
            "--seconds",
            "0.2",
            "--repeat",
            "1",
            "--json",
        ])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["tree_nodes"], 20000);
    assert!(v["store_bytes"].as_u64().unwrap() > 0, "{v}");
    assert!(!abandoned.exists());
    assert!(running.exists() && other.exists());
    // Its own scratch store is gone too.
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

#[test]
fn the_bench_workloads_are_subcommands_and_their_old_flags_still_run_them() {
    // The old flag and the subcommand run the same workload: the same signature.
    let new = json(&["bench", "tables", "--repeat", "1", "--json"]);
    let old = json(&["bench", "--tables", "--repeat", "1", "--json"]);
    assert!(new["nodes"].as_u64().unwrap() > 0, "{new}");
    assert_eq!(new["nodes"], old["nodes"]);
    assert_eq!(new["runs"].as_array().unwrap().len(), 6, "{new}");
    // The help lists the subcommands, not the old flags.
    let help = stdout(&run(&["bench", "--help"]));
    for workload in ["solvers", "certificates", "agents", "tables", "store"] {
        assert!(help.contains(&format!("  {workload} ")), "{help}");
        assert!(!help.contains(&format!("--{workload}")), "{help}");
    }
    // The perft workload's options are not a subcommand's, nor the old flags' mixed with one.
    assert_bad_input(
        &["bench", "--threads", "2", "solvers"],
        "cannot be used with '--threads",
    );
    assert_bad_input(&["bench", "--tables", "--agents"], "cannot be used with");
    assert_bad_input(&["bench", "--from", "x"], "--store");
    assert_bad_input(
        &["bench", "store", "--from", "x", "--seconds", "1"],
        "cannot be used with",
    );
}

#[test]
fn man_pages_and_completions_are_made_from_the_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man1");
    let o = run(&["man", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A page for every command and subcommand, named by the words that run it, with its
    // about text and its examples.
    for (page, about) in [
        ("fanorona.1", "Fanorona on every board"),
        ("fanorona-solve.1", "Solve a board"),
        ("fanorona-session.1", "Solve sessions"),
        ("fanorona-session-start.1", "Start solving a board"),
        ("fanorona-db-build.1", "Build every slice of a board"),
        ("fanorona-bench-store.1", "The session store"),
        ("fanorona-man.1", "Write the man pages"),
    ] {
        let text =
            std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(about), "{page}: {text}");
        assert!(text.contains(".SH EXAMPLES"), "{page}: {text}");
    }
    let pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(pages.len() > 40, "{pages:?}");
    assert!(
        pages
            .iter()
            .all(|p| p.ends_with(".1") && !p.contains("help")),
        "{pages:?}"
    );
    // A file where the directory should be is refused.
    assert_bad_input(
        &["man", dir.join("fanorona.1").to_str().unwrap()],
        "not a directory",
    );

    let o = run(&["completions", "bash"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let script = stdout(&o);
    assert!(
        script.contains("session") && script.contains("--leaf-budget"),
        "{script}"
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let o = run(&["completions", shell]);
        assert!(o.status.success() && o.stdout.len() > 1000, "{shell}");
    }
    assert_bad_input(&["completions", "tcsh"], "invalid value 'tcsh'");
}
