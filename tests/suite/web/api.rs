//! The API and its guards: bad requests refused with the reason, the token on localhost too
//! and never on the command line or in the address bar, no framing by another site.

use super::*;

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
