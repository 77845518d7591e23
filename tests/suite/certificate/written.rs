//! Certificates written and verified: every solver on the small boards, draws with
//! repetitions and table leaves, partial certificates and their stitching, the command
//! line's gzip files, sessions' certificates, cuts, bounded closing, the published ones
//! against their manifest.

use super::*;

#[test]
fn every_solver_writes_certificates_that_verify_on_the_small_boards() {
    for board in ["3x3", "3x5", "5x3", "3x7", "7x3"] {
        let root = Position::initial(board.parse::<Board>().unwrap()).to_string();
        for algo in ["pn", "pn2", "pn2-dfpn", "dfpn"] {
            for attacker in [Color::White, Color::Black] {
                let (text, proves) = certificate(&root, attacker, algo, None);
                // White wins every one of these boards (Table 4).
                assert_eq!(proves, attacker == Color::White, "{board} {algo}");
                let report = check(&text, None).unwrap_or_else(|e| panic!("{board} {algo}: {e}"));
                assert_eq!(report.nodes as usize, text.lines().count() - 1);
                assert_eq!(report.claim, if proves { "proven" } else { "disproven" });
            }
        }
    }
}

/// df-pn whose table is far too small (its cheapest entries dropped again and again) finds
/// the values a large table finds: its keys are exact, so dropping entries costs only work.
/// (Its certificates are written by a resolver with a table of its own.)
#[test]
fn df_pn_with_a_tiny_table_finds_the_values_a_large_one_finds() {
    let mut roots: Vec<(String, Vec<usize>)> = [
        ("3x3", vec![32]),
        ("3x5", vec![256]),
        ("5x3", vec![256]),
        ("3x7", vec![256, 4096]),
        ("7x3", vec![256, 4096]),
    ]
    .into_iter()
    .map(|(b, c)| {
        (
            Position::initial(b.parse::<Board>().unwrap()).to_string(),
            c,
        )
    })
    .collect();
    roots.push((DRAWN_3X5.to_string(), vec![256]));
    let mut collected = 0;
    for (root, capacities) in &roots {
        let pos: Position = root.parse().unwrap();
        for attacker in [Color::White, Color::Black] {
            let goal = Goal { attacker };
            let leaf = LeafEval::new(None);
            let large = DfPn::new(goal, leaf, Limits::none(), 1 << 20).result(&pos, |_| {});
            for &capacity in capacities {
                let mut search = DfPn::new(goal, leaf, Limits::none(), capacity);
                let result = search.result(&pos, |_| {});
                assert_eq!(
                    result.outcome, large.outcome,
                    "{root} {attacker} {capacity}"
                );
                collected += search.table_collections().0;
                let solved = Solved {
                    root: pos,
                    goal,
                    proves: result.outcome == Outcome::Proven,
                    db: None,
                    tree: None,
                    dfpn: None,
                };
                let header = write::header(&solved, Default::default());
                let mut out = Vec::new();
                write::write(&mut out, &header, solved, None, None, &mut |_| {}).unwrap();
                check(&String::from_utf8(out).unwrap(), None)
                    .unwrap_or_else(|e| panic!("{root} {attacker} {capacity}: {e}"));
            }
        }
    }
    assert!(
        collected > 100,
        "the tables were hardly ever full: {collected}"
    );
}

#[test]
fn draws_with_repetitions_and_table_leaves_verify() {
    for algo in ["pn", "pn2", "dfpn"] {
        for attacker in [Color::White, Color::Black] {
            let (text, proves) = certificate(DRAWN_3X5, attacker, algo, None);
            assert!(!proves);
            check(&text, None).unwrap_or_else(|e| panic!("{algo}: {e}"));
        }
    }
    let (text, _) = certificate(DRAWN_3X5, Color::White, "dfpn", None);
    assert!(
        text.lines().any(|l| l.contains(" r ")),
        "no repetition leaf:\n{text}"
    );
    let dir = tables();
    let db = Database::new(dir.path(), "3x5".parse().unwrap());
    let root = Position::initial("3x5".parse::<Board>().unwrap()).to_string();
    for algo in ["pn2", "dfpn"] {
        let (text, proves) = certificate(&root, Color::White, algo, Some(&db));
        assert!(proves);
        let report = check(&text, Some(dir.path())).unwrap();
        assert!(report.table_leaves > 0, "{algo}: no table leaf");
        // Without the tables, the table leaves cannot be checked: unreadable, not wrong.
        assert!(matches!(
            check(&text, None),
            Err(VerifyError::Unreadable { .. })
        ));
    }
}

