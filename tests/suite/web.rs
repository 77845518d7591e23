//! `fanorona serve` in a real browser (headless chromium through chromedriver) and through
//! its API: a game by clicks, a capture chain with a choice and an early stop, the analysis
//! of a table position against `db probe`, a session's curve growing on the page; and the
//! refusals of bad requests.

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::browser::{Browser, Server, http, http_raw, response_head, screenshot_path};
use common::{BIN, Data};
use serde_json::{Value, json};

fn data() -> Data {
    Data::new("log_level = \"warn\"\n")
}

/// 5x9 tables up to 4 pieces with distances, built under the data's temporary directory.
fn tables_5x9(data: &Data) -> std::path::PathBuf {
    let db = data.tmp.path().join("egdb");
    let o = Command::new(BIN)
        .args([
            "db",
            "build",
            "--board",
            "5x9",
            "--pieces",
            "4",
            "--distances",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    db
}

fn serve(data: &Data, db: Option<&std::path::Path>) -> Server {
    let db_arg = db.map(|d| d.display().to_string());
    let mut args = Vec::new();
    if let Some(d) = &db_arg {
        args.extend(["--db", d.as_str()]);
    }
    Server::start(&data.config, &data.dir, &args)
}

#[test]
fn a_3x3_game_by_clicks_as_black_is_lost_to_perfect_play() {
    let data = data();
    let server = serve(&data, None);
    let b = Browser::start();
    new_game(&b, &server, "3x3", "perfect", "human");
    // Black's moves by clicks: a ringed piece, then a dot, taking approach where asked,
    // until the game is over (White replies through the server).
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut clicks = 0;
    loop {
        assert!(Instant::now() < deadline, "the game did not end");
        if b.eval("return document.getElementById('status').dataset.over === 'yes'") == json!(true)
        {
            break;
        }
        // The page redraws when White's reply arrives: a point found before that is gone,
        // and is looked for again.
        let clicked = if let Some(c) = b.all("#choose-approach").into_iter().next() {
            b.try_click(&c)
        } else if let Some(t) = b.all("g.pt.target").into_iter().next() {
            b.try_click(&t)
        } else if let Some(m) = b.all("g.pt.movable").into_iter().next() {
            b.try_click(&m)
        } else {
            std::thread::sleep(Duration::from_millis(50));
            false
        };
        clicks += usize::from(clicked);
    }
    assert!(clicks >= 2, "Black made no move");
    let status = b.text("#status");
    assert!(status.contains("white wins"), "{status}");
    assert!(status.contains("1-0"), "{status}");
    // The record the page offers ends the same way, every move Black's or perfect play's.
    let record = b.eval("return play.state.record");
    let record = record.as_str().unwrap();
    assert!(record.contains("[White \"perfect\"]"), "{record}");
    assert!(record.contains("[Result \"1-0\"]"), "{record}");
    b.screenshot(&screenshot_path(data.tmp.path(), "web-play-3x3.png"));
}

#[test]
fn a_5x9_capture_chain_with_approach_or_withdrawal_and_an_early_stop() {
    let data = data();
    let server = serve(&data, None);
    let b = Browser::start();
    chain_game(&b, &server);
    b.click_css("g.pt[data-point='e3']");
    b.click_css("g.pt.target[data-point='d3']");
    // Both captures are offered, each naming what it takes.
    let choice = b.text("#capture-choice");
    assert!(choice.contains("approach (takes c3)"), "{choice}");
    assert!(choice.contains("withdrawal (takes f3"), "{choice}");
    b.click_css("#choose-approach");
    // The chain goes on: d4 is the next step, and the move may stop here.
    b.wait("g.pt.target[data-point='d4']", 10);
    assert_eq!(
        b.eval("return document.getElementById('stop-chain').disabled"),
        json!(false)
    );
    b.click_css("g.pt.target[data-point='d4']");
    // c3 would take more; stop early instead.
    b.wait("g.pt.target[data-point='c3']", 10);
    b.screenshot(&screenshot_path(data.tmp.path(), "web-chain-5x9.png"));
    b.click_css("#stop-chain");
    b.wait_until(
        "the move in the list",
        "return document.getElementById('history').textContent.includes('e3-d3A-d4A')",
        10,
    );
    assert!(!b.text("#history").contains("c3W"));
    // The position shown is the rules' position after that move.
    let o = Command::new(BIN)
        .args(["show", CHAIN_START, "--play", "e3-d3A-d4A", "--json"])
        .output()
        .unwrap();
    let shown: Value = serde_json::from_slice(&o.stdout).unwrap();
    let page = b.eval("return document.getElementById('position').value");
    assert_eq!(page, shown["position"]);
    assert_eq!(b.text("#status"), "black to move (you)");
}

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
    // Down the paused tree on the page: the root's moves, then the heaviest one's, at the
    // position and with the numbers `session moves --line` gives.
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

/// A 5x9 position where White's e3 can take at d3 by approach (then on to d4 and c3) or by
/// withdrawal.
const CHAIN_START: &str = "BBBBBBBBB/BBB.BBBBB/BWB.WBWBW/W.WWWWWWW/.WWWWWWWW w";

/// Two people's game from `CHAIN_START`.
fn chain_game(b: &Browser, server: &Server) {
    b.open(&server.url("#/play"));
    b.wait("#new-game", 10);
    b.select("#play-white", "human");
    b.select("#play-black", "human");
    b.type_into("#play-start", CHAIN_START);
    b.click_css("#new-game");
    b.wait("g.pt.movable[data-point='e3']", 10);
}

/// A new game on the Play page: `board` from its start, with these players.
fn new_game(b: &Browser, server: &Server, board: &str, white: &str, black: &str) {
    b.open(&server.url("#/play"));
    b.wait("#new-game", 10);
    b.select("#play-board", board);
    b.select("#play-white", white);
    b.select("#play-black", black);
    b.click_css("#new-game");
}

/// POST `body` to the API of `server`.
fn post(server: &Server, path: &str, body: Value) -> (u16, Value) {
    server.http("POST", path, Some(&body))
}

#[test]
fn bad_requests_are_refused_with_the_reason() {
    let data = data();
    let server = serve(&data, None);
    let (s, v) = post(&server, "/api/game", json!({"start": "BBB/B.W/WW w"}));
    assert_eq!(s, 400);
    assert!(v["error"].as_str().unwrap().contains("bad position"), "{v}");
    let (s, v) = post(
        &server,
        "/api/game",
        json!({"start": "3x3", "moves": ["c1-b2A", "a1-a2"]}),
    );
    assert_eq!(s, 400);
    assert!(
        v["error"].as_str().unwrap().starts_with("move 2 'a1-a2'"),
        "{v}"
    );
    let (s, v) = post(&server, "/api/game", json!({"start": "4x4"}));
    assert_eq!(s, 400, "{v}");
    let (s, v) = post(&server, "/api/game", json!({"moves": "d3-e3A"}));
    assert_eq!(s, 400);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("the body is not the JSON this address takes"),
        "{v}"
    );
    let (s, v) = post(
        &server,
        "/api/agent",
        json!({"start": "3x3", "player": "chess"}),
    );
    assert_eq!(s, 400);
    assert!(
        v["error"].as_str().unwrap().contains("unknown player"),
        "{v}"
    );
    // A game that is over gets no move.
    let (s, v) = post(
        &server,
        "/api/agent",
        json!({"start": "WW./.../... b", "player": "random"}),
    );
    assert_eq!(s, 400, "{v}");
    // Not JSON: refused before anything runs (a page elsewhere cannot post a form here).
    let (s, _) = server.raw("POST", "/api/game", None, &[("Content-Type", "text/plain")]);
    assert_eq!(s, 415);
    // Another host name: refused (DNS rebinding).
    let (s, _) = server.raw("GET", "/api/info", None, &[("Host", "evil.example")]);
    assert!(s == 403 || s == 400, "{s}");
    // Sessions: an unknown one is 404 only when a daemon answers; without one, 503 says how
    // to start it.
    let (s, v) = server.http("GET", "/api/sessions", None);
    assert_eq!(s, 503);
    assert!(v["error"].as_str().unwrap().contains("fanorona"), "{v}");
    assert!(v["error"].as_str().unwrap().contains("daemon"), "{v}");
    // A bad name is refused as such whether or not a daemon runs.
    let (s, v) = post(
        &server,
        "/api/sessions",
        json!({"target": "3x3", "name": " "}),
    );
    assert_eq!(s, 400, "{v}");
    let _daemon = data.daemon();
    let (s, v) = server.http("GET", "/api/sessions/42", None);
    assert_eq!(s, 404, "{v}");
    let (s, _) = server.http("GET", "/api/sessions/x/curve", None);
    assert_eq!(s, 400);
    let (s, v) = server.http("GET", "/api/no/such", None);
    assert_eq!(s, 404);
    assert!(
        v["error"].as_str().unwrap().contains("no such API address"),
        "{v}"
    );
    // Typed into the address bar: the app under its usual other name, a page elsewhere.
    let (s, page) = server.raw("GET", "/index.html", None, &[]);
    assert_eq!(s, 200);
    assert!(String::from_utf8_lossy(&page).contains("app.js"));
    let (s, page) = server.raw("GET", "/no/such/page", None, &[]);
    assert_eq!(s, 404);
    let page = String::from_utf8_lossy(&page);
    assert!(page.contains("<a href=\"/\">Open the app</a>"), "{page}");
    let (s, v) = post(&server, "/api/sessions", json!({"target": "BBB/B.W/WWW"}));
    assert_eq!(s, 400, "{v}");
    // No request names a file: the tables and the data directory are the server's own.
    let (s, v) = post(
        &server,
        "/api/sessions",
        json!({"target": "3x3", "db": "/etc"}),
    );
    assert_eq!(s, 400, "{v}");
    // A name that does not print is refused: an escape sequence in it would reach every
    // terminal that lists it.
    let (s, v) = post(
        &server,
        "/api/sessions",
        json!({"target": "3x3", "name": "\u{1b}[31mred"}),
    );
    assert_eq!(s, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("U+001B"), "{v}");
    // Names of 1 to 200 characters.
    for name in [String::new(), "x".repeat(201)] {
        let (s, v) = post(
            &server,
            "/api/sessions",
            json!({"target": "3x3", "name": name}),
        );
        assert_eq!(s, 400, "{v}");
        assert!(v["error"].as_str().unwrap().contains("1 to 200"), "{v}");
    }
    // What the framework answers itself is JSON too: a method the route does not take, a
    // query that does not parse.
    let (s, v) = server.http("GET", "/api/game", None);
    assert_eq!(s, 405, "{v}");
    assert!(v["error"].as_str().unwrap().contains("method"), "{v}");
    let (s, v) = server.http("GET", "/api/sessions/1/log?from=-1", None);
    assert_eq!(s, 400, "{v}");
    assert!(
        v["error"].as_str().unwrap().starts_with("bad query: "),
        "{v}"
    );
    // A huge input is not echoed back whole.
    let (s, v) = post(&server, "/api/game", json!({"start": "B".repeat(100_000)}));
    assert_eq!(s, 400, "{v}");
    assert!(v["error"].as_str().unwrap().chars().count() <= 1001, "{v}");
}

/// The mode bits of `path`.
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().mode() & 0o777
}

