//! `fanorona serve`: a local web app to play, analyse and watch solve sessions. One process:
//! the pages are built into the binary, games and analysis run here, sessions are read and
//! steered through the daemon's socket. It calls the library; nothing below calls it.
//!
//! Safety: it acts for its owner only. Every API request carries the token of the data
//! directory's `web.token` (`token`), on localhost too: other users of the machine reach
//! 127.0.0.1 as well. Listening on localhost (the default), it also answers only requests
//! addressed to a local host name (a page elsewhere cannot reach it by DNS rebinding). A POST
//! must be JSON, which a page of another origin cannot send without a preflight we never
//! grant. No request names a file: sessions by number, tables by board.

pub mod answers;
mod api;
pub mod certificates;
pub mod checking;
pub mod proofs;
mod sessions;
pub mod token;
pub mod view;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use thiserror::Error;

use fanorona_play::strategy::Library;
use fanorona_rules::geometry::Board;
use fanorona_search::rote::RoteTable;
use fanorona_tables::Database;

#[derive(Debug, Error)]
pub enum WebError {
    #[error("the token: give at least 16 characters, each a letter, a digit, '-' or '_'")]
    BadToken,
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the web server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// How `serve` is set up.
#[derive(Clone, Debug)]
pub struct Options {
    pub bind: SocketAddr,
    /// The secret every API request must carry (`token::read_or_create` reads it).
    pub token: String,
    /// The endgame tables' root (boards without tables there are played without them).
    pub db_dir: PathBuf,
    /// The data directory whose daemon the sessions pages talk to.
    pub data_dir: PathBuf,
    /// Certificates the analysis reads (each checked first).
    pub certificates_dir: PathBuf,
}

/// An error answered to the page: a status and one line saying why.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }
}

/// The longest error message sent (one that quotes a huge input is cut).
const MAX_MESSAGE: usize = 1000;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut message = self.message;
        if let Some((cut, _)) = message.char_indices().nth(MAX_MESSAGE) {
            message.truncate(cut);
            message.push('…');
        }
        (
            self.status,
            axum::Json(answers::ErrorAnswer { error: message }),
        )
            .into_response()
    }
}

/// A board's rote entries as last read from the daemon (none without one), and when.
/// The rote table of a board as read from the daemon: when, how many sessions were solved
/// then, and the table (none without a daemon).
type RoteRead = (Instant, Option<usize>, Option<Arc<RoteTable>>);

/// The proof player's certificates of a board, and the certificate directory's files (names
/// and stamps) when they were read.
type Strategies = (Vec<String>, Arc<Library>);

/// What the handlers share.
pub struct AppState {
    pub options: Options,
    /// Opened tables by board (`None`: not built for that board).
    tables: Mutex<HashMap<Board, Option<Arc<Database>>>>,
    /// The daemon's rote store by board, and when it was read.
    rote: Mutex<HashMap<Board, RoteRead>>,
    /// Players and analyses think on at most this many threads at once; more requests wait.
    /// A turn is held by the thinking itself, so a closed tab does not free it early.
    thinkers: Arc<tokio::sync::Semaphore>,
    /// The certificate directory, checked in the background.
    pub checking: checking::Checking,
    curves: sessions::CurveCache,
    /// Certificates indexed for the proof explorer.
    proof_trees: proofs::Trees,
    /// The proof player's certificates by board (their tables differ), with the certificate
    /// directory's file names when they were read.
    strategies: Mutex<HashMap<Board, Strategies>>,
}

impl AppState {
    pub fn new(options: Options) -> AppState {
        let checking =
            checking::Checking::new(options.certificates_dir.clone(), options.db_dir.clone());
        AppState {
            options,
            tables: Mutex::new(HashMap::new()),
            rote: Mutex::new(HashMap::new()),
            thinkers: Arc::new(tokio::sync::Semaphore::new(2)),
            checking,
            curves: sessions::CurveCache::default(),
            proof_trees: proofs::Trees::default(),
            strategies: Mutex::new(HashMap::new()),
        }
    }