#[test]
fn partial_certificates_leave_open_what_exceeds_the_budget_and_list_it() {
    for (root, attacker) in [
        (
            Position::initial("7x3".parse::<Board>().unwrap()).to_string(),
            Color::White,
        ),
        (DRAWN_3X5.to_string(), Color::White),
        (DRAWN_3X5.to_string(), Color::Black),
    ] {
        let mut opened = 0;
        for budget in [1, 30, 1 << 40] {
            let (text, list, written, proves) = partial(&root, attacker, budget);
            let report = check(&text, None).unwrap_or_else(|e| panic!("{root} {budget}: {e}"));
            assert!(report.partial);
            assert_eq!(report.open_leaves, written.open, "{root} {budget}");
            assert_eq!(list.lines().count() as u64, written.open);
            assert_eq!(
                text.lines().filter(|l| l.ends_with(" o")).count() as u64,
                written.open
            );
            if budget == 1 << 40 {
                assert_eq!(written.open, 0, "{root}: open leaves without a budget");
            }
            opened += written.open;
            // Each listed leaf, decided on its own after its past, holds the claim's way.
            for line in list.lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let pos: Position = v["position"].as_str().unwrap().parse().unwrap();
                let mut path = fanorona::search::dfpn::Path::default();
                for p in v["since_capture"].as_array().unwrap() {
                    path.push(p.as_str().unwrap().parse().unwrap());
                }
                let goal = Goal { attacker };
                let mut dfpn = DfPn::new(goal, LeafEval::new(None), Limits::none(), 1 << 20);
                let e = dfpn.decide(&mut path, &pos);
                assert_eq!(e.pn == 0, proves, "{root}: open leaf {pos}");
                assert_eq!(e.dn == 0, !proves, "{root}: open leaf {pos}");
            }
            // Without the header's word, an open leaf is refused where it stands.
            if written.open > 0 {
                let strict = text.replacen(",\"partial\":true", "", 1);
                assert_ne!(strict, text);
                let line = 1 + text.lines().position(|l| l.ends_with(" o")).unwrap() as u64;
                expect_wrong(&strict, None, line, "does not say \"partial\"");
            }
        }
        assert!(opened > 0, "{root}: the small budgets left nothing open");
    }
}

#[test]
fn stitching_certificates_of_the_open_leaves_makes_a_whole_certificate() {
    use fanorona::certificate::stitch::{Leaf, StitchError, stitch};
    let root = Position::initial("7x3".parse::<Board>().unwrap()).to_string();
    let (text, list, written, _) = partial(&root, Color::White, 30);
    assert!(
        written.open >= 2,
        "too few open leaves to test: {}",
        written.open
    );
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("p.partial.cert");
    std::fs::write(&part, &text).unwrap();
    let mut leaves = Vec::new();
    for line in list.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let (node, position) = (v["node"].as_u64().unwrap(), v["position"].as_str().unwrap());
        let (cert, proves) = certificate(position, Color::White, "dfpn", None);
        assert!(proves, "open leaf {node}");
        let path = dir.path().join(format!("node-{node}.cert"));
        std::fs::write(&path, cert).unwrap();
        leaves.push(Leaf {
            node,
            position: position.to_string(),
            path,
        });
    }
    let whole = dir.path().join("whole.cert.gz");
    let done = stitch(&part, &leaves, &whole).unwrap();
    assert_eq!((done.closed, done.open), (written.open, 0));
    let report =
        fanorona::certificate::verify_file(&whole, None, |_| {}, &mut |_| {}, &mut |_, _| {})
            .unwrap();
    assert_eq!((report.open_leaves, report.partial), (0, false));
    assert_eq!(report.nodes, done.nodes);
    assert!(report.nodes > written.nodes);
    // One leaf left out stays open; the rest still checks.
    let some = dir.path().join("some.cert");
    let done = stitch(&part, &leaves[1..], &some).unwrap();
    assert_eq!(done.open, 1);
    let some_text = std::fs::read_to_string(&some).unwrap();
    // The leaf left open is where the stitch says, now that lines came in before it.
    let (old, new) = done.still_open[0];
    assert_eq!(old, leaves[0].node);
    assert!(
        some_text
            .lines()
            .nth(new as usize + 1)
            .unwrap()
            .ends_with(" o")
    );
    let report = check(&some_text, None).unwrap();
    assert_eq!((report.open_leaves, report.partial), (1, true));
    // A certificate of another position is refused, and nothing is written.
    let mut wrong = leaves;
    wrong[0].position = root.clone();
    let bad = dir.path().join("bad.cert");
    assert!(matches!(
        stitch(&part, &wrong, &bad),
        Err(StitchError::Mismatch { .. })
    ));
    assert!(!bad.exists());
}

