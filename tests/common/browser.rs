//! A real browser for the web tests: Debian's chromium, headless, driven through its
//! chromedriver by the W3C WebDriver protocol (JSON over HTTP, spoken here over a plain
//! socket), and `fanorona serve` started on a free port.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::data::BIN;

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The key of an element reference in WebDriver answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP/1.1 exchange: `method path` with an optional JSON body; the status and the
/// body as JSON (Null when it is not JSON).
pub fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let (status, bytes) = http_raw(port, method, path, body, &[]);
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// The status line and headers of a GET of `path`, lowercased.
pub fn response_head(port: u16, path: &str, host: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\nHost: {host}\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut head = String::new();
    let mut r = BufReader::new(s);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap() == 0 || line.trim_end().is_empty() {
            break;
        }
        head.push_str(&line.to_ascii_lowercase());
    }
    head
}

/// One HTTP/1.1 exchange with extra headers; the status and the raw body.
pub fn http_raw(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&Value>,
    headers: &[(&str, &str)],
) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    if !body.is_empty() {
        req.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&body);
    s.write_all(req.as_bytes()).unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status: u16 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut chunked = false;
    let mut length = None;
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let lower = l.to_ascii_lowercase();
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
        if let Some(n) = lower.strip_prefix("content-length:") {
            length = n.trim().parse::<usize>().ok();
        }
    }
    let mut out = Vec::new();
    if chunked {
        loop {
            line.clear();
            r.read_line(&mut line).unwrap();
            let n = usize::from_str_radix(line.trim(), 16).unwrap();
            if n == 0 {
                break;
            }
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).unwrap();
            out.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = length {
        out.resize(n, 0);
        r.read_exact(&mut out).unwrap();
    } else {
        r.read_to_end(&mut out).unwrap();
    }
    (status, out)
}

/// `fanorona serve` on a free port, stopped when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
    /// The token its printed link carries.
    pub token: String,
}

impl Server {
    /// Starts the server with `args` (after `serve`) and the settings of `config`/`data_dir`.
    pub fn start(config: &Path, data_dir: &Path, args: &[&str]) -> Server {
        let port = free_port();
        let bind = format!("127.0.0.1:{port}");
        let mut child = Command::new(BIN)
            .arg("--config")
            .arg(config)
            .arg("--data-dir")
            .arg(data_dir)
            .args(["serve", "--bind", &bind])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // It prints its address once it listens.
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(first.starts_with("serving on http://"), "{first}");
        let token = first
            .trim()
            .split_once("/?token=")
            .expect("the printed link carries the token")
            .1
            .to_string();
        Server { child, port, token }
    }

    /// The app's address with the token, as `fanorona serve` prints it, then `rest` (the
    /// page's `#/...`).
    pub fn url(&self, rest: &str) -> String {
        format!("http://127.0.0.1:{}/?token={}{rest}", self.port, self.token)
    }