    /// The certificates the proof player follows on `board`: the certificate directory's,
    /// read again when its files change (each is checked when a game first reaches its
    /// root; call off the server's threads).
    pub fn strategies(&self, board: Board) -> Option<Arc<Library>> {
        let dir = &self.options.certificates_dir;
        // Each file's name, size and time of change: a file rewritten is read again.
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| {
                let (len, modified) = certificates::stamp(&e.path());
                format!("{} {len} {modified:?}", e.file_name().to_string_lossy())
            })
            .collect();
        names.sort();
        let mut s = self.strategies.lock().expect("strategies lock");
        if let Some((then, library)) = s.get(&board)
            && *then == names
        {
            return Some(library.clone());
        }
        let library = Arc::new(Library::open(dir, self.tables(board)).ok()?);
        s.insert(board, (names, library.clone()));
        Some(library)
    }

    /// A turn to think (a player's move, an analysis): at most two at once, more wait.
    pub async fn think(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        self.thinkers
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| ApiError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message: "the server is shutting down".into(),
            })
    }

    /// Whether `board` has tables to use: as found when they were first opened (whole or
    /// not), else whether their directory is there (opening them checks every slice, which
    /// a listing does not wait for).
    pub fn has_tables(&self, board: Board) -> bool {
        let opened = self
            .tables
            .lock()
            .expect("tables lock")
            .get(&board)
            .map(Option::is_some);
        opened.unwrap_or_else(|| {
            fanorona_tables::file::board_dir(&self.options.db_dir, board).is_dir()
        })
    }

    /// The tables of `board` under the db directory, if they are built and whole (opened,
    /// and checked, once; call off the server's threads).
    pub fn tables(&self, board: Board) -> Option<Arc<Database>> {
        let mut t = self.tables.lock().expect("tables lock");
        t.entry(board)
            .or_insert_with(|| {
                let dir = &self.options.db_dir;
                if !fanorona_tables::file::board_dir(dir, board).is_dir() {
                    return None;
                }
                match Database::open_whole(dir, board) {
                    Ok(db) => Some(Arc::new(db)),
                    Err(e) => {
                        tracing::warn!("tables of {board} not used: {e}");
                        None
                    }
                }
            })
            .clone()
    }

    /// The certificates of the certificate directory checked so far (`checking`: read in
    /// the background, again when they are asked for after a few seconds; only new or
    /// changed files are checked again).
    pub fn certificates(&self) -> Arc<certificates::Index> {
        self.checking.index()
    }

    /// The rote store's entries of `board` (none when no daemon runs), read from the daemon
    /// at most every two minutes, and at once when a session was solved since: what it
    /// decided is on the page the moment the session's is.
    pub fn rote(&self, board: Board) -> Option<Arc<RoteTable>> {
        let socket = fanorona_daemon::DataDir::new(&self.options.data_dir).socket();
        // A list of the sessions is a few hundred bytes a session; the rote table may be
        // millions of entries.
        let solved = fanorona_daemon::client::call(&socket, fanorona_daemon::protocol::List {})
            .ok()
            .map(|all| {
                all.iter()
                    .filter(|s| s.state == fanorona_daemon::answers::Shown::Solved)
                    .count()
            });
        let mut r = self.rote.lock().expect("rote lock");
        if let Some((when, then_solved, table)) = r.get(&board)
            && when.elapsed() < Duration::from_secs(120)
            && *then_solved == solved
        {
            return table.clone();
        }
        let table =
            fanorona_daemon::client::call(&socket, fanorona_daemon::protocol::RoteExport {})
                .ok()
                .map(|rows| Arc::new(fanorona_daemon::answers::RoteRow::table(&rows, board)));
        r.insert(board, (Instant::now(), solved, table.clone()));
        table
    }
}

/// How long the certificate directory's listing is taken as it was.
const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const EXPLORER: &str = include_str!("assets/explorer.js");
const STYLE: &str = include_str!("assets/style.css");

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

/// The app's routes.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/index.html",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }),
        )
        .route(
            "/explorer.js",
            get(|| async { asset("text/javascript; charset=utf-8", EXPLORER) }),
        )
        .route(
            "/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE) }),
        )
        .route("/api/info", get(api::info))
        .route("/api/game", post(api::game))
        .route("/api/record", post(api::record))
        .route("/api/agent", post(api::agent))
        .route("/api/analyse", post(api::analyse))
        .route("/api/proofs", get(proofs::list))
        .route("/api/proofs/walk", get(proofs::walk))
        .route("/api/proofs/file", get(proofs::file))
        .route("/api/proofs/find", get(proofs::find))
        .route("/api/sessions", get(sessions::list).post(sessions::start))
        .route("/api/sessions/{id}", get(sessions::status))
        .route("/api/sessions/{id}/curve", get(sessions::curve))
        .route("/api/sessions/{id}/curve.csv", get(sessions::curve_csv))
        .route("/api/sessions/{id}/curve.png", get(sessions::curve_png))
        .route("/api/sessions/{id}/log", get(sessions::log))
        .route("/api/sessions/{id}/moves", get(sessions::moves))
        .route("/api/sessions/{id}/{action}", post(sessions::control))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// An address that is not there: the API's JSON error under `/api/`, a page elsewhere (someone
/// typed it into the address bar) that leads back to the app.
async fn not_found(uri: axum::http::Uri) -> Response {
    if uri.path().starts_with("/api/") {
        return ApiError {
            status: StatusCode::NOT_FOUND,
            message: "no such API address (docs/guide/web.md lists the API)".into(),
        }
        .into_response();
    }
    (
        StatusCode::NOT_FOUND,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        )],
        NOT_FOUND_PAGE,
    )
        .into_response()
}

const NOT_FOUND_PAGE: &str = "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\">\
<title>Not found - Fanorona</title><p>There is no page at this address. \
<a href=\"/\">Open the app</a>.</p></html>\n";

/// Every answer says it may not be shown inside another site's frame: a page there could
/// otherwise lay its own over the buttons that pause, stop or start sessions.
async fn guard(state: State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let mut response = admit(state, request, next).await;
    let headers = response.headers_mut();
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("frame-ancestors 'none'"),
    );
    response
}

