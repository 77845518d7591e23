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

mod analysis;
mod api;
mod play;
mod proofs;

pub(super) fn data() -> Data {
    Data::new("log_level = \"warn\"\n")
}

/// 5x9 tables up to 4 pieces with distances, built under the data's temporary directory.
pub(super) fn tables_5x9(data: &Data) -> std::path::PathBuf {
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

/// `fanorona serve` on the data's directory (and tables), once it has checked its
/// certificates (in the background from its start).
pub(super) fn serve(data: &Data, db: Option<&std::path::Path>) -> Server {
    let db_arg = db.map(|d| d.display().to_string());
    let mut args = Vec::new();
    if let Some(d) = &db_arg {
        args.extend(["--db", d.as_str()]);
    }
    let server = Server::start(&data.config, &data.dir, &args);
    wait_checked(&server);
    server
}

/// Waits until the server's check of its certificate directory is over.
pub(super) fn wait_checked(server: &Server) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, list) = server.http("GET", "/api/proofs", None);
        assert_eq!(status, 200, "{list}");
        if list["checking"].is_null() {
            return;
        }
        assert!(Instant::now() < deadline, "still checking: {list}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A 5x9 position where White's e3 can take at d3 by approach (then on to d4 and c3) or by
/// withdrawal.
pub(super) const CHAIN_START: &str = "BBBBBBBBB/BBB.BBBBB/BWB.WBWBW/W.WWWWWWW/.WWWWWWWW w";

/// Two people's game from `CHAIN_START`.
pub(super) fn chain_game(b: &Browser, server: &Server) {
    b.open(&server.url("#/play"));
    b.wait("#new-game", 10);
    b.select("#play-white", "human");
    b.select("#play-black", "human");
    b.type_into("#play-start", CHAIN_START);
    b.click_css("#new-game");
    b.wait("g.pt.movable[data-point='e3']", 10);
}

/// A new game on the Play page: `board` from its start, with these players.
pub(super) fn new_game(b: &Browser, server: &Server, board: &str, white: &str, black: &str) {
    b.open(&server.url("#/play"));
    b.wait("#new-game", 10);
    b.select("#play-board", board);
    b.select("#play-white", white);
    b.select("#play-black", black);
    b.click_css("#new-game");
}

/// POST `body` to the API of `server`.
pub(super) fn post(server: &Server, path: &str, body: Value) -> (u16, Value) {
    server.http("POST", path, Some(&body))
}

/// The mode bits of `path`.
pub(super) fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().mode() & 0o777
}

/// Whether a certificate's word for a move (`win`, `at least a draw`, ...) for `mover`
/// agrees with `winner` (`white`, `black` or `draw`) of the position after it, as a search
/// found it.
pub(super) fn agrees(word: &str, mover: &str, winner: &str) -> bool {
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

/// `text` as a URL query value.
pub(super) fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|c| match c {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (c as char).to_string(),
            _ => format!("%{c:02X}"),
        })
        .collect()
}

/// The hash of the page, as a string.
pub(super) fn hash(b: &Browser) -> String {
    b.eval("return decodeURIComponent(location.hash)")
        .as_str()
        .unwrap()
        .to_string()
}

/// Waits until the analysis shows `position` with nothing pending.
pub(super) fn wait_analysed(b: &Browser, position: &str) {
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
pub(super) fn after(start: &str, moves: &[&str]) -> String {
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

/// Moves the keyboard's focus by Tab (then Shift+Tab) until it is on an element matching
/// `css`, as a person would.
pub(super) fn tab_to(b: &Browser, css: &str) {
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

/// What overflows a page laid out `width` pixels wide: the document's width, and the
/// widest elements past it (to say which).
pub(super) fn overflow(b: &Browser, width: u32) -> (u64, String) {
    let v = b.eval(&format!(
        "const out = [...document.querySelectorAll('#main *')].filter(e => e.getBoundingClientRect().right > {width} + 0.5)
            .map(e => e.tagName + '#' + e.id + '.' + e.getAttribute('class') + ':' + Math.round(e.getBoundingClientRect().right)).slice(0, 8);
         return [document.documentElement.scrollWidth, out.join(' ')]"
    ));
    (v[0].as_u64().unwrap(), v[1].as_str().unwrap().to_string())
}

/// 3x3 tables of every piece count, with distances, under the data's temporary directory.
pub(super) fn tables_3x3(data: &Data) -> std::path::PathBuf {
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