    /// `http` with the token.
    pub fn http(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let (status, bytes) = self.raw(method, path, body, &[]);
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    /// `http_raw` with the token.
    pub fn raw(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> (u16, Vec<u8>) {
        let mut all = vec![("x-token", self.token.as_str())];
        all.extend_from_slice(headers);
        http_raw(self.port, method, path, body, &all)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A headless chromium session, closed (with its driver) when dropped.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    pub fn start() -> Browser {
        assert!(
            Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists(),
            "the browser tests need Debian's chromium and chromium-driver: run scripts/install-browser.sh (README's test command does)"
        );
        let profile = tempfile::tempdir().unwrap();
        // The flags keep chromium off the network it cannot reach here.
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1300,1000",
                    format!("--user-data-dir={}", profile.path().display())]
            }
        }}});
        // A free port can be taken by another test's server before chromedriver binds it
        // (seen once: our POST reached a web server, 404): then the driver exits, or the
        // answer is not a session, and another port is tried.
        let mut last = String::new();
        for _ in 0..3 {
            let port = free_port();
            let mut driver = Command::new(CHROMEDRIVER)
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(20);
            while TcpStream::connect(("127.0.0.1", port)).is_err()
                && driver.try_wait().unwrap().is_none()
            {
                assert!(Instant::now() < deadline, "chromedriver did not start");
                std::thread::sleep(Duration::from_millis(50));
            }
            if let Some(exit) = driver.try_wait().unwrap() {
                last = format!("chromedriver exited ({exit}) on port {port}");
                continue;
            }
            let (status, v) = http(port, "POST", "/session", Some(&caps));
            if status != 200 {
                last = format!("{status} {v} on port {port}");
                let _ = driver.kill();
                let _ = driver.wait();
                continue;
            }
            let session = v["value"]["sessionId"].as_str().unwrap().to_string();
            return Browser {
                driver,
                port,
                session,
                _profile: profile,
            };
        }
        panic!("chromium did not start: {last}");
    }

    fn call(&self, method: &str, rest: &str, body: Option<Value>) -> Value {
        let path = format!("/session/{}{rest}", self.session);
        let (status, v) = http(self.port, method, &path, body.as_ref());
        assert_eq!(status, 200, "{method} {rest}: {v}");
        v["value"].clone()
    }

    pub fn open(&self, url: &str) {
        self.call("POST", "/url", Some(json!({ "url": url })));
    }

    /// Runs `script` (a function body) in the page and returns its value.
    pub fn eval(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    /// The elements matching a CSS selector.
    pub fn all(&self, css: &str) -> Vec<String> {
        let v = self.call(
            "POST",
            "/elements",
            Some(json!({"using": "css selector", "value": css})),
        );
        v.as_array()
            .unwrap()
            .iter()
            .map(|e| e[ELEMENT].as_str().unwrap().to_string())
            .collect()
    }

    /// The first element matching `css`, waiting up to `secs` for it.
    pub fn wait(&self, css: &str, secs: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(e) = self.all(css).into_iter().next() {
                return e;
            }
            assert!(Instant::now() < deadline, "no '{css}' on the page");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until `script` returns true.
    pub fn wait_until(&self, what: &str, script: &str, secs: u64) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while self.eval(script) != Value::Bool(true) {
            assert!(Instant::now() < deadline, "waited {secs} s for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A real click (the browser's pointer on the element's centre).
    pub fn click(&self, element: &str) {
        self.call(
            "POST",
            &format!("/element/{element}/click"),
            Some(json!({})),
        );
    }

    /// A click on an element the page may have redrawn since it was found (the other
    /// side's move arriving): false if it is gone, so the caller looks again.
    pub fn try_click(&self, element: &str) -> bool {
        let path = format!("/session/{}/element/{element}/click", self.session);
        let (status, v) = http(self.port, "POST", &path, Some(&json!({})));
        if status == 404 && v["value"]["error"] == "stale element reference" {
            return false;
        }
        assert_eq!(status, 200, "click: {v}");
        true
    }

    pub fn click_css(&self, css: &str) {
        let e = self.wait(css, 10);
        self.click(&e);
    }

    pub fn text(&self, css: &str) -> String {
        let e = self.wait(css, 10);
        self.call("GET", &format!("/element/{e}/text"), None)
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Chooses `value` in the `<select>` `css` as a person would (then the change event).
    pub fn select(&self, css: &str, value: &str) {
        let script = format!(
            "const s = document.querySelector({css:?}); s.value = {value:?}; s.dispatchEvent(new Event('change')); return s.value;"
        );
        assert_eq!(
            self.eval(&script),
            Value::from(value),
            "{css} has no {value}"
        );
    }

    pub fn type_into(&self, css: &str, text: &str) {
        let e = self.wait(css, 10);
        self.call("POST", &format!("/element/{e}/clear"), Some(json!({})));
        self.call(
            "POST",
            &format!("/element/{e}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// The browser's Back button.
    pub fn back(&self) {
        self.call("POST", "/back", Some(json!({})));
    }

    /// The browser's Forward button.
    pub fn forward(&self) {
        self.call("POST", "/forward", Some(json!({})));
    }

    /// Presses each key of `keys` in turn (WebDriver codes: `keys::ENTER`...) where the
    /// focus is, as a keyboard would.
    pub fn press(&self, keys: &str) {
        let actions: Vec<Value> = keys
            .chars()
            .flat_map(|k| {
                let k = k.to_string();
                [
                    json!({"type": "keyDown", "value": k}),
                    json!({"type": "keyUp", "value": k}),
                ]
            })
            .collect();
        self.call(
            "POST",
            "/actions",
            Some(json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})),
        );
    }

    /// Presses `keys` together (a modifier first: `[keys::SHIFT, keys::TAB]`).
    pub fn chord(&self, keys: &[char]) {
        let mut actions: Vec<Value> = keys
            .iter()
            .map(|k| json!({"type": "keyDown", "value": k.to_string()}))
            .collect();
        actions.extend(
            keys.iter()
                .rev()
                .map(|k| json!({"type": "keyUp", "value": k.to_string()})),
        );
        self.call(
            "POST",
            "/actions",
            Some(json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})),
        );
    }

    /// The page laid out as on a screen `width` CSS pixels wide (a phone's), through the
    /// DevTools protocol chromedriver passes on.
    pub fn viewport(&self, width: u32, height: u32) {
        self.call(
            "POST",
            "/goog/cdp/execute",
            Some(
                json!({"cmd": "Emulation.setDeviceMetricsOverride", "params": {
                "width": width, "height": height, "deviceScaleFactor": 1, "mobile": true}}),
            ),
        );
    }

    /// A PNG of the page, written to `path`.
    pub fn screenshot(&self, path: &Path) {
        let v = self.call("GET", "/screenshot", None);
        std::fs::write(path, base64_decode(v.as_str().unwrap())).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let path = format!("/session/{}", self.session);
        let _ = std::panic::catch_unwind(|| http(self.port, "DELETE", &path, None));
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=' && c != b'\n').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let v: Vec<u32> = chunk.iter().map(|&c| value(c) as u32).collect();
        let n = v.iter().fold(0u32, |acc, &x| acc << 6 | x) << (6 * (4 - v.len()));
        for i in 0..v.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

/// Where a test keeps its screenshots: `FANORONA_SCREENSHOTS` (to refresh the ones in
/// docs/), else a temporary directory.
pub fn screenshot_path(tmp: &Path, name: &str) -> std::path::PathBuf {
    match std::env::var_os("FANORONA_SCREENSHOTS") {
        Some(dir) => Path::new(&dir).join(name),
        None => tmp.join(name),
    }
}

/// WebDriver's codes of the keys without a character.
pub mod keys {
    pub const TAB: char = '\u{E004}';
    pub const SHIFT: char = '\u{E008}';
    pub const ENTER: char = '\u{E007}';
    pub const ESCAPE: char = '\u{E00C}';
    pub const SPACE: char = '\u{E00D}';
    pub const LEFT: char = '\u{E012}';
    pub const RIGHT: char = '\u{E014}';
}