#[test]
fn solve_writes_gzip_certificates_that_verify_exits_on() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("3x7");
    let o = run(
        &[
            "solve",
            "3x7",
            "--algo",
            "dfpn",
            "--certificate",
            prefix.to_str().unwrap(),
            "--json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verified"], true);
    assert_eq!(v["certificates"][0]["verified"], true);
    let cert = dir.path().join("3x7.white-wins.cert.gz");
    let ok = run(&["verify", cert.to_str().unwrap()], b"");
    assert_eq!(ok.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("OK, white wins proven"));

    // Damage inside the gzip stream: unreadable (2), never OK.
    let mut bytes = std::fs::read(&cert).unwrap();
    let n = bytes.len();
    for b in &mut bytes[n / 2..n / 2 + 8] {
        *b ^= 0x5a;
    }
    let bad = dir.path().join("bad.cert.gz");
    std::fs::write(&bad, &bytes).unwrap();
    let o = run(&["verify", bad.to_str().unwrap()], b"");
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
    // Cut short: unreadable.
    let cut = dir.path().join("cut.cert.gz");
    std::fs::write(&cut, &std::fs::read(&cert).unwrap()[..n / 2]).unwrap();
    assert_eq!(
        run(&["verify", cut.to_str().unwrap()], b"").status.code(),
        Some(2)
    );
    // A wrong claim: exit 1, with the line.
    let text = {
        let mut s = String::new();
        let mut r = format::open(&cert, |_| {}).unwrap();
        std::io::Read::read_to_string(&mut r, &mut s).unwrap();
        s
    };
    let wrong = dir.path().join("wrong.cert");
    std::fs::write(&wrong, text.replacen("\"proven\"", "\"disproven\"", 1)).unwrap();
    let o = run(&["verify", wrong.to_str().unwrap(), "--json"], b"");
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"], "wrong");
    assert!(v["line"].as_u64().unwrap() > 1);
}

#[test]
fn probe_batch_agrees_with_single_probes() {
    let dir = tables();
    let d = dir.path().to_str().unwrap();
    let positions = [
        "...../..W../...B. w",
        "...../..W../...B. b",
        "W.B../....W/...B. b",
        "WW.../..B../B.... w",
        "W..../..B../..... w",
        "WWW../..B../B.... w",
        "not a position",
    ];
    let input = positions.join("\n") + "\n";
    let o = run(&["db", "probe", "--batch", "--dir", d], input.as_bytes());
    // A line that is not a position: '-' in its place, and exit 2 at the end.
    assert_eq!(o.status.code(), Some(2));
    let out = String::from_utf8(o.stdout).unwrap();
    let answers: Vec<&str> = out.lines().collect();
    assert_eq!(answers.len(), positions.len());
    for (p, a) in positions.iter().zip(&answers) {
        let single = run(&["db", "probe", p, "--dir", d, "--json"], b"");
        if single.status.success() {
            let v: serde_json::Value = serde_json::from_slice(&single.stdout).unwrap();
            let letter = &v["value"].as_str().unwrap()[..1];
            assert_eq!(*a, letter, "{p}");
        } else {
            assert_eq!(*a, "-", "{p}");
        }
    }
    // The 5-piece position is beyond the tables: '-' with the reason on stderr.
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("line 6: 5 pieces: the tables of 3x5 under") && err.contains("at most 4"),
        "{err}"
    );
    assert!(err.contains("line 7: not a position"), "{err}");
    assert_eq!(answers[5], "-");
    assert_ne!(answers[0], "-");
}

