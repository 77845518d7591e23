//! What proofs give the web app: every move a certificate reaches valued exactly (those
//! rooted at the position after a move too), an ended position headed as lost, the
//! analysis board played by clicks with its last move marked and a flip, the Proofs pages at
//! a phone's width, and a game against the proof player.

use super::*;

/// A session's certificates of the 3x7 start, and of the position after one of White's
/// moves the start's proof does not take: (that move, the value a search gives it, White's
/// winning move).
fn certificates_of_3x7(data: &Data) -> (String, String, String) {
    let o = data.cmd(&["solve", "3x7"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let start = Position::initial("3x7".parse().unwrap());
    let proof = data.dir.join("certificates/session-1.white-wins.cert.gz");
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&proof).unwrap()),
        &mut text,
    )
    .unwrap();
    let winning = text
        .lines()
        .nth(2)
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .to_string();
    let other = fanorona::legal_moves(&start)
        .into_iter()
        .map(|m| m.notation(start.board()))
        .find(|m| *m != winning)
        .unwrap();
    let child = after(&start.to_string(), &[&other]);
    let o = data.cmd(&["solve", &child]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let o = data.cmd(&["solve", &child, "--no-store", "--json"]);
    let solved: Value = serde_json::from_slice(&o.stdout).unwrap();
    let winner = solved["value"].as_str().unwrap().to_string();
    (other, winner, winning)
}

use fanorona::Position;