#[test]
fn the_api_needs_the_token_on_localhost_too() {
    let data = data();
    let _daemon = data.daemon();
    let server = serve(&data, None);
    // Made at the first start, owner-only, in the owner-only data directory; the printed
    // link carries it.
    let file = data.dir.join("web.token");
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&data.dir), 0o700);
    let token = std::fs::read_to_string(&file).unwrap().trim().to_string();
    assert_eq!(token, server.token);
    assert!(token.len() >= 32, "{token}");
    // Without it, from 127.0.0.1: nothing read, nothing started.
    for (method, path, body) in [
        ("GET", "/api/info", None),
        ("GET", "/api/sessions", None),
        ("POST", "/api/sessions", Some(json!({"target": "3x3"}))),
        ("POST", "/api/sessions/1/stop", Some(json!({}))),
        ("POST", "/api/game", Some(json!({"start": "3x3"}))),
    ] {
        let (s, v) = http(server.port, method, path, body.as_ref());
        assert_eq!(s, 401, "{method} {path}: {v}");
        assert!(v["error"].as_str().unwrap().contains("token"), "{v}");
    }
    let wrong = "0".repeat(token.len());
    let (s, _) = http_raw(
        server.port,
        "GET",
        "/api/sessions",
        None,
        &[("x-token", &wrong)],
    );
    assert_eq!(s, 401);
    assert_eq!(data.json(&["session", "list", "--json"]), json!([]));
    // With it: in the header (as the page sends it) or the query.
    let (s, v) = server.http("POST", "/api/sessions", Some(&json!({"target": "3x3"})));
    assert_eq!(s, 200, "{v}");
    let (s, _) = http(
        server.port,
        "GET",
        &format!("/api/sessions?token={token}"),
        None,
    );
    assert_eq!(s, 200);
    // The page itself loads without it (it holds no secret), and takes it from its address.
    let (s, page) = http_raw(server.port, "GET", "/", None, &[]);
    assert_eq!(s, 200);
    assert!(String::from_utf8_lossy(&page).contains("app.js"));
    // Started again: the same token, read back.
    drop(server);
    let again = serve(&data, None);
    assert_eq!(again.token, token);
}