#[test]
fn a_solved_session_has_certificates_for_both_questions() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let solved = run(&["solve", "7x3", "--data-dir", data, "--json"], b"");
    assert!(
        solved.status.success(),
        "{}",
        String::from_utf8_lossy(&solved.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&solved.stdout).unwrap();
    // White's proof decides 7x3; the verdict is about it, whatever became of Black's search.
    assert_eq!(v["value"], "white");
    assert_eq!(v["verified"], true);
    let certs = v["certificates"].as_array().unwrap();
    assert_eq!(certs.len(), 2);
    assert!(certs.iter().all(|c| c["verified"] == true));
    let prefix = dir.path().join("s");
    // `session certificate ID PREFIX`: succeeds, and says how the certificates came about.
    let certificate_of = |id: &str, says: &str| {
        let o = run(
            &[
                "session",
                "certificate",
                id,
                prefix.to_str().unwrap(),
                "--data-dir",
                data,
            ],
            b"",
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stdout).contains(says));
    };
    certificate_of(
        "1",
        "written when the session was solved, verified again now",
    );
    for goal in ["white", "black"] {
        let cert = dir.path().join(format!("s.{goal}-wins.cert.gz"));
        assert_eq!(
            run(&["verify", cert.to_str().unwrap()], b"").status.code(),
            Some(0)
        );
    }
    // A kept certificate damaged since (one byte flipped) is not handed out as verified.
    let kept = std::fs::read_dir(dir.path().join("data/certificates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("white-wins.cert.gz"))
        .unwrap();
    let mut bytes = std::fs::read(&kept).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&kept, bytes).unwrap();
    let copy = dir.path().join("damaged");
    let o = run(
        &[
            "session",
            "certificate",
            "1",
            copy.to_str().unwrap(),
            "--data-dir",
            data,
        ],
        b"",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("white wins") && out.contains("FAILED verification"),
        "{out}"
    );
    // Without the daemon's copies they are written again from the store.
    std::fs::remove_dir_all(dir.path().join("data/certificates")).unwrap();
    certificate_of("1", "written and verified now");
    // A session that is not solved has none.
    let started = run(&["session", "start", "3x9", "--data-dir", data], b"");
    assert!(started.status.success());
    let o = run(
        &[
            "session",
            "certificate",
            "2",
            prefix.to_str().unwrap(),
            "--data-dir",
            data,
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("session 2 is waiting for a daemon and has no question decided yet"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_partial_session_certificate_is_closed_by_stitch_solve() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    assert!(
        run(&["solve", "7x3", "--data-dir", data], b"")
            .status
            .success()
    );
    let prefix = dir.path().join("s");
    let p = prefix.to_str().unwrap();
    let o = run(
        &[
            "session",
            "certificate",
            "1",
            p,
            "--goal",
            "white",
            "--leaf-budget",
            "1",
            "--data-dir",
            data,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("PARTIAL: "));
    // Only the question asked.
    assert!(!dir.path().join("s.black-wins.cert.gz").exists());
    let partial = dir.path().join("s.white-wins.partial.cert.gz");
    let partial = partial.to_str().unwrap();
    assert_eq!(run(&["verify", partial], b"").status.code(), Some(4));
    let whole = dir.path().join("whole.cert.gz");
    let leaves = dir.path().join("leaves");
    let o = run(
        &[
            "stitch",
            partial,
            "--leaves",
            leaves.to_str().unwrap(),
            "--out",
            whole.to_str().unwrap(),
            "--solve",
            "--json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["open"].as_u64(), v["verified"].as_bool()),
        (Some(0), Some(true))
    );
    assert!(v["closed"].as_u64().unwrap() > 0);
    assert_eq!(
        run(&["verify", whole.to_str().unwrap()], b"").status.code(),
        Some(0)
    );
}

#[test]
fn a_certificate_cut_below_a_line_of_moves_is_that_positions_certificate() {
    use fanorona::certificate::cut::{CutError, cut};
    let dir = tempfile::tempdir().unwrap();
    // A proof (White wins 3x7) and a
    // disproof with repetitions (a drawn 3x5 position), cut at each node.
    let start_3x7 = Position::initial("3x7".parse::<Board>().unwrap()).to_string();
    let mut lines_cut = 0;
    let mut copied = 0;
    for (root, attacker, algo) in [
        (start_3x7.as_str(), Color::White, "pn2-dfpn"),
        (DRAWN_3X5, Color::White, "dfpn"),
    ] {
        let (text, proves) = certificate(root, attacker, algo, None);
        let whole = dir.path().join("whole.cert");
        std::fs::write(&whole, &text).unwrap();
        let ls: Vec<String> = text.lines().skip(1).map(str::to_string).collect();
        // Every node four moves deep or less (leaves too: a shared or repetition leaf
        // stands for its node's subtree), as its line of moves.
        let mut paths: Vec<Vec<usize>> = Vec::new();
        let mut above: Vec<usize> = Vec::new();
        for (i, l) in ls.iter().enumerate().skip(1) {
            let d = depth(l);
            above.truncate(d - 1);
            above.push(i);
            if d <= 4 {
                paths.push(above.clone());
            }
        }
        assert!(paths.len() > 5, "{root}: {} paths", paths.len());
        for path in paths {
            let moves: Vec<String> = path.iter().map(|&i| move_of(&ls[i]).to_string()).collect();
            let out = dir.path().join("cut.cert.gz");
            let mut pos: Position = root.parse().unwrap();
            for m in &moves {
                pos = fanorona::moves::Move::parse(&pos, m).unwrap().apply(&pos);
            }
            match cut(&whole, &moves, &out) {
                Ok(done) => {
                    let report = fanorona::certificate::verify_file(
                        &out,
                        None,
                        |_| {},
                        &mut |_| {},
                        &mut |_, _| {},
                    )
                    .unwrap_or_else(|e| panic!("{root} after {moves:?}: {e}"));
                    assert_eq!(report.position, pos.to_string());
                    assert_eq!(done.position, pos.to_string());
                    assert_eq!(report.claim, if proves { "proven" } else { "disproven" });
                    assert_eq!(report.nodes, done.nodes);
                    lines_cut += 1;
                    copied += done.copied;
                }
                Err(e) => panic!("{root} after {moves:?}: {e}"),
            }
        }
    }
    assert!(lines_cut > 10, "{lines_cut} cuts");
    assert!(copied > 0, "no shared subtree from outside was copied in");
    // A move the certificate does not follow names the ones it does.
    let (text, _) = certificate(&start_3x7, Color::White, "pn2-dfpn", None);
    let whole = dir.path().join("whole.cert");
    std::fs::write(&whole, &text).unwrap();
    let first = move_of(text.lines().nth(2).unwrap()).to_string();
    let root: Position = start_3x7.parse().unwrap();
    let other = fanorona::moves::legal_moves(&root)
        .iter()
        .map(|m| m.notation(root.board()))
        .find(|m| *m != first)
        .unwrap();
    let out = dir.path().join("none.cert");
    match cut(&whole, &[other], &out) {
        Err(CutError::Mismatch { reason, .. }) => assert!(reason.contains(&first), "{reason}"),
        r => panic!("{r:?}"),
    }
    assert!(!out.exists());
}

/// `make` on a leaf budget with closing: the open leaves are solved on their own and
/// stitched in, so the certificate comes out whole under its own name, checked, with no
/// partial file, list or leaf directory left; without closing it stays partial. A cancel
/// set before the write abandons it and leaves no certificate.
#[test]
fn a_bounded_certificate_closes_its_open_leaves_or_gives_up_when_cancelled() {
    use fanorona::certificate::close::CloseOptions;
    use fanorona::certificate::{Terms, make, partial_path_for, path_for};
    let root = Position::initial("7x3".parse::<Board>().unwrap());
    let goal = Goal {
        attacker: Color::White,
    };
    let (tree, _) = pn::search(
        &root,
        goal,
        LeafEval::new(None),
        Algorithm::Pn2,
        Limits::none(),
        |_| {},
    );
    let proves = tree.outcome() == Outcome::Proven;
    let solved = || Solved {
        root,
        goal,
        proves,
        db: None,
        tree: Some(&tree),
        dfpn: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let close = CloseOptions {
        nodes: 1 << 30,
        threads: 2,
        second_level: fanorona::search::SecondLevel::TreeSize,
        init: fanorona::search::Init::Material,
        model: None,
    };
    let lines = std::sync::Mutex::new(Vec::new());
    let report = |l: &str| lines.lock().unwrap().push(l.to_string());
    // Left partial: the same budget without closing.
    let prefix = dir.path().join("open");
    let part = make(
        &prefix,
        solved(),
        Default::default(),
        None,
        Terms {
            leaf_budget: Some(30),
            ..Terms::default()
        },
        &mut |_| {},
    )
    .unwrap();
    assert!(
        part.written.open >= 2,
        "too few open leaves: {}",
        part.written.open
    );
    assert_eq!(part.path, partial_path_for(&prefix, goal));
    // Closed.
    let prefix = dir.path().join("closed");
    let terms = Terms {
        leaf_budget: Some(30),
        close: Some(close),
        cancel: None,
        report: Some(&report),
    };
    let made = make(
        &prefix,
        solved(),
        Default::default(),
        None,
        terms,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(made.path, path_for(&prefix, goal));
    assert_eq!((made.written.open, made.open_list.is_none()), (0, true));
    let checked = made.check.as_ref().unwrap();
    assert_eq!((checked.open_leaves, checked.partial), (0, false));
    assert_eq!(checked.nodes, made.written.nodes);
    assert!(made.written.nodes > part.written.nodes);
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("closed"))
        .collect();
    left.sort();
    assert_eq!(left, ["closed.white-wins.cert.gz"]);
    let said = lines.lock().unwrap().clone();
    assert_eq!(
        said.iter().filter(|l| l.contains(": closed (")).count() as u64,
        part.written.open,
        "{said:?}"
    );
    assert_eq!(made.written.closed, part.written.open);
    // Cancelled while the leaves are solved (one at a time; the first leaf's line sets the
    // flag): no whole certificate, the partial one and its list stay for `stitch`.
    let stop = fanorona::certificate::Cancel::default();
    let stop_at_first = |l: &str| {
        if l.starts_with("leaf ") {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let prefix = dir.path().join("halfway");
    let one = Terms {
        close: Some(CloseOptions {
            threads: 1,
            ..close
        }),
        cancel: Some(&stop),
        report: Some(&stop_at_first),
        ..terms
    };
    let cancelled = |prefix: &Path, terms: Terms<'_>| {
        let e = make(
            prefix,
            solved(),
            Default::default(),
            None,
            terms,
            &mut |_| {},
        )
        .err();
        matches!(e, Some(fanorona::certificate::WriteError::Cancelled))
    };
    assert!(cancelled(&prefix, one));
    assert!(!path_for(&prefix, goal).exists());
    assert!(partial_path_for(&prefix, goal).is_file());
    assert!(fanorona::certificate::open_list_for(&prefix, goal).is_file());
    // The re-solving search itself stops on the flag, as its limits would.
    let mut dfpn = DfPn::new(goal, LeafEval::new(None), Limits::none(), 1 << 16);
    dfpn.stop_on(Some(fanorona::certificate::Cancel::new(true.into())));
    let e = dfpn.search(&root, |_| {});
    assert!(e.pn != 0 && e.dn != 0 && dfpn.stats.nodes <= 1, "{e:?}");
    dfpn.stop_on(None);
    let e = dfpn.decide(&mut fanorona::search::dfpn::Path::default(), &root);
    assert_eq!(e.pn == 0, proves);
    // Cancelled before it starts: nothing at all is left.
    let stop = fanorona::certificate::Cancel::new(true.into());
    let prefix = dir.path().join("cancelled");
    let terms = Terms {
        cancel: Some(&stop),
        ..terms
    };
    assert!(cancelled(&prefix, terms));
    let left = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("cancelled"))
        .count();
    assert_eq!(left, 0, "an abandoned certificate left files");
}

/// `docs/certificates/MANIFEST.tsv` is one row per published certificate (file, root position,
/// goal, claim, node lines, bytes, sha256). Each row matches its file: its size, its sha256
/// (by `sha256sum`), its header's position, goal and claim, and its node lines counted through
/// gzip; and every file under `docs/certificates` (and one directory down) but the manifest
/// has a row.
#[test]
fn the_published_certificates_match_their_manifest() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/certificates");
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).expect("the manifest");
    let mut rows = manifest.lines();
    assert_eq!(
        rows.next(),
        Some("file\tposition\tgoal\tclaim\tnodes\tbytes\tsha256"),
        "the manifest's header row"
    );
    let mut listed = std::collections::BTreeSet::new();
    for row in rows {
        let fields: Vec<&str> = row.split('\t').collect();
        let [name, position, goal, claim, nodes, bytes, sha256] = fields[..] else {
            panic!("{row:?}: a row has 7 fields separated by tabs");
        };
        assert!(listed.insert(name.to_string()), "{name} is listed twice");
        let path = dir.join(name);
        let size = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .len();
        assert_eq!(size.to_string(), bytes, "{name}: bytes");
        let out = Command::new("sha256sum")
            .arg(&path)
            .output()
            .expect("sha256sum runs");
        assert!(out.status.success(), "sha256sum {name}");
        let digest = String::from_utf8(out.stdout).expect("sha256sum prints text");
        assert_eq!(
            digest.split_whitespace().next(),
            Some(sha256),
            "{name}: sha256"
        );
        let mut input = format::open(&path, |_| {}).expect("the certificate opens");
        let mut header = String::new();
        input.read_line(&mut header).expect("its header line");
        let header: format::Header =
            serde_json::from_str(header.trim_end()).expect("a certificate header");
        assert_eq!(
            (
                header.position.as_str(),
                header.goal.as_str(),
                header.claim.as_str()
            ),
            (position, goal, claim),
            "{name}: the header's position, goal and claim"
        );
        // Every node line ends with a newline, so the newlines after the header count them.
        let mut lines = 0u64;
        loop {
            let chunk = input.fill_buf().expect("the certificate reads");
            if chunk.is_empty() {
                break;
            }
            lines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
            let n = chunk.len();
            input.consume(n);
        }
        assert_eq!(lines.to_string(), nodes, "{name}: node lines");
    }
    // Every file, and every file one directory down (certificates over other tables).
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("docs/certificates") {
        let entry = entry.expect("an entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() {
            for inner in std::fs::read_dir(entry.path()).expect("a directory of certificates") {
                let inner = inner.expect("an entry").file_name();
                files.push(format!("{name}/{}", inner.to_string_lossy()));
            }
        } else {
            files.push(name);
        }
    }
    for name in files {
        assert!(
            name == "MANIFEST.tsv" || listed.contains(&name),
            "docs/certificates/{name} is not in MANIFEST.tsv"
        );
    }
}

/// `verify --json` reads back as its typed answers: a certificate's is the checker's own
/// report (the same as checking it in this process, but for the time), a refusal says wrong
/// or unreadable; and `solve --json` names the certificate it wrote with the same claim.
#[test]
fn verify_json_reads_back_as_the_checkers_report() {
    use fanorona::certificate::Summary;
    use fanorona::certificate::report::{CertificateChecked, CertificateRefused, Refusal};
    use fanorona::search::report::PositionSolved;

    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("3x5");
    let o = run(
        &[
            "solve",
            "3x5",
            "--no-store",
            "--certificate",
            prefix.to_str().unwrap(),
            "--json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let solved: PositionSolved<Summary> = serde_json::from_slice(&o.stdout).unwrap();
    let written = &solved.certificates[0];
    let cert = Path::new(&written.path);

    let o = run(&["verify", cert.to_str().unwrap(), "--json"], b"");
    assert_eq!(o.status.code(), Some(0));
    let checked: CertificateChecked = serde_json::from_slice(&o.stdout).unwrap();
    let here = fanorona::certificate::verify_file(cert, None, |_| {}, &mut |_| {}, &mut |_, _| {})
        .unwrap();
    assert_eq!(checked.ok, here.open_leaves == 0);
    assert_eq!(
        fanorona::certificate::Report {
            seconds: here.seconds,
            ..checked.report.clone()
        },
        here
    );
    assert_eq!(checked.bytes, written.bytes);
    assert_eq!(
        (checked.report.goal.as_str(), checked.report.claim.as_str()),
        (written.goal.as_str(), written.claim.as_str())
    );

    let cut = dir.path().join("cut.cert");
    let text = std::fs::read(cert).unwrap();
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let o = run(&["verify", cut.to_str().unwrap(), "--json"], b"");
    assert_eq!(o.status.code(), Some(2));
    let refused: CertificateRefused = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((refused.ok, refused.error), (false, Refusal::Unreadable));
}