#[test]
fn certificates_value_every_move_they_reach_and_the_analysis_board_takes_clicks() {
    let data = data();
    let (other, winner, winning) = certificates_of_3x7(&data);
    let server = serve(&data, None);
    // The move to the other certificate's root is valued exactly, from the certificates,
    // as the search values it; the proof's own move is a win.
    let (s, v) = post(&server, "/api/analyse", json!({"start": "3x7"}));
    assert_eq!(s, 200, "{v}");
    let moves = v["analysis"]["moves"].as_array().unwrap();
    let row = |m: &str| moves.iter().find(|r| r["notation"] == m).unwrap().clone();
    let r = row(&other);
    assert_eq!(r["source"], "certificate", "{r}");
    let word = r["value"].as_str().unwrap();
    assert!(["win", "draw", "loss"].contains(&word), "{r}");
    assert!(
        agrees(word, "white", &winner),
        "{r}: a search says {winner}"
    );
    assert_eq!(row(&winning)["value"], "win");
    // The explorer says the same of it.
    let root = Position::initial("3x7".parse().unwrap()).to_string();
    let (s, w) = server.http(
        "GET",
        &format!("/api/proofs/walk?root={}&line=", urlencode(&root)),
        None,
    );
    assert_eq!(s, 200, "{w}");
    let m = w["moves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["move"] == other)
        .unwrap()
        .clone();
    assert_eq!(m["value"], word, "{m}");
    // Its list names the roots by the move that reaches them.
    let (_, list) = server.http("GET", "/api/proofs", None);
    let named: Vec<&str> = list["roots"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["reached_by"].as_str())
        .collect();
    assert!(named.contains(&"the start"), "{list}");
    assert!(named.contains(&format!("after {other}").as_str()), "{list}");

    // A position looked up in the certificates: the line to it from a root.
    let found = after(&root, &[&winning]);
    let (s, f) = server.http(
        "GET",
        &format!("/api/proofs/find?position={}", urlencode(&found)),
        None,
    );
    assert_eq!(s, 200, "{f}");
    assert_eq!(f["root"], json!(root), "{f}");
    assert_eq!(f["line"], json!([winning]), "{f}");
    let (s, f) = server.http(
        "GET",
        &format!(
            "/api/proofs/find?position={}",
            urlencode("......./...B.../W...... w")
        ),
        None,
    );
    assert_eq!(s, 404, "{f}");
    assert!(
        f["error"]
            .as_str()
            .unwrap()
            .contains("no checked certificate reaches"),
        "{f}"
    );

    let b = Browser::start();
    // On Proofs, the same look-up opens the walk there.
    b.open(&server.url("#/proofs"));
    b.wait("#proof-find-position", 30);
    b.type_into("#proof-find-position", &found);
    b.click_css("#proof-find button");
    b.wait_until(
        "the walk to the position looked up",
        &format!(
            "return !!proofs.last && proofs.last.position === {}",
            serde_json::to_string(&found).unwrap()
        ),
        30,
    );
    // There its last move is marked; a row pointed at previews its move; Flip turns it.
    assert!(!b.all("#proof-board g.pt.last").is_empty());
    b.eval("document.querySelector('#proof-moves tr[data-move]').dispatchEvent(new MouseEvent('mouseenter')); return 1");
    assert!(!b.all("#proof-board g.pt.target").is_empty());
    let a1 = "return document.querySelector('#proof-board g.pt[data-point=\"a1\"] circle.hit').getAttribute('cx')";
    let unflipped = b.eval(a1);
    b.click_css("#proof-flip");
    assert_ne!(b.eval(a1), unflipped);
    b.click_css("#proof-flip");
    b.open(&server.url("#/analyse?position=3x7"));
    wait_analysed(&b, &root);
    // A move by clicks on the board: the piece, then the dot (and a capture's kind where
    // both are offered, then further steps) until the move is whole.
    let a1 = "return document.querySelector('#board-holder g.pt[data-point=\"a1\"] circle.hit').getAttribute('cx')";
    let before = b.eval(a1);
    b.click_css("#board-holder g.pt.movable");
    for _ in 0..8 {
        if b.eval("return analysis.line.length").as_u64() == Some(1) {
            break;
        }
        if let Some(c) = b.all("#choose-approach").into_iter().next() {
            b.try_click(&c);
        } else if let Some(t) = b.all("#board-holder g.pt.target").into_iter().next() {
            b.try_click(&t);
        }
    }
    b.wait_until(
        "a move played by clicks",
        "return analysis.line.length === 1 && !!analysis.state && analysis.state.last !== null && document.getElementById('note').textContent !== 'valuing every move…'",
        30,
    );
    assert!(hash(&b).contains("&line="), "{}", hash(&b));
    // Marked on the board: the last move's end ringed, its path drawn.
    assert!(!b.all("#board-holder g.pt.last").is_empty());
    assert!(!b.all("#board-holder polyline.last-path").is_empty());
    // Flipped, a1 is drawn at the other end.
    b.click_css("#flip");
    assert_ne!(b.eval(a1), before);
    b.click_css("#flip");
    assert_eq!(b.eval(a1), before);
    // A move typed without its mark, where only one move reads so.
    let typed = b
        .eval("const m = analysis.state.analysis.moves.find(x => /[AW]/.test(x.notation) && analysis.state.analysis.moves.filter(y => y.notation.replace(/[AW]/g, '') === x.notation.replace(/[AW]/g, '')).length === 1); return m ? m.notation : null")
        .as_str()
        .map(str::to_string);
    if let Some(t) = typed {
        b.type_into("#analyse-move", &t.replace(['A', 'W'], ""));
        b.press(&common::browser::keys::ENTER.to_string());
        b.wait_until("the typed move", "return analysis.line.length === 2", 30);
    }
    // A position with no White piece: headed as lost.
    b.open(&server.url("#/analyse?position=......./...B.../.......%20w"));
    b.wait_until(
        "the lost position",
        "return document.getElementById('analysis-value').textContent.includes('lost')",
        30,
    );
    assert!(b.text("#analysis-value").starts_with("white to move: lost"));
    // The proof player on Play: White's moves from the certificate, each with its reason.
    new_game(&b, &server, "3x7", "proof", "human");
    b.wait_until(
        "the proof player's move",
        "return document.getElementById('note').textContent.includes('its move, which wins')",
        30,
    );
    assert!(
        b.text("#note")
            .starts_with(&format!("proof played {winning}"))
    );
    b.screenshot(&screenshot_path(data.tmp.path(), "web-play-proof.png"));
}

#[test]
fn the_proofs_pages_fit_a_phone() {
    let data = data();
    certificates_of_3x7(&data);
    // A 5x9 root: the longest position text.
    let o = data.cmd(&[
        "solve",
        "........./........./....B..../...W...../......... w",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    std::fs::write(
        data.dir.join("certificates/garbled.cert"),
        "not a certificate\n",
    )
    .unwrap();
    let server = serve(&data, None);
    let b = Browser::start();
    b.viewport(390, 844);
    b.open(&server.url("#/proofs"));
    b.wait("#proof-roots a[data-root]", 30);
    let (w, wide) = overflow(&b, 390);
    assert!(w <= 390, "proofs: {w} px wide: {wide}");
    // Nothing stray under the list.
    assert!(!b.text("#main").contains("null"), "{}", b.text("#main"));
    b.click_css("#proof-roots a[data-root]");
    b.wait("#proof-moves tr[data-move]", 30);
    let (w, wide) = overflow(&b, 390);
    assert!(w <= 390, "explorer: {w} px wide: {wide}");
    // No cell breaks a word or a number (only the why column's sentences wrap).
    let broken = b.eval(
        "return [...document.querySelectorAll('#proof-moves td:not(.why), #proof-certificates td')].filter(td => getComputedStyle(td).overflowWrap !== 'normal').map(td => td.textContent).slice(0, 4)",
    );
    assert_eq!(broken, json!([]), "{broken}");
    let split = b.eval(
        "return [...document.querySelectorAll('#proof-moves td.mv')].filter(td => getComputedStyle(td).whiteSpace !== 'nowrap').length",
    );
    assert_eq!(split, json!(0));
    b.screenshot(&screenshot_path(data.tmp.path(), "web-proofs-phone.png"));
}

#[test]
fn certificates_are_checked_from_the_start_and_again_when_their_tables_appear() {
    let data = data();
    // 5x5's "White wins?" disproof: a certificate of some size, checked from `serve`'s start.
    let certs = data.dir.join("certificates");
    std::fs::create_dir_all(&certs).unwrap();
    let prefix = |name: &str| certs.join(name).display().to_string();
    let o = data.cmd(&[
        "solve",
        "5x5",
        "--goal",
        "white",
        "--no-store",
        "--certificate",
        &prefix("5x5"),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    // 3x5's proof over its 4-piece tables, built elsewhere: refused until they are here.
    let elsewhere = data.tmp.path().join("egdb-elsewhere");
    let here = data.tmp.path().join("egdb");
    std::fs::create_dir(&here).unwrap();
    let build = |db: &std::path::Path| {
        let o = Command::new(common::BIN)
            .args(["db", "build", "--board", "3x5", "--pieces", "4", "--db"])
            .arg(db)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", common::stderr(&o));
    };
    build(&elsewhere);
    let o = data.cmd(&[
        "solve",
        "3x5",
        "--goal",
        "white",
        "--db",
        elsewhere.to_str().unwrap(),
        "--no-store",
        "--certificate",
        &prefix("3x5"),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let server = Server::start(&data.config, &data.dir, &["--db", here.to_str().unwrap()]);
    // A proof link asked for at once: being checked (503, said so) or shown; shown within
    // 2 s of the end of the check.
    let root = urlencode(&Position::initial("5x5".parse().unwrap()).to_string());
    let walk = format!("/api/proofs/walk?root={root}&line=");
    let started = Instant::now();
    let shown = loop {
        let (status, w) = server.http("GET", &walk, None);
        match status {
            200 => break started.elapsed().as_secs_f64(),
            503 => {
                let e = w["error"].as_str().unwrap();
                assert!(e.contains("being checked"), "{e}");
            }
            s => panic!("{s}: {w}"),
        }
        assert!(started.elapsed() < Duration::from_secs(60), "never shown");
        std::thread::sleep(Duration::from_millis(100));
    };
    wait_checked(&server);
    let (_, list) = server.http("GET", "/api/proofs", None);
    let files: Vec<Value> = list["roots"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["certificates"].as_array().unwrap().clone())
        .collect();
    // Each file says its size and how long its check took; the walk came within 2 s of
    // the end of the checks before it (those of every file, at most).
    assert!(
        files.iter().all(|f| f["bytes"].as_u64() > Some(0)),
        "{list}"
    );
    let checks: f64 = files
        .iter()
        .map(|f| f["check_seconds"].as_f64().unwrap())
        .sum();
    assert!(checks > 0.0, "{list}");
    assert!(
        shown < checks + 2.0,
        "shown after {shown:.2} s, the checks took {checks:.2} s"
    );
    // The 3x5 proof was refused for its tables; built here, it is checked again.
    let refused = list["refused"].to_string();
    assert!(refused.contains("tables"), "{list}");
    build(&here);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, list) = server.http("GET", "/api/proofs", None);
        if list["refused"].as_array().unwrap().is_empty() && list["checking"].is_null() {
            let boards: Vec<&str> = list["roots"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["board"].as_str().unwrap())
                .collect();
            assert!(boards.contains(&"3x5"), "{list}");
            break;
        }
        assert!(Instant::now() < deadline, "still refused: {list}");
        std::thread::sleep(Duration::from_millis(200));
    }
}
