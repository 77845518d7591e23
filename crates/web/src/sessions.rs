//! The sessions pages' API: the daemon's answers passed through its socket, and the live
//! curve (the checkpointed points, then the progress log's once-a-second points after them),
//! read incrementally so a page watching costs the solve next to nothing.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;

use super::answers::{LogLines, RootNumbers, SessionCurve, SessionMoves};
use super::api::parse_body;
use super::{ApiError, AppState, blocking, download};
use fanorona_daemon::DataDir;
use fanorona_daemon::answers::{self, Status};
use fanorona_daemon::client::{ClientError, call};
use fanorona_daemon::protocol::{self, Command, Pause, Resume, StatusOf, Stop};
use fanorona_search::CurvePoint;
use fanorona_session::curve::{self, Row};
use fanorona_session::log::{Progress, log_path};

/// Points per question the live curve sends at most (evenly thinned, the last kept).
const CURVE_POINTS: usize = 1500;

/// The most of a log the page gets at once.
const LOG_CHUNK: u64 = 64 << 10;

/// Asks the daemon, off the server's threads; its refusals become 404 (an unknown session),
/// 400 (a request it cannot do) or 503 (no daemon runs: the message says how to start one).
async fn ask<C>(state: &AppState, command: C) -> Result<C::Answer, ApiError>
where
    C: Command + Send + 'static,
    C::Answer: Send + 'static,
{
    let dir = state.options.data_dir.clone();
    blocking(move || {
        let socket = DataDir::new(&dir).socket();
        call(&socket, command).map_err(|e| match e {
            ClientError::NoDaemon(_) => ApiError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message: format!(
                    "no daemon runs on {}: start one with `fanorona --data-dir {} daemon`",
                    dir.display(),
                    dir.display()
                ),
            },
            ClientError::Refused { message, bad_input } => ApiError {
                status: if message.starts_with("no session ") {
                    StatusCode::NOT_FOUND
                } else if bad_input {
                    StatusCode::BAD_REQUEST
                } else {
                    StatusCode::BAD_GATEWAY
                },
                message,
            },
            other => ApiError {
                status: StatusCode::BAD_GATEWAY,
                message: other.to_string(),
            },
        })
    })
    .await
}

/// An answer as the API sends it: its JSON, keys in order.
fn json_of(answer: impl serde::Serialize) -> Json<Value> {
    Json(serde_json::to_value(answer).expect("answers serialise"))
}

/// A session number from the path.
fn session_id(text: &str) -> Result<u64, ApiError> {
    text.parse()
        .map_err(|_| ApiError::bad(format!("'{text}' is not a session number")))
}

/// GET /api/sessions
pub async fn list(State(state): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    ask(&state, protocol::List {}).await.map(json_of)
}

