//! The analysis page and the proofs: table positions as `db probe` values them,
//! certificates read and forged ones refused, sessions' curves and results, the proof
//! explorer, the address holding the line, set-ups, distances.

use super::*;

#[test]
fn the_analysis_page_lists_a_5x9_table_position_as_db_probe_does() {
    let data = data();
    let db = tables_5x9(&data);
    let server = serve(&data, Some(&db));
    let pos = "........./..B....../..W.W..../......B../......... b";
    let o = Command::new(BIN)
        .args(["db", "probe", pos, "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let probe: Value = serde_json::from_slice(&o.stdout).unwrap();
    let b = Browser::start();
    b.open(&server.url("#/analyse"));
    b.wait("#analyse-position", 10);
    b.type_into("#analyse-position", pos);
    b.click_css("#analyse");
    b.wait_until(
        "the analysis",
        &format!(
            "return document.querySelectorAll('#analysis-moves tbody tr[data-move]').length === {}",
            probe["moves"].as_array().unwrap().len()
        ),
        30,
    );
    let rows = b.eval(
        "return [...document.querySelectorAll('#analysis-moves tbody tr')].map(r =>
            [r.dataset.move, r.querySelector('.value').textContent, r.querySelector('.source').textContent,
             r.querySelectorAll('td')[3].textContent])",
    );
    let rows = rows.as_array().unwrap();
    for m in probe["moves"].as_array().unwrap() {
        let row = rows
            .iter()
            .find(|r| r[0] == m["move"])
            .unwrap_or_else(|| panic!("{} not listed: {rows:?}", m["move"]));
        assert_eq!(row[1], m["value"], "{row:?} against {m}");
        // From the tables, or from the rules where the move ends the game.
        assert!(row[2] == "tables" || row[2] == "rules", "{row:?}");
        // Plies to a capture or the end after the move, where the value is won or lost.
        if m["value"] != "draw" {
            assert_eq!(row[3], m["plies_after"].to_string(), "{row:?} against {m}");
        }
    }
    // Best first: the position's value is the first move's, as probe says.
    assert_eq!(rows[0][1], probe["value"], "{rows:?}");
    let value = b.text("#analysis-value");
    assert_eq!(
        value,
        format!("black to move: {}", probe["value"].as_str().unwrap())
    );
    b.screenshot(&screenshot_path(data.tmp.path(), "web-analysis-5x9.png"));
    // The address names the position: opened again (a reload, a link sent), it shows it.
    let hash = b.eval("return location.hash");
    let named = hash.as_str().unwrap().to_string();
    assert!(named.starts_with("#/analyse?position="), "{named}");
    b.open(&server.url("#/play"));
    b.wait("#board", 10);
    b.open(&server.url(&named));
    b.wait_until(
        "the named position analysed",
        &format!(
            "return document.getElementById('analyse-position').value === {} && document.querySelectorAll('#analysis-moves tbody tr[data-move]').length > 0",
            serde_json::to_string(pos).unwrap()
        ),
        30,
    );
}

#[test]
fn a_running_sessions_curve_gains_points_while_the_page_is_open() {
    // Checkpoints every second: the page reads the stored curve again, a part at a time.
    let data = Data::new("log_level = \"warn\"\ncheckpoint_interval = \"1s\"\n");
    let db = tables_5x9(&data);
    let _daemon = data.daemon();
    let started = data.json(&[
        "session",
        "start",
        "5x9",
        "--db",
        db.to_str().unwrap(),
        "--name",
        "5x9 watched",
        "--json",
    ]);
    let id = started["id"].as_u64().unwrap();
    data.wait_for(id, "the session to run", |s| s["state"] == "running");
    let server = serve(&data, Some(&db));
    let b = Browser::start();
    b.open(&server.url(&format!("#/session/{id}")));
    b.wait("#curve-count[data-points]", 20);
    let points = |b: &Browser| {
        b.eval("return Number(document.getElementById('curve-count').dataset.points)")
            .as_u64()
            .unwrap()
    };
    let first = points(&b);
    let deadline = Instant::now() + Duration::from_secs(30);
    while points(&b) < first + 3 {
        assert!(
            Instant::now() < deadline,
            "the curve stayed at {} points",
            points(&b)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(b.text("#session-state").contains("running"));
    assert!(!b.all("#chart svg.chart polyline.pn").is_empty());
    let log = b.text("#log");
    assert!(
        log.contains("white wins?") && log.contains(" UTC "),
        "{log}"
    );
    b.screenshot(&screenshot_path(data.tmp.path(), "web-session.png"));
    // Paused from the page, it says so.
    b.click_css("#pause");
    b.wait_until(
        "the pause",
        "const s = document.getElementById('session-state'); return !!s && s.textContent === 'paused'",
        60,
    );
    // The page's CSV link fetches the file with the token (a plain link would need it in its
    // address): the blob it saves is the file.
    b.eval(
        "window.savedBytes = 0; const make = URL.createObjectURL; URL.createObjectURL = blob => { window.savedBytes = blob.size; return make(blob); };",
    );
    b.click_css("#csv");
    b.wait_until("the CSV saved", "return window.savedBytes > 100", 30);
    assert_eq!(b.text("#error"), "");
    // Read in parts across the checkpoints, the curve is the store's whole curve.
    let (s, web_csv) = server.raw("GET", &format!("/api/sessions/{id}/curve.csv"), None, &[]);
    assert_eq!(s, 200);
    let cli_csv = data.tmp.path().join("curve.csv");
    let o = data.cmd(&[
        "session",
        "curve",
        &id.to_string(),
        "--csv",
        cli_csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let web_csv = String::from_utf8(web_csv).unwrap();
    let cli_csv = std::fs::read_to_string(&cli_csv).unwrap();
    assert!(cli_csv.lines().count() > 10, "{cli_csv}");
    assert_eq!(web_csv, cli_csv);
    walk_the_paused_tree(&b, &data, &server, id);
}

/// Down session `id`'s paused tree on the page: the root's moves, then the heaviest one's, at
/// the position and with the numbers `session moves --line` gives; the address names the
/// node.
fn walk_the_paused_tree(b: &Browser, data: &Data, server: &Server, id: u64) {
    b.click_css("#tree-load");
    b.wait("#tree-questions table.tree-moves tr[data-move]", 30);
    let root = data.json(&["session", "moves", &id.to_string(), "--json"]);
    let white = &root["questions"][0];
    let heaviest = white["moves"]
        .as_array()
        .unwrap()
        .iter()
        .max_by_key(|m| m["nodes"].as_u64().unwrap())
        .unwrap()["move"]
        .as_str()
        .unwrap()
        .to_string();
    let rows = b.all(".tree-question[data-attacker=white] table.tree-moves tr[data-move]");
    assert_eq!(rows.len(), white["moves"].as_array().unwrap().len());
    // Each move's value is what its numbers prove, for the side that plays it.
    let white_moves = root["position"].as_str().unwrap().ends_with(" w");
    for m in white["moves"].as_array().unwrap() {
        let want = match (m["pn"].as_u64(), m["dn"].as_u64(), white_moves) {
            (Some(0), _, true) => "win",
            (Some(0), _, false) => "loss",
            (_, Some(0), true) => "at most a draw",
            (_, Some(0), false) => "at least a draw",
            _ => "open",
        };
        let cell = format!(
            ".tree-question[data-attacker=white] table.tree-moves tr[data-move='{}'] td.value",
            m["move"].as_str().unwrap()
        );
        assert_eq!(b.text(&cell), want, "{m}");
    }
    b.click_css(&format!(
        ".tree-question[data-attacker=white] table.tree-moves tr[data-move='{heaviest}']"
    ));
    b.wait("#tree-line a[data-depth='1']", 30);
    let below = data.json(&[
        "session",
        "moves",
        &id.to_string(),
        "--line",
        &heaviest,
        "--json",
    ]);
    assert!(
        b.text("#tree-position")
            .contains(below["position"].as_str().unwrap()),
        "{below}"
    );
    let replies = b.all(".tree-question[data-attacker=white] table.tree-moves tr[data-move]");
    assert_eq!(
        replies.len(),
        below["questions"][0]["moves"].as_array().unwrap().len()
    );
    assert!(!b.all("#tree-board svg.board").is_empty());
    // The address names the node: opened again, the page comes back to it.
    let link = b.eval("return location.hash").as_str().unwrap().to_string();
    assert!(link.contains(&format!("/tree?line={heaviest}")), "{link}");
    // The heaviest line from there, then back to the root by the line's first link.
    b.click_css("#tree-heaviest");
    b.wait("table.tree-heaviest tr[data-move]", 30);
    b.click_css("#tree-line a[data-depth='0']");
    b.wait_until(
        "the root again",
        "return document.querySelectorAll('#tree-line a').length === 1",
        30,
    );
    b.open(&server.url(&link));
    b.wait("#tree-line a[data-depth='1']", 30);
    assert!(
        b.text("#tree-position")
            .contains(below["position"].as_str().unwrap())
    );
    b.screenshot(&screenshot_path(data.tmp.path(), "web-session-tree.png"));
}

#[test]
fn the_analysis_reads_checked_certificates_and_refuses_forged_ones() {
    // A solved session writes its certificates into the data directory; the analysis of its
    // root takes the proof's move from there, checked first.
    let data = data();
    let o = data.cmd(&["solve", "3x7"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let certs = data.dir.join("certificates");
    let proof = certs.join("session-1.white-wins.cert.gz");
    assert!(proof.exists());
    // A forged one beside it: the same tree, claiming Black wins. It must not be believed.
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&proof).unwrap()),
        &mut text,
    )
    .unwrap();
    let forged = text.replacen("\"white wins\"", "\"black wins\"", 1);
    assert_ne!(forged, text);
    std::fs::write(certs.join("forged.cert"), forged).unwrap();
    std::fs::write(certs.join("garbled.cert"), "not a certificate\n").unwrap();
    let server = serve(&data, None);
    let (s, v) = post(&server, "/api/analyse", json!({"start": "3x7"}));
    assert_eq!(s, 200, "{v}");
    let a = &v["analysis"];
    assert_eq!(
        a["certificates"], 2,
        "the session's two, not the forged or garbled: {a}"
    );
    assert_eq!(a["certificates_refused"], 2, "{a}");
    let moves = a["moves"].as_array().unwrap();
    let best = &moves[0];
    assert_eq!(best["value"], "win", "{a}");
    assert_eq!(best["source"], "certificate", "{a}");
    assert_eq!(a["value"], "win");
    // No move is a win for Black's forged claim's sake: White's other moves are valued by
    // search (or unknown), never as losses from a certificate.
    for m in moves {
        assert!(
            m["source"] != "certificate" || m["value"] == "win" || m["value"] == "at least a draw",
            "{m}"
        );
    }
}

#[test]
fn tables_that_are_not_whole_are_not_offered() {
    let data = data();
    let db = data.tmp.path().join("egdb3");
    let o = Command::new(BIN)
        .args(["db", "build", "--board", "3x3", "--pieces", "4", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_file(db.join("3x3/2-2.wdl")).unwrap();
    let server = serve(&data, Some(&db));
    let tables = |v: &Value| {
        v["boards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == "3x3")
            .unwrap()["tables"]
            .clone()
    };
    // Before they are opened, the directory is all a listing knows.
    let (_, info) = server.http("GET", "/api/info", None);
    assert_eq!(tables(&info), true, "{info}");
    // An analysis opens them and finds a slice missing: searched instead, and said so.
    let (s, v) = post(&server, "/api/analyse", json!({"start": "B.B/.W./... w"}));
    assert_eq!(s, 200, "{v}");
    assert!(v["analysis"]["tables"].is_null(), "{v}");
    let (_, info) = server.http("GET", "/api/info", None);
    assert_eq!(tables(&info), false, "{info}");
}

/// A session solved through the app reaches the analysis at once: its rote entries and its
/// certificates are read again as soon as a session was solved (they were taken as they
/// were for two and five minutes).
#[test]
fn a_solved_sessions_result_reaches_the_analysis_within_seconds() {
    let data = data();
    let _daemon = data.daemon();
    let server = serve(&data, None);
    let sources = |v: &Value| -> Vec<String> {
        v["analysis"]["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["source"].as_str().unwrap_or("none").to_string())
            .collect()
    };
    let (s, before) = post(&server, "/api/analyse", json!({"start": "3x5"}));
    assert_eq!(s, 200, "{before}");
    let learned = |v: &Value| {
        sources(v)
            .iter()
            .any(|s| s == "rote store" || s == "certificate")
    };
    assert!(!learned(&before), "{before}");
    // The page is open on it meanwhile.
    let b = Browser::start();
    b.open(&server.url("#/analyse?position=3x5"));
    b.wait_until(
        "the analysis",
        "return !!analysis.state && !!analysis.state.analysis",
        30,
    );
    let (s, started) = post(&server, "/api/sessions", json!({"target": "3x5"}));
    assert_eq!(s, 200, "{started}");
    let id = started["id"].as_u64().unwrap();
    let since = std::time::Instant::now();
    loop {
        let (_, st) = server.http("GET", &format!("/api/sessions/{id}"), None);
        if st["state"] == "solved" {
            break;
        }
        assert!(since.elapsed().as_secs() < 60, "not solved: {st}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let solved_at = std::time::Instant::now();
    loop {
        let (_, after) = post(&server, "/api/analyse", json!({"start": "3x5"}));
        if learned(&after) {
            break;
        }
        assert!(
            solved_at.elapsed() < Duration::from_secs(2),
            "the analysis still knows nothing of the session 2 s after it was solved: {:?}",
            sources(&after)
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    // The open page asks again by itself (it looks at the sessions every 5 s).
    b.wait_until(
        "the open analysis updated",
        "return analysis.state.analysis.moves.some(m => m.source === 'rote store' || m.source === 'certificate')",
        15,
    );
}

#[test]
fn the_proof_explorer_walks_a_proof_and_each_value_agrees_with_a_search() {
    // A solved session's two certificates (3x7: White wins), and a garbled file beside them.
    let data = data();
    let o = data.cmd(&["solve", "3x7"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let certs = data.dir.join("certificates");
    std::fs::write(certs.join("garbled.cert"), "not a certificate\n").unwrap();
    let server = serve(&data, None);
    let b = Browser::start();
    b.open(&server.url("#/proofs"));
    let root = b.wait("#proof-roots a[data-root]", 30);
    let refused = b.text("#proof-refused");
    assert!(refused.contains("garbled.cert"), "{refused}");
    assert!(refused.contains("to mend"), "{refused}");
    b.click(&root);
    // Three plies down the best move; every move the certificates value is solved again by
    // a search of the position after it, and must agree.
    let mut checked = 0;
    for ply in 0..=3 {
        b.wait_until(
            "the walk at this depth",
            &format!(
                "return !!proofs.last && proofs.last.line.length === {ply} && \
                 document.querySelectorAll('#proof-line a').length === {}",
                ply + 1
            ),
            30,
        );
        let w = b.eval("return proofs.last");
        if ply == 0 {
            assert_eq!(w["value"], "win", "3x7 is White's: {w}");
        }
        let mover = w["side"].as_str().unwrap().to_string();
        let mut valued = 0;
        for m in w["moves"].as_array().unwrap() {
            let Some(word) = m["value"].as_str() else {
                continue;
            };
            let after = m["after"].as_str().unwrap();
            let o = data.cmd(&["solve", after, "--no-store", "--json"]);
            assert!(o.status.success(), "{}", common::stderr(&o));
            let solved: Value = serde_json::from_slice(&o.stdout).unwrap();
            let winner = solved["value"].as_str().unwrap();
            assert!(
                agrees(word, &mover, winner),
                "{} at ply {ply}: the certificates say {word} for {mover}, a search {winner}",
                m["move"]
            );
            valued += 1;
        }
        assert!(valued > 0, "no move valued at ply {ply}: {w}");
        checked += valued;
        if ply < 3 {
            let best = w["moves"][0]["move"].as_str().unwrap().to_string();
            b.click_css(&format!("#proof-moves tr[data-move='{best}']"));
        }
    }
    assert!(checked >= 4, "{checked}");
    // The line is in the history: Back twice, Forward once, and ← as Back.
    let depth = |d: usize| {
        format!(
            "return !!proofs.last && proofs.last.line.length === {d} && \
             location.hash.includes('line=')"
        )
    };
    b.eval("history.back(); return true");
    b.wait_until("one ply back", &depth(2), 10);
    b.eval("history.back(); return true");
    b.wait_until("two plies back", &depth(1), 10);
    b.eval("history.forward(); return true");
    b.wait_until("one ply forward", &depth(2), 10);
    b.eval(
        "document.body.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowLeft', bubbles: true})); return true",
    );
    b.wait_until("← one ply back", &depth(1), 10);
    // A line with a move that is not legal: the page says which, and shows the line before.
    let root_text = b.eval("return proofs.last.root");
    let bad = format!(
        "#/proofs/walk?root={}&line={}",
        urlencode(root_text.as_str().unwrap()),
        urlencode("e1-d2A x9-z9")
    );
    b.open(&server.url(&bad));
    b.wait_until(
        "the bad move named",
        "return document.getElementById('error') && document.getElementById('error').textContent.includes(\"move 2 'x9-z9'\")",
        10,
    );
    assert_eq!(b.eval("return proofs.last.line.length"), json!(1));
    // A certificate downloads as it is on disk.
    let name = "session-1.white-wins.cert.gz";
    let (status, bytes) = server.raw("GET", &format!("/api/proofs/file?name={name}"), None, &[]);
    assert_eq!(status, 200);
    assert_eq!(bytes, std::fs::read(certs.join(name)).unwrap());
    let (status, _) = server.raw("GET", "/api/proofs/file?name=..%2Fweb.token", None, &[]);
    assert_eq!(status, 404);
    b.screenshot(&screenshot_path(data.tmp.path(), "web-proof-explorer.png"));
}

#[test]
fn moves_on_the_analysis_board_are_history_entries_and_the_address_holds_the_line() {
    use common::browser::keys;
    let data = data();
    let server = serve(&data, None);
    let b = Browser::start();
    let root = "BBB/B.W/WWW w";
    b.open(&server.url("#/play"));
    b.wait("#board", 10);
    b.open(&server.url("#/analyse?position=BBB%2FB.W%2FWWW%20w"));
    wait_analysed(&b, root);
    // Two moves played by clicks on the table: each is in the address.
    b.click_css("#analysis-moves tr[data-move='a1-b2A']");
    let one = after(root, &["a1-b2A"]);
    wait_analysed(&b, &one);
    let second = b
        .eval("return analysis.state.analysis.moves[0].notation")
        .as_str()
        .unwrap()
        .to_string();
    b.click_css(&format!("#analysis-moves tr[data-move='{second}']"));
    let two = after(root, &["a1-b2A", &second]);
    wait_analysed(&b, &two);
    assert_eq!(
        hash(&b),
        format!("#/analyse?position={root}&line=a1-b2A,{second}").replace(' ', "+")
    );
    assert_eq!(b.text("#analysis-line"), format!("line: a1-b2A {second}"));
    // Back walks the line back to its root, then Forward again; none leaves the page.
    b.back();
    wait_analysed(&b, &one);
    b.back();
    wait_analysed(&b, root);
    assert!(hash(&b).starts_with("#/analyse?"), "{}", hash(&b));
    b.forward();
    wait_analysed(&b, &one);
    // → replays the line's next move, ← steps back, the address following.
    b.press(&keys::RIGHT.to_string());
    wait_analysed(&b, &two);
    b.press(&keys::LEFT.to_string());
    wait_analysed(&b, &one);
    assert!(hash(&b).ends_with("&line=a1-b2A"), "{}", hash(&b));
    b.press(&format!("{}{}", keys::LEFT, keys::LEFT));
    wait_analysed(&b, root);
    // A link with the line (a reload) shows the same position and line.
    let link = format!(
        "#/analyse?position=BBB%2FB.W%2FWWW%20w&line=a1-b2A%2C{}",
        second
    );
    b.open(&server.url(&link));
    wait_analysed(&b, &two);
    assert_eq!(
        b.eval("return document.getElementById('analyse-position').value"),
        json!(two)
    );
    // A line with a move that is not legal: said which, the good part shown, the address
    // left as it was given.
    b.open(&server.url("#/analyse?position=BBB%2FB.W%2FWWW%20w&line=a1-b2A%2Cx9-z9%2Cc1-b1"));
    wait_analysed(&b, &one);
    let e = b.text("#error");
    assert!(
        e.contains("move 2 'x9-z9'") && e.contains("not legal here"),
        "{e}"
    );
    assert!(hash(&b).contains("x9-z9"), "{}", hash(&b));
    assert_eq!(b.text("#analysis-line"), "line: a1-b2A");
}

#[test]
fn setting_up_pieces_hides_the_old_position_clears_and_analyses_the_board_set_up() {
    let data = data();
    let server = serve(&data, None);
    let b = Browser::start();
    let shown = |b: &Browser, css: &str| {
        b.eval(&format!(
            "const e = document.querySelector({}); return !!e && e.getClientRects().length > 0",
            serde_json::to_string(css).unwrap()
        ))
    };
    b.open(&server.url("#/analyse?position=BBB%2FB.W%2FWWW%20w"));
    wait_analysed(&b, "BBB/B.W/WWW w");
    b.click_css("#edit");
    b.wait("#clear-board", 10);
    // The old position's text, moves and values are not shown beside the board set up.
    assert_eq!(shown(&b, "#analyse-position"), json!(false));
    assert_eq!(shown(&b, "#analysis-moves"), json!(false));
    assert_eq!(b.text("#setup-position"), "BBB/B.W/WWW w");
    b.click_css("#clear-board");
    assert_eq!(b.text("#setup-position"), ".../.../... w");
    // An empty board is refused, and stays to be set up.
    b.click_css("#analyse");
    b.wait_until(
        "the refusal",
        "return document.getElementById('error').textContent !== ''",
        10,
    );
    let e = b.text("#error");
    assert!(e.contains("the board is empty"), "{e}");
    assert_eq!(b.eval("return analysis.editing"), json!(true));
    // Pieces put on it; "Analyse" takes the board set up.
    b.click_css("g.pt[data-point='a1']");
    b.click_css("g.pt[data-point='c3']");
    b.click_css("g.pt[data-point='c3']");
    assert_eq!(b.text("#setup-position"), "..B/.../W.. w");
    b.click_css("#analyse");
    wait_analysed(&b, "..B/.../W.. w");
    assert_eq!(b.eval("return analysis.editing"), json!(false));
    assert_eq!(shown(&b, "#analysis-moves"), json!(true));
    assert!(hash(&b).contains("..B/.../W..+w"), "{}", hash(&b));
    // After a malformed position was typed, "Set up pieces" still sets up the last board.
    b.type_into("#analyse-position", "BBB/BXB/WWW w");
    b.click_css("#analyse");
    b.wait_until(
        "the refusal",
        "return document.getElementById('error').textContent !== '' && !analysis.state",
        10,
    );
    b.click_css("#edit");
    b.wait("#clear-board", 10);
    assert_eq!(b.text("#setup-position"), "..B/.../W.. w");
    assert!(!b.all("#board-holder g.pt[data-point='c3']").is_empty());
    // A page opened on a malformed position sets up the standard board's start.
    b.open(&server.url("#/analyse?position=BBB%2FBXB%2FWWW%20w"));
    b.wait_until(
        "the refusal",
        "return document.getElementById('error').textContent !== ''",
        10,
    );
    b.click_css("#edit");
    b.wait("#clear-board", 10);
    assert_eq!(
        b.text("#setup-position"),
        "BBBBBBBBB/BBBBBBBBB/BWBW.BWBW/WWWWWWWWW/WWWWWWWWW w"
    );
}

#[test]
fn distances_are_called_plies_to_capture_and_a_hint_is_only_the_persons() {
    let data = data();
    let db = tables_3x3(&data);
    let server = serve(&data, Some(&db));
    let b = Browser::start();
    b.open(&server.url("#/analyse?position=BBB%2FB.W%2FWWW%20w"));
    wait_analysed(&b, "BBB/B.W/WWW w");
    assert_eq!(b.text("#plies-head"), "plies to capture");
    let title = b.eval("return document.getElementById('plies-head').title");
    let title = title.as_str().unwrap();
    assert!(
        title.contains("until the next capture")
            && title.contains("not the length of the whole game"),
        "{title}"
    );
    let title = b.eval("return document.getElementById('score-head').title");
    assert!(title.as_str().unwrap().contains("from -1"), "{title}");
    // The tables know the distances here.
    let distances = b.eval(
        "return [...document.querySelectorAll('#analysis-moves tbody tr')].map(r => r.querySelectorAll('td')[3].textContent).filter(t => t !== '').length",
    );
    assert!(distances.as_u64().unwrap() > 0, "{distances}");

    // White a person, Black the perfect player, its answers held back until let go.
    new_game(&b, &server, "3x3", "human", "perfect");
    b.wait_until(
        "White's turn",
        "return !!play.state && !play.pending && document.getElementById('status').textContent === 'white to move (you)'",
        10,
    );
    assert_eq!(
        b.eval("return [document.getElementById('undo').disabled, document.getElementById('resign-hint').disabled]"),
        json!([true, false])
    );
    b.eval(
        "window.held = []; const real = window.fetch;
         window.fetch = (url, opts) => url === '/api/agent' ? new Promise(r => window.held.push(() => r(real(url, opts)))) : real(url, opts);
         return true",
    );
    b.click_css("#resign-hint");
    b.wait_until(
        "the hint",
        "return document.getElementById('note').textContent.startsWith('best: ')",
        20,
    );
    let note = b.text("#note");
    // White's own moves, with their distances.
    let legal = b.eval("return play.state.moves.map(m => m.notation)");
    for suggested in note
        .trim_start_matches("best: ")
        .split("), ")
        .map(|s| s.split(' ').next().unwrap())
    {
        assert!(
            legal.as_array().unwrap().contains(&json!(suggested)),
            "{suggested} of {note} is not among {legal}"
        );
    }
    assert!(
        note.contains("plies to capture") || note.contains("ply to capture"),
        "{note}"
    );
    let first = legal[0].as_str().unwrap().to_string();
    b.type_into("#play-move", &format!("{first}\u{E007}"));
    b.wait_until(
        "Black thinking",
        "return play.thinking && window.held.length === 1",
        10,
    );
    // Black's turn: no hint, not even asked for directly.
    assert_eq!(
        b.eval("return document.getElementById('resign-hint').disabled"),
        json!(true)
    );
    b.eval("document.getElementById('note').textContent = ''; hint(); return true");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(b.text("#note"), "");
    b.eval("window.held.forEach(f => f()); return true");
    b.wait_until(
        "White's turn again",
        "return !play.pending && !play.thinking && play.state.history.length === 2",
        20,
    );
    assert_eq!(
        b.eval("return [document.getElementById('undo').disabled, document.getElementById('resign-hint').disabled]"),
        json!([false, !b.eval("return play.state.end === null").as_bool().unwrap()])
    );
}

#[test]
fn variations_are_a_move_tree_in_the_address_and_a_bad_one_is_named() {
    let data = data();
    let server = serve(&data, None);
    let (_, g) = post(&server, "/api/game", json!({"start": "BBB/B.W/WWW w"}));
    let firsts: Vec<String> = g["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["notation"].as_str().unwrap().to_string())
        .collect();
    assert!(firsts.len() >= 2, "{g}");
    let (one, two) = (&firsts[0], &firsts[1]);
    let root = "BBB/B.W/WWW w";
    let b = Browser::start();
    b.open(&server.url("#/analyse?position=BBB%2FB.W%2FWWW%20w"));
    wait_analysed(&b, root);
    // One move, back, another: two variations, both in the address and on the page.
    b.click_css(&format!("#analysis-moves tr[data-move='{one}']"));
    wait_analysed(&b, &after(root, &[one]));
    b.click_css("#line-back");
    wait_analysed(&b, root);
    b.click_css(&format!("#analysis-moves tr[data-move='{two}']"));
    wait_analysed(&b, &after(root, &[two]));
    assert!(
        hash(&b).contains(&format!("vars={one};{two}")),
        "{}",
        hash(&b)
    );
    assert_eq!(b.all("#analysis-variations .variation").len(), 2);
    // A move of the other variation, clicked: its position, the address following.
    b.click_css(&format!(
        "#analysis-variations a.var-move[data-move='{one}']"
    ));
    wait_analysed(&b, &after(root, &[one]));
    assert!(hash(&b).contains(&format!("line={one}&")), "{}", hash(&b));
    // A tree with a move that is not legal: named, the legal part kept.
    let link = format!(
        "#/analyse?position={}&vars={}",
        urlencode(root),
        urlencode(&format!("{one};{two},x9-z9"))
    );
    b.open(&server.url(&link));
    wait_analysed(&b, root);
    b.wait_until(
        "the bad variation named",
        "return document.getElementById('error').textContent.includes(\"variation 2: move 2 'x9-z9'\")",
        10,
    );
    assert_eq!(b.all("#analysis-variations .variation").len(), 2);
}
