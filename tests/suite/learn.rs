//! `fanorona learn` and the learned first numbers: trained on tables built here, the same
//! weights from the same seed, no worse than material alone on positions it never saw, and
//! refused with the command that fixes it wherever it cannot run; weights of one's own
//! given to a session as to a search in memory.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fanorona"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `learn` on 5x5 tables to `pieces` from seed 3, with the flags `extra` besides.
fn learn(db: &str, pieces: &str, out: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "learn",
        "--db",
        db,
        "--board",
        "5x5",
        "--pieces",
        pieces,
        "--samples",
        "3000",
        "--seed",
        "3",
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn learned(db: &str, out: &str) -> serde_json::Value {
    let o = learn(db, "5", out, &["--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn learn_trains_the_same_weights_from_a_seed_and_beats_material_alone() {
    let tables = tempfile::tempdir().unwrap();
    let db = tables.path().to_str().unwrap();
    let o = run(&["db", "build", "--board", "5x5", "--pieces", "5", "--db", db]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.fnlw"), dir.path().join("b.fnlw"));
    let first = learned(db, a.to_str().unwrap());
    learned(db, b.to_str().unwrap());
    let bytes = std::fs::read(&a).unwrap();
    assert_eq!(
        bytes,
        std::fs::read(&b).unwrap(),
        "the same seed, the same weights"
    );
    assert_eq!(&bytes[..4], b"FNLW");
    // Every piece count of 2 to 5 held out, and over them all the model at least as right as
    // the value most common for the same material (it sees the material, and more).
    let rows = first["held_out"].as_array().unwrap();
    let pieces: Vec<u64> = rows.iter().map(|r| r[0].as_u64().unwrap()).collect();
    assert_eq!(pieces, [2, 3, 4, 5], "{first}");
    let (mut n, mut model, mut material) = (0.0, 0.0, 0.0);
    for r in rows {
        let s = &r[1];
        let k = s["positions"].as_f64().unwrap();
        n += k;
        model += k * s["accuracy"].as_f64().unwrap();
        material += k * s["material_accuracy"].as_f64().unwrap();
    }
    assert!(n > 1000.0, "{first}");
    assert!(
        model >= material,
        "model {} against material {}",
        model / n,
        material / n
    );
    // Positions of random games from the start: tested on alone (weight 0), they leave the
    // weights as they were and are scored by piece count within the tables; trained on,
    // they change them, the same way on one thread as on two.
    let play = |weight: &str, threads: &str, out: &std::path::Path| {
        let o = learn(
            db,
            "5",
            out.to_str().unwrap(),
            &[
                "--playouts",
                "300",
                "--play-weight",
                weight,
                "--threads",
                threads,
                "--json",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (std::fs::read(out).unwrap(), v)
    };
    let (tested, v) = play("0", "2", &dir.path().join("p0.fnlw"));
    assert_eq!(tested, bytes, "positions only tested on train nothing");
    let rows = v["held_out_play"].as_array().unwrap();
    assert!(!rows.is_empty(), "{v}");
    let mut n = 0;
    for r in rows {
        let pieces = r[0].as_u64().unwrap();
        assert!((2..=5).contains(&pieces), "{v}");
        n += r[1]["positions"].as_u64().unwrap();
    }
    // A tenth of 300 games, each giving a position of each piece count it passes through.
    assert!(
        (10..=150).contains(&n),
        "{n} held-out positions of play: {v}"
    );
    let (one, _) = play("1", "1", &dir.path().join("p1.fnlw"));
    let (two, _) = play("1", "2", &dir.path().join("p2.fnlw"));
    // The weights themselves, not only the header's count of samples.
    let weights = |b: &[u8]| b[34..b.len() - 4].to_vec();
    assert_ne!(
        weights(&one),
        weights(&bytes),
        "positions of play trained on change the weights"
    );
    assert_eq!(one, two, "the same games whatever the threads");
    // Decided positions of 10 to 12 pieces from a rote export test the carry-over too, each
    // position once for each attacker; other boards and piece counts are passed over.
    let ten = "BBB../BB.../...../...WW/..WWW w";
    let row = |pos: &str, history: &str, attacker: &str, wins: bool| {
        format!(
            r#"{{"position":"{pos}","history":"{history}","attacker":"{attacker}","attacker_wins":{wins},"best_move":null}}"#
        )
    };
    let rote = dir.path().join("rote.jsonl");
    let lines = [
        row(ten, "0000000000000000", "white", true),
        row(ten, "00000000000000ab", "white", true),
        row(ten, "0000000000000000", "black", false),
        row(
            "BBBBB..../........./........./........./....WWWWW w",
            "0000000000000000",
            "white",
            true,
        ),
        row(
            "BBB../...../...../...../..WWW w",
            "0000000000000000",
            "white",
            false,
        ),
    ];
    std::fs::write(&rote, lines.join("\n") + "\n").unwrap();
    let o = learn(
        db,
        "5",
        dir.path().join("r.fnlw").to_str().unwrap(),
        &["--rote", rote.to_str().unwrap(), "--json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rote"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v}");
    assert_eq!(rows[0][0], 10);
    assert_eq!(rows[0][1]["positions"], 2);
    assert_eq!(rows[0][1]["attacker_wins"], 0.5);
    // Trained on (`--rote-train`), those above the tables change the weights; at weight 0
    // they leave them as they were.
    let trained = |weight: &str| {
        let out = dir.path().join(format!("rote-{weight}.fnlw"));
        let o = learn(
            db,
            "5",
            out.to_str().unwrap(),
            &[
                "--rote-train",
                rote.to_str().unwrap(),
                "--rote-weight",
                weight,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read(out).unwrap()
    };
    assert_eq!(trained("0"), bytes);
    assert_ne!(weights(&trained("1")), weights(&bytes));
    // A position trained on tests nothing: the test leaves out the two it shares, and says so.
    let o = learn(
        db,
        "5",
        dir.path().join("both.fnlw").to_str().unwrap(),
        &[
            "--rote",
            rote.to_str().unwrap(),
            "--rote-train",
            rote.to_str().unwrap(),
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rote"].as_array().unwrap().len(), 0, "{v}");
    assert!(
        stderr(&o).contains("--rote: 2 positions also in --rote-train left out of the test"),
        "{}",
        stderr(&o)
    );
    // A weight without what it weighs is refused, not ignored.
    for (flag, needs) in [
        ("--play-weight", "--playouts"),
        ("--rote-weight", "--rote-train"),
    ] {
        let unused = dir.path().join("unused.fnlw");
        let o = learn(db, "5", unused.to_str().unwrap(), &[flag, "2"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(needs), "{}", stderr(&o));
        assert!(!unused.exists());
    }
    // A line that is not one: named with its line, before any training.
    std::fs::write(&rote, format!("{}\nnot json\n", lines[0])).unwrap();
    let unused = dir.path().join("unused.fnlw");
    let o = learn(
        db,
        "5",
        unused.to_str().unwrap(),
        &["--rote", rote.to_str().unwrap()],
    );
    assert!(!unused.exists());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("rote.jsonl line 2") && e.contains("fanorona rote export"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    // Those weights given to a search on 5x5, which has none built in: the first numbers
    // change its order, never its value.
    let w = a.to_str().unwrap();
    for pos in [
        "...../..B../.W.W./...../..... w",
        "...../.B.B./..W../...../..... b",
    ] {
        let value = |extra: &[&str]| {
            let mut args = vec!["solve", pos, "--no-store", "--json"];
            args.extend_from_slice(extra);
            let o = run(&args);
            assert!(o.status.success(), "{pos} {extra:?}: {}", stderr(&o));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            v["value"].clone()
        };
        assert_eq!(
            value(&["--init", "learned", "--weights", w]),
            value(&["--init", "mobility"]),
            "{pos}"
        );
    }
    // A weights file missing, damaged, of another board, or given without learned first
    // numbers: one line naming it, and how to make one.
    let damaged = dir.path().join("damaged.fnlw");
    let mut bad = bytes.clone();
    let middle = bad.len() / 2;
    bad[middle] ^= 0x40;
    std::fs::write(&damaged, bad).unwrap();
    session_with_weights(db, w, damaged.to_str().unwrap());
    let missing = dir.path().join("missing.fnlw");
    let five_by_nine = "........./....B..../..W.W..../........./......... w";
    for (target, weights, init, said) in [
        (
            "5x5",
            missing.to_str().unwrap(),
            "learned",
            "missing.fnlw: cannot be read",
        ),
        (
            "5x5",
            damaged.to_str().unwrap(),
            "learned",
            "damaged.fnlw: damaged",
        ),
        (five_by_nine, w, "learned", "weights for 5x5, not 5x9"),
        (
            "5x5",
            w,
            "material",
            "--weights is for the learned first numbers",
        ),
    ] {
        let o = run(&[
            "solve",
            target,
            "--init",
            init,
            "--weights",
            weights,
            "--goal",
            "white",
        ]);
        assert_eq!(o.status.code(), Some(2), "{said}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(said), "{said}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        if init == "learned" {
            assert!(e.contains("fanorona learn --db DIR --board"), "{e}");
        }
    }
}

/// The 5x5 start's nodes by question (`solve --json`) with the weights file `w`, `place`
/// saying where the search runs (`--no-store`, or `--data-dir D` for a session).
fn nodes_with(db: &str, w: &str, place: &[&str]) -> Vec<(String, u64)> {
    let mut args = vec![
        "solve",
        "5x5",
        "--db",
        db,
        "--init",
        "learned",
        "--weights",
        w,
        "--json",
        "--config",
        "/dev/null",
    ];
    args.extend_from_slice(place);
    let o = run(&args);
    assert!(o.status.success(), "{place:?}: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["value"], "draw", "{v}");
    v["searches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["goal"].to_string(), s["nodes"].as_u64().unwrap()))
        .collect()
}

/// Weights a session was given (`solve --weights` on a data directory, or `weights` in the
/// config): the search it runs is the one in memory with the same file, its status names
/// the file, and a damaged file refuses the session in one line.
fn session_with_weights(db: &str, w: &str, damaged: &str) {
    let data = tempfile::tempdir().unwrap();
    let d = data.path().to_str().unwrap();
    let in_memory = nodes_with(db, w, &["--no-store"]);
    assert_eq!(in_memory.len(), 2, "{in_memory:?}");
    assert_eq!(nodes_with(db, w, &["--data-dir", d]), in_memory);
    let o = run(&[
        "session",
        "status",
        "1",
        "--data-dir",
        d,
        "--config",
        "/dev/null",
    ]);
    let status = String::from_utf8_lossy(&o.stdout);
    assert!(
        status.contains("first numbers from learned (weights a.fnlw)"),
        "{status}"
    );
    // Material's first numbers search another tree: the weights were used.
    let o = run(&[
        "solve",
        "5x5",
        "--db",
        db,
        "--init",
        "material",
        "--no-store",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_ne!(v["searches"][0]["nodes"].as_u64(), Some(in_memory[0].1));
    // The config's weights, damaged: the session is refused, the file named.
    let config = data.path().join("config.toml");
    std::fs::write(
        &config,
        format!("init = \"learned\"\nweights = \"{damaged}\"\n"),
    )
    .unwrap();
    let fresh = data.path().join("fresh");
    let o = run(&[
        "solve",
        "5x5",
        "--db",
        db,
        "--data-dir",
        fresh.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("damaged.fnlw: damaged"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    // Good weights in the config, for a command whose searches run on workers (which hold
    // only the built-in weights): refused in one line, never run with other weights.
    std::fs::write(&config, format!("init = \"learned\"\nweights = \"{w}\"\n")).unwrap();
    let o = run(&[
        "cluster",
        "simulate",
        "5x5",
        "--db",
        db,
        "--workers",
        "1,2",
        "--trace",
        data.path().join("trace.jsonl").to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("built-in weights only") && e.contains("a.fnlw"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}

#[test]
fn learned_first_numbers_are_refused_where_they_cannot_run() {
    // No weights for 5x5: said before any search, with the way out.
    let o = run(&["solve", "5x5", "--init", "learned", "--no-store"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("5x9 and 9x5"), "{}", stderr(&o));
    // Tables without the slices asked for: the build command named.
    let tables = tempfile::tempdir().unwrap();
    let db = tables.path().to_str().unwrap();
    let out = tables.path().join("w.fnlw");
    let o = learn(db, "4", out.to_str().unwrap(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("fanorona db build --board 5x5 --pieces 4"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists(), "no weights written");
    // Certificates that are not there: named before any sampling.
    let o = learn(
        db,
        "4",
        out.to_str().unwrap(),
        &["--certificates", "no/such/dir"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no/such/dir"), "{}", stderr(&o));
}

#[test]
fn learned_first_numbers_decide_5x9_endgames_as_mobility_does() {
    // Small 5x9 endgames searched by the rules alone: the first numbers change the order of
    // the search, never its answer.
    for pos in [
        "........./....B..../..W.W..../........./......... w",
        "........./..B.B..../....W..../........./......... w",
        "........./....B..../...W.W.../....B..../......... b",
    ] {
        let value = |init: &str| {
            let o = run(&["solve", pos, "--init", init, "--no-store", "--json"]);
            assert!(o.status.success(), "{pos} {init}: {}", stderr(&o));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            v["value"].clone()
        };
        assert_eq!(value("learned"), value("mobility"), "{pos}");
    }
}
