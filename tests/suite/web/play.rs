//! Games in the browser: by clicks and by keyboard, capture chains with a choice and an
//! early stop, resigning, taking back, records, many tabs, set-ups refused.

use super::*;

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