/// GET /api/sessions/{id}
pub async fn status(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = session_id(&id)?;
    ask(&state, StatusOf { id }).await.map(json_of)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartRequest {
    /// A board (`RxC`) or a position.
    target: String,
    #[serde(default)]
    name: Option<String>,
}

/// POST /api/sessions: a new session on a position, over the server's tables where they
/// hold its board.
pub async fn start(
    State(state): State<Arc<AppState>>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let req: StartRequest = parse_body(&body)?;
    let pos = fanorona_rules::target::parse_target(&req.target)
        .map_err(|e| ApiError::bad(e.to_string()))?;
    // Refused here as the daemon would, so a bad request is a 400 whether or not one runs.
    if let Some(name) = &req.name {
        fanorona_session::name::check_name(name).map_err(|e| ApiError::bad(e.to_string()))?;
    }
    let db = fanorona_tables::file::board_dir(&state.options.db_dir, pos.board())
        .is_dir()
        .then(|| {
            std::path::absolute(&state.options.db_dir).unwrap_or(state.options.db_dir.clone())
        });
    ask(
        &state,
        protocol::Start {
            target: pos,
            db,
            algo: None,
            name: req.name,
            second_level: None,
        },
    )
    .await
    .map(json_of)
}

/// POST /api/sessions/{id}/pause|resume|stop
pub async fn control(
    State(state): State<Arc<AppState>>,
    Path((id, action)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let id = session_id(&id)?;
    let status = match action.as_str() {
        "pause" => ask(&state, Pause { id }).await,
        "resume" => ask(&state, Resume { id }).await,
        "stop" => ask(&state, Stop { id }).await,
        other => Err(ApiError {
            status: StatusCode::NOT_FOUND,
            message: format!("no action '{other}': pause, resume or stop"),
        }),
    };
    status.map(json_of)
}

/// One session's curve as the server keeps it between polls.
#[derive(Default)]
struct Cached {
    /// The checkpoint count the stored points were read at.
    checkpoints: Option<u64>,
    stored: Vec<Row>,
    /// How far the progress log has been read, and the points found in it.
    log_offset: u64,
    logged: Vec<Row>,
}

/// The curves kept between polls. One refresh at a time (`refresh`): a crowd of first
/// views reads the store and the log once, the rest find it fresh; at most two plots are
/// drawn at once (`plots`), each a bitmap of megabytes.
pub struct CurveCache {
    curves: Mutex<HashMap<u64, Cached>>,
    refresh: tokio::sync::Mutex<()>,
    plots: tokio::sync::Semaphore,
}

impl Default for CurveCache {
    fn default() -> CurveCache {
        CurveCache {
            curves: Mutex::default(),
            refresh: tokio::sync::Mutex::new(()),
            plots: tokio::sync::Semaphore::new(2),
        }
    }
}

/// Reads the log lines written since `offset` (whole lines only), returning them and the new
/// offset. On a first read of a long log, only its last `LOG_CHUNK` bytes.
fn read_log(path: &std::path::Path, offset: u64, tail_only: bool) -> (Vec<Progress>, u64) {
    let Ok(mut f) = std::fs::File::open(path) else {
        return (Vec::new(), offset);
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let mut from = offset.min(len);
    if tail_only && offset == 0 && len > LOG_CHUNK {
        from = len - LOG_CHUNK;
    }
    if f.seek(SeekFrom::Start(from)).is_err() {
        return (Vec::new(), offset);
    }
    let mut text = Vec::new();
    if f.take(len - from).read_to_end(&mut text).is_err() {
        return (Vec::new(), offset);
    }
    // Only whole lines; a partial first line after a jump is skipped.
    let end = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut start = 0;
    if from != offset {
        start = text
            .iter()
            .position(|&b| b == b'\n')
            .map_or(end, |i| i + 1)
            .min(end);
    }
    let lines = String::from_utf8_lossy(&text[start..end])
        .lines()
        .filter_map(|l| serde_json::from_str::<Progress>(l).ok())
        .collect();
    (lines, from + end as u64)
}

/// The stored points, then the log's points after each goal's last stored iteration.
fn merged(c: &Cached) -> Vec<Row> {
    let mut out = c.stored.clone();
    let mut last: HashMap<&str, u64> = HashMap::new();
    for (g, p) in &c.stored {
        let l = last.entry(g).or_default();
        *l = (*l).max(p.iteration);
    }
    for r in &c.logged {
        let l = last.entry(&r.0).or_default();
        if r.1.iteration > *l {
            *l = r.1.iteration;
            out.push(r.clone());
        }
    }
    out
}

/// Where to read the stored curve from again: each question's last stored iteration, in
/// the session's order of questions (`attackers`); `None` the first time.
fn stored_since(stored: &[Row], attackers: &[String]) -> Option<Vec<u64>> {
    if stored.is_empty() {
        return None;
    }
    Some(
        attackers
            .iter()
            .map(|a| {
                stored
                    .iter()
                    .filter(|(g, _)| g == a)
                    .map(|(_, p)| p.iteration)
                    .max()
                    .unwrap_or(0)
            })
            .collect(),
    )
}

/// `stored` with the points of `new` it does not hold yet, each question's in order.
fn extend_stored(stored: &mut Vec<Row>, new: Vec<Row>) {
    let mut order: Vec<String> = Vec::new();
    for (g, _) in stored.iter().chain(&new) {
        if !order.contains(g) {
            order.push(g.clone());
        }
    }
    let mut have: std::collections::HashSet<(String, u64)> = stored
        .iter()
        .map(|(g, p)| (g.clone(), p.iteration))
        .collect();
    for r in new {
        if have.insert((r.0.clone(), r.1.iteration)) {
            stored.push(r);
        }
    }
    stored.sort_by_key(|(g, p)| (order.iter().position(|o| o == g), p.iteration));
}

/// The curve now: reads the stored points written since the last look when a checkpoint
/// was written since, and the log's new lines.
async fn current_curve(state: &Arc<AppState>, id: u64) -> Result<(Status, Vec<Row>), ApiError> {
    let _refreshing = state.curves.refresh.lock().await;
    let status = ask(state, StatusOf { id }).await?;
    let checkpoints = Some(status.checkpoints);
    let attackers: Vec<String> = status
        .goals
        .iter()
        .map(|g| g.attacker.name().to_string())
        .collect();
    let (stale, since) = {
        let c = state.curves.curves.lock().expect("curve lock");
        let e = c.get(&id);
        (
            e.is_none_or(|c| c.checkpoints != checkpoints),
            e.and_then(|c| stored_since(&c.stored, &attackers)),
        )
    };
    if stale {
        let incremental = since.is_some();
        let points = ask(state, protocol::Curve { id, since }).await?;
        let new = answers::CurvePoint::rows(&points);
        let mut c = state.curves.curves.lock().expect("curve lock");
        let e = c.entry(id).or_default();
        e.checkpoints = checkpoints;
        if incremental {
            extend_stored(&mut e.stored, new);
        } else {
            e.stored = new;
        }
    }
    let path = log_path(&DataDir::new(&state.options.data_dir).logs(), id);
    let offset = {
        let c = state.curves.curves.lock().expect("curve lock");
        c.get(&id).map_or(0, |c| c.log_offset)
    };
    let (lines, next) = blocking(move || Ok(read_log(&path, offset, false))).await?;
    let mut c = state.curves.curves.lock().expect("curve lock");
    let e = c.entry(id).or_default();
    e.log_offset = next;
    for p in lines {
        // A start or resume goes on from a checkpoint: points logged past it were lost (a
        // crash) and are drawn again as the search redoes them.
        if matches!(p.event.as_str(), "start" | "resume") {
            e.logged
                .retain(|(g, q)| *g != p.goal || q.iteration < p.iteration);
        }
        if p.iteration > 0 && matches!(p.event.as_str(), "progress" | "checkpoint" | "goal") {
            e.logged.push((
                p.goal.clone(),
                CurvePoint {
                    iteration: p.iteration,
                    nodes: p.nodes,
                    seconds: p.seconds,
                    pn: p.root_pn,
                    dn: p.root_dpn,
                },
            ));
        }
    }
    // What the stored curve holds already is not kept twice.
    let ends: Vec<(String, u64)> = ["white", "black"]
        .iter()
        .map(|goal| {
            let end = e
                .stored
                .iter()
                .rev()
                .find(|(g, _)| g == goal)
                .map_or(0, |(_, p)| p.iteration);
            (goal.to_string(), end)
        })
        .collect();
    e.logged.retain(|(g, p)| {
        ends.iter()
            .find(|(eg, _)| eg == g)
            .is_none_or(|(_, end)| p.iteration > *end)
    });
    Ok((status, merged(e)))
}

/// GET /api/sessions/{id}/curve: the root's pn and dpn per question, thinned to at most
/// 1500 points each, with the session's status.
pub async fn curve(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<SessionCurve>, ApiError> {
    let id = session_id(&id)?;
    let (status, rows) = current_curve(&state, id).await?;
    let points = curve::thin(&rows, CURVE_POINTS)
        .into_iter()
        .map(|(g, p)| RootNumbers {
            goal: g.clone(),
            iteration: p.iteration,
            nodes: p.nodes,
            seconds: p.seconds,
            pn: p.pn.min(fanorona_search::INFINITE),
            dpn: p.dn.min(fanorona_search::INFINITE),
        })
        .collect();
    Ok(Json(SessionCurve {
        status,
        total: rows.len(),
        infinite: fanorona_search::INFINITE,
        points,
    }))
}

/// GET /api/sessions/{id}/curve.csv: the stored curve (every iteration) and the live points
/// after it.
pub async fn curve_csv(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = session_id(&id)?;
    let (_, rows) = current_curve(&state, id).await?;
    Ok(download(
        "text/csv; charset=utf-8",
        format!("session-{id}-curve.csv"),
        curve::csv_text(&rows).into_bytes(),
    ))
}

/// GET /api/sessions/{id}/curve.png: the curve drawn as `fanorona session curve --png` does.
pub async fn curve_png(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = session_id(&id)?;
    // The turn first: a crowd waiting for it holds no copy of the curve meanwhile.
    let _plotting = state.curves.plots.acquire().await.map_err(|e| ApiError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        message: format!("no turn to draw: {e}"),
    })?;
    let (status, rows) = current_curve(&state, id).await?;
    if rows.is_empty() {
        return Err(ApiError {
            status: StatusCode::NOT_FOUND,
            message: format!("session {id} has no curve points yet"),
        });
    }
    let figure = status.figure();
    let bytes = blocking(move || {
        // A private directory of its own: nobody else can place a file where the plot goes.
        let dir = tempfile::tempdir().map_err(|e| ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("cannot make a temporary directory: {e}"),
        })?;
        let path = dir.path().join("curve.png");
        curve::draw_plot(&path, &figure, &rows, &curve::Plot::default())
            .map_err(|e| ApiError {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                message: e.to_string(),
            })
            .and_then(|()| {
                std::fs::read(&path).map_err(|e| ApiError {
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    message: format!("cannot read the plot back: {e}"),
                })
            })
    })
    .await?;
    Ok(download(
        "image/png",
        format!("session-{id}-curve.png"),
        bytes,
    ))
}

#[derive(Deserialize)]
pub struct MovesQuery {
    /// Moves from the session's root, in notation, separated by spaces.
    #[serde(default)]
    line: String,
    #[serde(default)]
    heaviest: bool,
}

/// GET /api/sessions/{id}/moves?line=MOVES&heaviest=true: each question's first-level tree
/// at the end of the line (as last checkpointed), as `fanorona session moves` shows it.
pub async fn moves(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<MovesQuery>,
) -> Result<Json<SessionMoves>, ApiError> {
    let id = session_id(&id)?;
    let line = q.line.split_whitespace().map(str::to_string).collect();
    let at = ask(
        &state,
        protocol::Moves {
            id,
            line,
            heaviest: q.heaviest,
            pieces: false,
            transpositions: false,
        },
    )
    .await?;
    // The board at the line's end, drawn as the other pages draw theirs.
    let pos = at.position;
    Ok(Json(SessionMoves {
        at,
        board: super::view::board(pos.board()),
        cells: super::view::cells(&pos),
        side: pos.side_to_move(),
    }))
}

#[derive(Deserialize)]
pub struct LogQuery {
    #[serde(default)]
    from: Option<u64>,
}

/// GET /api/sessions/{id}/log?from=OFFSET: the progress log's lines since OFFSET (the end of
/// a long log on the first call), and the offset to ask from next.
pub async fn log(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<LogQuery>,
) -> Result<Json<LogLines>, ApiError> {
    let id = session_id(&id)?;
    let path = log_path(&DataDir::new(&state.options.data_dir).logs(), id);
    if !path.exists() {
        // Unknown, or not started yet: the daemon says which.
        ask(&state, StatusOf { id }).await?;
    }
    let from = q.from.unwrap_or(0);
    let (lines, next) = blocking(move || Ok(read_log(&path, from, true))).await?;
    Ok(Json(LogLines { lines, next }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(goal: &str, iteration: u64) -> Row {
        (
            goal.to_string(),
            CurvePoint {
                iteration,
                nodes: iteration * 10,
                seconds: 0.0,
                pn: 1,
                dn: 1,
            },
        )
    }

    #[test]
    fn log_points_continue_the_stored_curve() {
        let c = Cached {
            stored: vec![row("white", 1), row("white", 2), row("black", 1)],
            logged: vec![
                row("white", 2),
                row("white", 5),
                row("black", 3),
                row("white", 4),
            ],
            ..Cached::default()
        };
        let its: Vec<(String, u64)> = merged(&c)
            .into_iter()
            .map(|(g, p)| (g, p.iteration))
            .collect();
        assert_eq!(
            its,
            vec![
                ("white".into(), 1),
                ("white".into(), 2),
                ("black".into(), 1),
                ("white".into(), 5),
                ("black".into(), 3)
            ]
        );
    }

    #[test]
    fn the_stored_curve_is_read_again_from_where_every_question_is() {
        let stored = vec![row("white", 1), row("white", 2), row("black", 1)];
        let both = ["white".to_string(), "black".to_string()];
        assert_eq!(stored_since(&stored, &both), Some(vec![2, 1]));
        assert_eq!(stored_since(&stored[..2], &both), Some(vec![2, 0]));
        assert_eq!(stored_since(&[], &both), None);
        let mut s = stored.clone();
        extend_stored(
            &mut s,
            vec![row("white", 2), row("white", 3), row("black", 2)],
        );
        let its: Vec<(String, u64)> = s.into_iter().map(|(g, p)| (g, p.iteration)).collect();
        assert_eq!(
            its,
            vec![
                ("white".into(), 1),
                ("white".into(), 2),
                ("white".into(), 3),
                ("black".into(), 1),
                ("black".into(), 2)
            ]
        );
    }
}