/// Refuses requests to the API without the token, requests addressed to another host name
/// (when listening on localhost), and POSTs that are not JSON.
async fn admit(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let refuse = |status, message: &str| ApiError {
        status,
        message: message.to_string(),
    };
    let headers = request.headers();
    if state.options.bind.ip().is_loopback() {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !is_local_host(host) {
            return refuse(
                StatusCode::FORBIDDEN,
                "this server answers only localhost addresses",
            )
            .into_response();
        }
    }
    // The pages themselves hold nothing secret; the API needs the token.
    if request.uri().path().starts_with("/api/")
        && !carries_token(headers, request.uri().query(), &state.options.token)
    {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "this server needs its token: open the link `fanorona serve` printed (it ends in ?token=...), or send the token file's line in an x-token header",
        )
        .into_response();
    }
    if request.method() == axum::http::Method::POST && !is_json(headers) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the request as JSON (Content-Type: application/json)",
        )
        .into_response();
    }
    as_json_error(next.run(request).await).await
}

/// Whether a request or response says its body is JSON.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|c| c.starts_with("application/json"))
}

/// Whether a response is one of our pages (the framework's own errors are plain text).
fn is_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|c| c.starts_with("text/html"))
}

/// An error the framework answered itself (a method a route does not take, a query that does
/// not parse, a body over the limit) comes as plain text or nothing: it goes out as the API's
/// JSON error, with that text as its message.
async fn as_json_error(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error())
        || is_json(response.headers())
        || is_html(response.headers())
    {
        return response;
    }
    let bytes = axum::body::to_bytes(response.into_body(), 64 << 10)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes).trim().to_string();
    let message = match (text.is_empty(), status) {
        (_, StatusCode::PAYLOAD_TOO_LARGE) => {
            "the request's body is over the API's limit of 2 MB".into()
        }
        // The framework's own words, in the API's.
        (false, _) => match text.strip_prefix("Failed to deserialize query string: ") {
            Some(detail) => format!("bad query: {detail}"),
            None => text,
        },
        (true, StatusCode::METHOD_NOT_ALLOWED) => {
            "this address does not take that method (docs/guide/web.md lists the API)".into()
        }
        (true, _) => status.canonical_reason().unwrap_or("error").into(),
    };
    ApiError { status, message }.into_response()
}

/// Whether the request carries `token` in the `x-token` header or the `token` query key.
fn carries_token(headers: &HeaderMap, query: Option<&str>, token: &str) -> bool {
    let header_ok = headers
        .get("x-token")
        .and_then(|h| h.to_str().ok())
        .is_some_and(|t| constant_time_eq(t.as_bytes(), token.as_bytes()));
    let query_ok = query.into_iter().flat_map(|q| q.split('&')).any(|kv| {
        kv.strip_prefix("token=")
            .is_some_and(|t| constant_time_eq(t.as_bytes(), token.as_bytes()))
    });
    header_ok || query_ok
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `localhost`, `127.x.x.x` or `[::1]`, with or without a port.
fn is_local_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.split(':').next().unwrap_or("")
    };
    name == "localhost"
        || name == "::1"
        || name
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_loopback())
}

/// Runs the server until the process is stopped. `ready` is told the address it listens on
/// (with the port chosen, when 0 was asked).
pub fn serve(options: Options, ready: impl FnOnce(SocketAddr)) -> Result<(), WebError> {
    if !token::well_formed(&options.token) {
        return Err(WebError::BadToken);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let addr = options.bind;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| WebError::Bind { addr, source })?;
        ready(listener.local_addr()?);
        let state = Arc::new(AppState::new(options));
        // The certificates are checked from the start, not at the first page that needs them.
        state.checking.refresh();
        let app = router(state);
        axum::serve(listener, app).await?;
        Ok(())
    })
}

/// Runs blocking work (a search, a socket call) off the server's threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("the work failed: {e}"),
        })?
}

/// A download: `bytes` as `kind`, saved as `name`.
fn download(kind: &'static str, name: String, bytes: Vec<u8>) -> Response {
    let disposition = format!("attachment; filename=\"{name}\"");
    let mut r = Response::new(Body::from(bytes));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        r.headers_mut().insert(header::CONTENT_DISPOSITION, v);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts_are_told_apart() {
        for h in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:80",
            "[::1]:8080",
            "127.1.2.3",
        ] {
            assert!(is_local_host(h), "{h}");
        }
        for h in [
            "example.com",
            "evil.localhost.example:80",
            "10.0.0.1:8080",
            "",
            "[::2]",
        ] {
            assert!(!is_local_host(h), "{h}");
        }
    }

    #[test]
    fn the_token_is_found_in_a_header_or_the_query() {
        let token = "0123456789abcdef";
        let mut h = HeaderMap::new();
        assert!(!carries_token(&h, None, token));
        assert!(carries_token(&h, Some("a=1&token=0123456789abcdef"), token));
        assert!(!carries_token(&h, Some("token=0123456789abcdeX"), token));
        h.insert("x-token", HeaderValue::from_static("0123456789abcdef"));
        assert!(carries_token(&h, None, token));
    }
}