#[test]
fn the_page_keeps_the_token_and_takes_it_out_of_the_address_bar() {
    let data = data();
    let server = serve(&data, None);
    let b = Browser::start();
    b.open(&server.url("#/play"));
    b.wait("#new-game", 10);
    assert_eq!(b.eval("return location.search"), json!(""));
    assert_eq!(b.eval("return location.hash"), json!("#/play"));
    assert_eq!(
        b.eval("return localStorage.getItem('fanorona-token')"),
        json!(server.token)
    );
    // Opened again without it (a bookmark, a tab of its own), the app still answers.
    b.open(&format!("http://127.0.0.1:{}/#/play", server.port));
    b.wait("#new-game", 10);
    // A browser that never had it is told where it is.
    let other = Browser::start();
    other.open(&format!("http://127.0.0.1:{}/#/play", server.port));
    assert!(other.text("#error").contains("token"));
    assert!(other.all("#new-game").is_empty());
}

#[test]
fn the_token_is_never_on_the_command_line() {
    let data = data();
    let serve_with = |args: &[&str]| {
        Command::new(BIN)
            .arg("--config")
            .arg(&data.config)
            .arg("--data-dir")
            .arg(&data.dir)
            .arg("serve")
            .args(args)
            .output()
            .unwrap()
    };
    let o = serve_with(&["--bind", "127.0.0.1:0", "--token", "a-secret-of-16-chars"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--token"));
    // Another place for the file: made there, owner-only.
    let elsewhere = data.tmp.path().join("elsewhere.token");
    let path = elsewhere.to_str().unwrap();
    let server = Server::start(&data.config, &data.dir, &["--token-file", path]);
    assert_eq!(mode(&elsewhere), 0o600);
    assert_eq!(
        std::fs::read_to_string(&elsewhere).unwrap().trim(),
        server.token
    );
    drop(server);
    // A file others may read is refused: its token may be known.
    std::fs::write(&elsewhere, "a-secret-of-16-chars\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = serve_with(&["--bind", "127.0.0.1:0", "--token-file", path]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("elsewhere.token") && e.contains("other users"),
        "{e}"
    );
    // Beyond localhost: the token as on localhost, whatever host name is asked for.
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(BIN)
        .arg("--config")
        .arg(&data.config)
        .arg("--data-dir")
        .arg(&data.dir)
        .args([
            "serve",
            "--bind",
            &format!("0.0.0.0:{port}"),
            "--token-file",
            path,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    assert!(
        first.trim().ends_with("/?token=a-secret-of-16-chars"),
        "{first}"
    );
    let host = [("Host", "fanorona.example")];
    let (s, _) = http_raw(port, "GET", "/api/info", None, &host);
    assert_eq!(s, 401);
    let (s, _) = http_raw(
        port,
        "GET",
        "/api/info",
        None,
        &[host[0], ("x-token", "a-secret-of-16-chars")],
    );
    assert_eq!(s, 200);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn no_answer_may_be_framed_by_another_site() {
    let data = data();
    let server = serve(&data, None);
    let local = format!("127.0.0.1:{}", server.port);
    let info = format!("/api/info?token={}", server.token);
    // The page, the API, a page that is not there and refusals (no token, another host name).
    for (path, host, status) in [
        ("/", local.as_str(), "200"),
        (info.as_str(), local.as_str(), "200"),
        ("/nothing", local.as_str(), "404"),
        ("/api/info", local.as_str(), "401"),
        (info.as_str(), "example.com", "403"),
    ] {
        let head = response_head(server.port, path, host);
        assert!(
            head.starts_with(&format!("http/1.1 {status}")),
            "{path}: {head}"
        );
        assert!(head.contains("x-frame-options: deny"), "{path}: {head}");
        assert!(
            head.contains("content-security-policy: frame-ancestors 'none'"),
            "{path}: {head}"
        );
    }
}

#[test]
fn many_tabs_play_at_once() {
    // Eight games at once, each its own: the API keeps no game, so none sees another's.
    let data = data();
    let server = std::sync::Arc::new(serve(&data, None));
    let games: Vec<_> = (0..8)
        .map(|i| {
            let server = server.clone();
            std::thread::spawn(move || {
                let mut moves: Vec<String> = Vec::new();
                for _ in 0..6 {
                    let body =
                        json!({"start": "5x5", "moves": moves, "player": "random", "seed": i});
                    let (s, v) = server.http("POST", "/api/agent", Some(&body));
                    if s == 400 && v["error"].as_str().unwrap().contains("over") {
                        break;
                    }
                    assert_eq!(s, 200, "{v}");
                    moves.push(v["move"].as_str().unwrap().to_string());
                }
                let (s, v) = server.http(
                    "POST",
                    "/api/game",
                    Some(&json!({"start": "5x5", "moves": moves})),
                );
                assert_eq!(s, 200, "{v}");
                (moves.len(), v["history"].as_array().unwrap().len())
            })
        })
        .collect();
    for g in games {
        let (played, listed) = g.join().unwrap();
        assert_eq!(played, listed);
        assert!(played > 0);
    }
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
fn a_person_resigns_takes_it_back_and_a_record_loads() {
    let data = data();
    let server = serve(&data, None);
    // The API: a resignation ends the game for the side to move; a record reads back.
    let (s, v) = post(
        &server,
        "/api/game",
        json!({"start": "3x3", "moves": ["c1-b2A"], "resigned": true}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["end"]["termination"], "resignation", "{v}");
    assert_eq!(v["end"]["result"], "1-0", "{v}");
    let (s, back) = post(&server, "/api/record", json!({"text": v["record"]}));
    assert_eq!(s, 200, "{back}");
    assert_eq!(back["history"], v["history"]);
    assert_eq!(back["end"], v["end"]);
    let broken = v["record"].as_str().unwrap().replace("c1-b2A", "c1-c3A");
    let (s, e) = post(&server, "/api/record", json!({"text": broken}));
    assert_eq!(s, 400, "{e}");
    assert!(e["error"].as_str().unwrap().contains("c1-c3A"), "{e}");
    // The page: Resign ends it, Undo takes the resignation back.
    let b = Browser::start();
    new_game(&b, &server, "5x5", "human", "human");
    b.wait_until(
        "a 5x5 game",
        "return play.state && play.state.board.name === '5x5'",
        10,
    );
    b.click_css("#resign");
    b.wait_until(
        "the resignation",
        "return document.getElementById('status').dataset.over === 'yes'",
        10,
    );
    assert!(
        b.text("#status").contains("white resigned"),
        "{}",
        b.text("#status")
    );
    b.click_css("#undo");
    b.wait_until(
        "the game again",
        "return document.getElementById('status').dataset.over === 'no'",
        10,
    );
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

#[test]
fn a_refused_new_game_or_set_up_keeps_what_the_page_held() {
    let data = data();
    let server = serve(&data, None);
    let b = Browser::start();
    // A game with a move in it, then a new game from a malformed start.
    new_game(&b, &server, "3x3", "human", "human");
    b.wait_until("the game", "return !!play.state && !play.pending", 10);
    b.eval("play.moves.push('c1-b2A'); refreshGame(1); return true");
    b.wait_until(
        "the move",
        "return !play.pending && play.state.history.length === 1",
        10,
    );
    b.type_into("#play-start", "BBB/BXB/WWW w");
    b.click_css("#new-game");
    b.wait_until(
        "the refusal",
        "return document.getElementById('error').textContent !== ''",
        10,
    );
    // The old game is still the page's, with its move, and goes on.
    assert_eq!(
        b.eval("return [play.start, play.moves, play.state.board.name]"),
        json!(["3x3", ["c1-b2A"], "3x3"])
    );
    b.eval("play.moves.push(play.state.moves[0].notation); refreshGame(1); return true");
    b.wait_until(
        "a second move",
        "return !play.pending && play.state.history.length === 2 && document.getElementById('error').textContent === ''",
        10,
    );

    // A move the server never answered comes back with Retry, sent again as it was.
    b.eval(
        "window.realFetch = window.fetch; window.fetch = () => Promise.reject(new TypeError('Failed to fetch'));
         play.moves.push(play.state.moves[0].notation); refreshGame(1); return true",
    );
    b.wait("#retry", 10);
    assert_eq!(b.eval("return play.moves.length"), json!(2));
    b.eval("window.fetch = window.realFetch; return true");
    b.click_css("#retry");
    b.wait_until(
        "the move sent again",
        "return !play.pending && play.state.history.length === 3 && play.moves.length === 3",
        10,
    );

    // A set-up with no black piece is refused and stays on the board to be mended.
    b.open(&server.url("#/analyse?position=BBB%2FB.W%2FWWW%20w"));
    b.wait_until("the analysis", "return !!analysis.state", 10);
    b.click_css("#edit");
    b.eval("analysis.cells = analysis.cells.map(c => c === 'B' ? 'W' : c); return true");
    b.click_css("#edit");
    b.wait_until(
        "the refusal",
        "return document.getElementById('error').textContent !== ''",
        10,
    );
    assert!(
        b.text("#error").contains("no pieces"),
        "{}",
        b.text("#error")
    );
    assert_eq!(
        b.eval("return [analysis.editing, analysis.cells.join(''), !!document.querySelector('#board-holder svg')]"),
        json!([true, "WWWW.WWWW", true])
    );
    b.eval("analysis.cells[0] = 'B'; return true");
    // "Solve as a session" takes the board being set up, mended, not the refused position
    // the box still holds: it gets as far as wanting a daemon.
    b.eval("document.getElementById('error').textContent = ''; return true");
    b.click_css("#solve-session");
    b.wait_until(
        "the session's answer",
        "return document.getElementById('error').textContent !== ''",
        10,
    );
    let e = b.text("#error");
    assert!(e.contains("daemon") && !e.contains("no pieces"), "{e}");
    b.click_css("#edit");
    b.wait_until(
        "the mended set-up",
        "return !analysis.editing && analysis.state.position.startsWith('WWW/W.W/BWW')",
        10,
    );
    assert_eq!(b.text("#edit"), "Set up pieces");
    // An empty box is said to be one.
    b.type_into("#analyse-position", "");
    b.click_css("#analyse");
    assert!(b.text("#error").contains("type a position"));
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
}

/// Whether a certificate's word for a move (`win`, `at least a draw`, ...) for `mover`
/// agrees with `winner` (`white`, `black` or `draw`) of the position after it, as a search
/// found it.
fn agrees(word: &str, mover: &str, winner: &str) -> bool {
    let value = if winner == mover {
        "win"
    } else if winner == "draw" {
        "draw"
    } else {
        "loss"
    };
    match word {
        "at least a draw" => value != "loss",
        "at most a draw" => value != "win",
        w => w == value,
    }
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

/// `text` as a URL query value.
fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|c| match c {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (c as char).to_string(),
            _ => format!("%{c:02X}"),
        })
        .collect()
}

/// The hash of the page, as a string.
fn hash(b: &Browser) -> String {
    b.eval("return decodeURIComponent(location.hash)")
        .as_str()
        .unwrap()
        .to_string()
}

/// Waits until the analysis shows `position` with nothing pending.
fn wait_analysed(b: &Browser, position: &str) {
    b.wait_until(
        &format!("the analysis of {position}"),
        &format!(
            "return !!analysis.state && analysis.state.position === {} && document.getElementById('note').textContent !== 'valuing every move…'",
            serde_json::to_string(position).unwrap()
        ),
        30,
    );
}

/// The position after `moves` from `start`, as `fanorona show --play` gives it.
fn after(start: &str, moves: &[&str]) -> String {
    let mut cmd = Command::new(BIN);
    cmd.args(["show", start, "--json"]);
    for m in moves {
        cmd.args(["--play", m]);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["position"].as_str().unwrap().to_string()
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

/// Moves the keyboard's focus by Tab (then Shift+Tab) until it is on an element matching
/// `css`, as a person would.
fn tab_to(b: &Browser, css: &str) {
    use common::browser::keys;
    let there = format!(
        "const a = document.activeElement; return !!a && a.matches({})",
        serde_json::to_string(css).unwrap()
    );
    // Forward first (from the page's start: the nav's links, the move field, the points),
    // then back (a point before the focused one).
    for _ in 0..20 {
        if b.eval(&there) == json!(true) {
            return;
        }
        b.press(&keys::TAB.to_string());
    }
    for _ in 0..50 {
        if b.eval(&there) == json!(true) {
            return;
        }
        b.chord(&[keys::SHIFT, keys::TAB]);
    }
    panic!(
        "Tab never reached '{css}': {}",
        b.eval("return document.activeElement.outerHTML.slice(0, 200)")
    );
}

#[test]
fn a_3x3_game_by_keyboard_alone_is_lost_to_perfect_play() {
    use common::browser::keys;
    let data = data();
    let server = serve(&data, None);
    let b = Browser::start();
    new_game(&b, &server, "3x3", "perfect", "human");
    let enter = keys::ENTER.to_string();
    let mut turn = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "the game did not end");
        let state = b.eval(
            "const s = document.getElementById('status'); return !play.state || play.pending ? 'wait' : s.dataset.over === 'yes' ? 'over' : s.textContent.endsWith('(you)') ? 'you' : 'wait'",
        );
        if state == "over" {
            break;
        }
        if state != "you" {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        let plies = b.eval("return play.state.history.length");
        // The board says whose move it is, and each point what is on it.
        let label = b.eval("return document.getElementById('board').getAttribute('aria-label')");
        assert!(
            label
                .as_str()
                .unwrap()
                .starts_with("black to move (you). 3x3 board. White: "),
            "{label}"
        );
        // The longest move: no longer one goes on from it, so its last step ends it.
        let m = b.eval(
            "return play.state.moves.reduce((a, m) => m.path.length > a.path.length ? m : a)",
        );
        let notation = m["notation"].as_str().unwrap().to_string();
        if turn % 2 == 0 {
            // By Tab and Enter on the board's points.
            let from = format!("g.pt[data-index='{}']", m["from"]);
            tab_to(&b, &from);
            let name = b.eval("return document.activeElement.getAttribute('aria-label')");
            assert!(
                name.as_str().unwrap().contains(", black piece, can move"),
                "{name}"
            );
            assert_eq!(
                b.eval("return document.activeElement.getAttribute('role')"),
                json!("button")
            );
            b.press(&enter);
            assert_eq!(b.eval("return !!play.sel"), json!(true));
            if turn == 0 {
                // Esc drops the piece chosen; the focus stays on it, and Space takes it again.
                b.press(&keys::ESCAPE.to_string());
                assert_eq!(b.eval("return play.sel"), Value::Null);
                b.press(&keys::SPACE.to_string());
                assert_eq!(b.eval("return !!play.sel"), json!(true));
            }
            for (k, to) in m["path"].as_array().unwrap().iter().enumerate() {
                tab_to(&b, &format!("g.pt.target[data-index='{to}']"));
                b.press(&enter);
                if !b.all("#capture-choice").is_empty() {
                    let kind = if m["kinds"][k] == "A" {
                        "approach"
                    } else {
                        "withdrawal"
                    };
                    tab_to(&b, &format!("#choose-{kind}"));
                    b.press(&enter);
                }
            }
        } else {
            // Typed in notation, any case; a move that is not legal is refused, named.
            if turn == 1 {
                b.type_into("#play-move", &format!("a1-c3{enter}"));
                assert_eq!(b.text("#error"), "'a1-c3' is not a legal move here");
            }
            b.type_into("#play-move", &format!("{}{enter}", notation.to_uppercase()));
        }
        b.wait_until(
            "the move played",
            &format!(
                "return !!play.state && play.state.history.length > {plies} && play.state.history[{plies}].notation === {}",
                serde_json::to_string(&notation).unwrap()
            ),
            20,
        );
        turn += 1;
    }
    assert!(turn >= 2, "Black made {turn} moves");
    let status = b.text("#status");
    assert!(
        status.contains("white wins") && status.contains("1-0"),
        "{status}"
    );

    // On the analysis page: a move typed, then a row of the table taken by Enter.
    b.open(&server.url("#/analyse?position=BBB%2FB.W%2FWWW%20w"));
    wait_analysed(&b, "BBB/B.W/WWW w");
    b.type_into("#analyse-move", &format!("c1-z9{enter}"));
    assert_eq!(b.text("#error"), "'c1-z9' is not a legal move here");
    b.type_into("#analyse-move", &format!("A1-B2a{enter}"));
    wait_analysed(&b, &after("BBB/B.W/WWW w", &["a1-b2A"]));
    tab_to(&b, "#analysis-moves tr[data-move]");
    let row = b.eval("return document.activeElement.dataset.move");
    b.press(&enter);
    b.wait_until(
        "the row's move played",
        &format!(
            "return analysis.line.length === 2 && analysis.line[1] === {row} && !!analysis.state && analysis.state.position === analysis.position"
        ),
        20,
    );
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

/// What overflows a page laid out `width` pixels wide: the document's width, and the
/// widest elements past it (to say which).
fn overflow(b: &Browser, width: u32) -> (u64, String) {
    let v = b.eval(&format!(
        "const out = [...document.querySelectorAll('#main *')].filter(e => e.getBoundingClientRect().right > {width} + 0.5)
            .map(e => e.tagName + '#' + e.id + '.' + e.getAttribute('class') + ':' + Math.round(e.getBoundingClientRect().right)).slice(0, 8);
         return [document.documentElement.scrollWidth, out.join(' ')]"
    ));
    (v[0].as_u64().unwrap(), v[1].as_str().unwrap().to_string())
}

#[test]
fn on_a_phone_390_pixels_wide_no_page_scrolls_sideways() {
    let data = Data::new("log_level = \"warn\"\ncheckpoint_interval = \"1s\"\n");
    let _daemon = data.daemon();
    let server = serve(&data, None);
    // The standard board's root: the longest position text there is.
    let (s, started) = post(&server, "/api/sessions", json!({"target": "5x9"}));
    assert_eq!(s, 200, "{started}");
    let id = started["id"].as_u64().unwrap();
    let b = Browser::start();
    b.viewport(390, 844);
    let fits = |b: &Browser, page: &str| {
        let (w, wide) = overflow(b, 390);
        assert!(w <= 390, "{page}: {w} px wide: {wide}");
    };
    new_game(&b, &server, "5x9", "human", "human");
    b.wait("g.pt.movable", 10);
    b.click_css("g.pt.movable");
    fits(&b, "play");
    b.open(&server.url("#/analyse"));
    wait_analysed(&b, "BBBBBBBBB/BBBBBBBBB/BWBW.BWBW/WWWWWWWWW/WWWWWWWWW w");
    fits(&b, "analyse");
    b.click_css("#edit");
    b.wait("#clear-board", 10);
    fits(&b, "analyse, setting up");
    b.open(&server.url(&format!("#/session/{id}")));
    b.wait("#chart svg.chart", 30);
    b.wait_until(
        "the log",
        "return document.getElementById('log').textContent !== ''",
        30,
    );
    fits(&b, "session");
    // Its tree, with the position's text.
    b.click_css("#pause");
    b.wait_until(
        "the pause",
        "const s = document.getElementById('session-state'); return !!s && s.textContent === 'paused'",
        60,
    );
    b.click_css("#tree-load");
    b.wait("#tree-position", 30);
    fits(&b, "session tree");
    // The chart's words stay readable: drawn at 10 px or more.
    let smallest = b.eval(
        "return Math.min(...[...document.querySelectorAll('#chart svg.chart text')].map(t => t.getBoundingClientRect().height))",
    );
    assert!(smallest.as_f64().unwrap() >= 10.0, "{smallest}");
    b.screenshot(&screenshot_path(data.tmp.path(), "web-session-phone.png"));
    b.open(&server.url("#/sessions"));
    b.wait("#sessions tr[data-session]", 10);
    fits(&b, "sessions");
}

/// 3x3 tables of every piece count, with distances, under the data's temporary directory.
fn tables_3x3(data: &Data) -> std::path::PathBuf {
    let db = data.tmp.path().join("egdb33");
    let o = Command::new(BIN)
        .args([
            "db",
            "build",
            "--board",
            "3x3",
            "--pieces",
            "8",
            "--distances",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    db
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
fn a_players_capture_chain_is_drawn_with_what_it_took_and_position_errors_name_ranks() {
    let data = data();
    let server = serve(&data, None);
    let b = Browser::start();
    // White's only win is the chain a1-b1A-b2A, taking c1 then b3.
    b.open(&server.url("#/play"));
    b.wait("#new-game", 10);
    b.select("#play-white", "perfect");
    b.select("#play-black", "human");
    b.type_into("#play-start", ".B./.../W.B w");
    b.click_css("#new-game");
    b.wait_until(
        "the game over",
        "return document.getElementById('status').dataset.over === 'yes'",
        20,
    );
    assert_eq!(
        b.eval("return play.state.history.map(h => h.notation)"),
        json!(["a1-b1A-b2A"])
    );
    // Its path through every point, not a ring on its last alone.
    assert_eq!(
        b.eval("return document.querySelector('#board polyline.last-path').dataset.points"),
        json!("a1 b1 b2")
    );
    assert_eq!(b.all("g.pt.last[data-point='b2']").len(), 1);
    // The two black pieces it took, faint where they stood, and said so.
    for p in ["c1", "b3"] {
        assert_eq!(
            b.all(&format!("g.pt.captured[data-point='{p}'] circle.ghost.B"))
                .len(),
            1,
            "{p}"
        );
        let label = b.eval(&format!(
            "return document.querySelector(\"g.pt[data-point='{p}']\").getAttribute('aria-label')"
        ));
        assert_eq!(label, json!(format!("{p}, empty, taken by the last move")));
    }
    assert!(b.all("circle.ghost.W").is_empty());
    // A typed position's error names the rank as the board numbers it (1 at the bottom).
    b.open(&server.url("#/analyse"));
    b.wait("#analyse-position", 10);
    b.type_into("#analyse-position", "BBB/BBx/WWW w");
    b.click_css("#analyse");
    b.wait_until(
        "the refusal",
        "return document.getElementById('error').textContent !== ''",
        10,
    );
    assert_eq!(
        b.text("#error"),
        "bad position: unknown character 'x' at c2 (rank 2): expected 'W', 'B' or '.'"
    );
    b.type_into("#analyse-position", "BBB/BB/WWW w");
    b.click_css("#analyse");
    b.wait_until(
        "the refusal",
        "return document.getElementById('error').textContent.includes('ragged')",
        10,
    );
    assert_eq!(
        b.text("#error"),
        "bad position: ragged rows: rank 2 has 2 points but rank 3 (the top row) has 3"
    );
}

#[test]
fn esc_drops_a_capture_choice_and_a_half_made_chain() {
    use common::browser::keys;
    let data = data();
    let server = serve(&data, None);
    let b = Browser::start();
    chain_game(&b, &server);
    let cells = b.eval("return play.state.cells");
    // The choice between approach and withdrawal has the focus; Esc drops it and the move.
    b.click_css("g.pt[data-point='e3']");
    b.click_css("g.pt.target[data-point='d3']");
    b.wait("#capture-choice", 10);
    assert_eq!(
        b.eval("return document.activeElement.id"),
        json!("choose-approach")
    );
    b.press(&keys::ESCAPE.to_string());
    assert!(b.all("#capture-choice").is_empty());
    assert_eq!(
        b.eval("return [play.sel, play.choice]"),
        json!([null, null])
    );
    // The focus is back on the piece that was chosen.
    assert_eq!(
        b.eval("return document.activeElement.dataset.point"),
        json!("e3")
    );
    // Two steps of a chain made, then Esc: the board as it was, every piece movable again.
    b.click_css("g.pt[data-point='e3']");
    b.click_css("g.pt.target[data-point='d3']");
    b.click_css("#choose-approach");
    b.click_css("g.pt.target[data-point='d4']");
    b.wait("g.pt.target[data-point='c3']", 10);
    b.press(&keys::ESCAPE.to_string());
    assert_eq!(b.eval("return play.sel"), Value::Null);
    assert!(b.all("g.pt.target").is_empty());
    assert!(b.all("g.pt.taken").is_empty());
    assert_eq!(b.eval("return play.state.cells"), cells);
    assert_eq!(b.all("g.pt.movable[data-point='e3']").len(), 1);
    assert_eq!(
        b.eval("return play.state.history.length + play.moves.length"),
        json!(0)
    );
}

#[test]
fn play_from_here_starts_a_game_at_the_analysed_position() {
    let data = data();
    let server = serve(&data, None);
    let b = Browser::start();
    b.open(&server.url("#/analyse?position=3x3"));
    let row = b.wait("#analysis-moves tr[data-move]", 30);
    b.click(&row);
    b.wait_until(
        "one move down the line",
        "return !!analysis.state && location.hash.includes('line=')",
        30,
    );
    let here = b.eval("return analysis.state.position");
    let here = here.as_str().unwrap().to_string();
    b.click_css("#play-from-here");
    b.wait_until(
        "the game from there",
        &format!(
            "return !!play.state && play.state.start === {}",
            serde_json::to_string(&here).unwrap()
        ),
        30,
    );
    assert!(
        b.eval("return location.hash")
            .as_str()
            .unwrap()
            .starts_with("#/play")
    );
}
