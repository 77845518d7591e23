//! The proof explorer: the checked certificates of the certificate directory, walked move by
//! move from their root. All certificates of one root are walked together, so a draw proven
//! by two disproofs ("White does not win", "Black does not win") reads as a draw wherever
//! both reach. A certificate is indexed once (`certificate::explore`) and kept, so a step is
//! a few lookups, not a reading of the file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::answers::{
    CertificateWalked, CheckingView, LineEnding, MovePlayed, MoveProved, ProofFile, ProofFound,
    ProofList, ProofRefused, ProofRoot, ProofWalk,
};
use super::certificates::{Bounds, Index, Known, Stamp, bounds_of, position_bounds, stamp};
use super::{ApiError, AppState, blocking, view};
use axum::extract::{Query, State};
use axum::response::Response;
use axum::{Json, http::StatusCode};
use fanorona_certificate::explore::{Ending, Tree, play_line};
use fanorona_play::agent::Verdict;
use fanorona_rules::moves::legal_moves;
use fanorona_rules::position::Position;
use serde::Deserialize;

/// Indexed certificates kept at once; the least recently walked goes first.
const KEPT: usize = 4;

/// A certificate indexed: the stamp it was read at, its tree, its last use.
type Kept = (Stamp, Arc<Tree>, Instant);

/// Certificates indexed for walking, by file.
#[derive(Default)]
pub struct Trees {
    kept: Mutex<HashMap<PathBuf, Kept>>,
}

impl Trees {
    /// The tree of the checked certificate `known`, indexed now unless it is kept. Refused
    /// when the file changed since it was checked (the next listing checks it again).
    fn get(&self, known: &Known) -> Result<Arc<Tree>, ApiError> {
        let path = PathBuf::from(&known.file);
        if stamp(&path) != known.stamp {
            return Err(ApiError {
                status: StatusCode::CONFLICT,
                message: format!(
                    "{} changed since it was checked; try again in a few seconds",
                    file_name(&known.file)
                ),
            });
        }
        if let Some((s, tree, used)) = self.kept.lock().expect("trees lock").get_mut(&path)
            && *s == known.stamp
        {
            *used = Instant::now();
            return Ok(tree.clone());
        }
        // Indexed outside the lock: another certificate's walk goes on meanwhile.
        let tree = Arc::new(Tree::open(&path).map_err(|e| ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            message: e.to_string(),
        })?);
        let mut kept = self.kept.lock().expect("trees lock");
        kept.insert(path, (known.stamp, tree.clone(), Instant::now()));
        while kept.len() > KEPT {
            let oldest = kept
                .iter()
                .min_by_key(|(_, (_, _, used))| *used)
                .map(|(p, _)| p.clone())
                .expect("more than KEPT kept");
            kept.remove(&oldest);
        }
        Ok(tree)
    }
}

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

fn claim_words(k: &Known) -> String {
    format!(
        "{} {} {}",
        k.attacker.name(),
        if k.proven { "wins" } else { "does not win" },
        if k.proven { "(proven)" } else { "(disproven)" }
    )
}

/// How `pos` is reached from its board's start, when it is the start or one move after it.
fn reached_by(pos: &Position) -> Option<String> {
    let start = Position::initial(pos.board());
    if *pos == start {
        return Some("the start".to_string());
    }
    legal_moves(&start)
        .into_iter()
        .find(|m| m.apply(&start) == *pos)
        .map(|m| format!("after {}", m.notation(pos.board())))
}

/// What to do about a certificate the checker refused, from its reason.
fn mending(why: &str) -> String {
    if why.contains("tables") || why.contains("slice") {
        "build the tables it names (`fanorona db build --board RxC --pieces N --db DIR`) and start `fanorona serve` with `--db DIR`".into()
    } else {
        "`fanorona verify FILE --db DIR` says where it fails; replace the file with a good copy"
            .into()
    }
}

/// GET /api/proofs: the checked certificates by root, and those refused with the reason.
pub async fn list(State(state): State<Arc<AppState>>) -> Result<Json<ProofList>, ApiError> {
    let index = state.certificates();
    let mut roots: Vec<ProofRoot> = index
        .roots()
        .map(|(root, known)| {
            let mut files: Vec<&Known> = known.iter().collect();
            files.sort_by(|a, b| a.file.cmp(&b.file));
            let pos = root.parse::<Position>().ok();
            ProofRoot {
                root: root.to_string(),
                board: pos.map(|p| p.board().to_string()).unwrap_or_default(),
                reached_by: pos.and_then(|p| reached_by(&p)),
                certificates: files
                    .iter()
                    .map(|k| ProofFile {
                        file: file_name(&k.file),
                        claim: claim_words(k),
                        bytes: k.stamp.0,
                        check_seconds: k.seconds,
                    })
                    .collect(),
            }
        })
        .collect();
    // By their first file's name.
    roots.sort_by(|a, b| {
        let (a, b) = (a.certificates.first(), b.certificates.first());
        a.map(|c| &c.file).cmp(&b.map(|c| &c.file))
    });
    let refused = index
        .refused
        .iter()
        .map(|(file, why)| ProofRefused {
            file: file_name(file),
            why: why.clone(),
            mend: mending(why),
        })
        .collect();
    let checking = state.checking.progress().and_then(|p| CheckingView::of(&p));
    Ok(Json(ProofList {
        roots,
        refused,
        checking,
    }))
}

#[derive(Deserialize)]
pub struct WalkQuery {
    /// The root position, in the position text.
    root: String,
    /// Moves from the root, in notation, separated by spaces or commas.
    #[serde(default)]
    line: String,
}

/// One certificate's node at the end of the line, or where the line left it.
struct Walked {
    known: Known,
    tree: Arc<Tree>,
    node: Option<u32>,
    /// Moves of the line the certificate follows before it leaves it.
    followed: usize,
}

/// GET /api/proofs/walk?root=POSITION&line=MOVES: the position after the line, what the
/// certificates of that root prove of it and of each of its moves, and how each line ends.
pub async fn walk(
    State(state): State<Arc<AppState>>,
    Query(q): Query<WalkQuery>,
) -> Result<Json<ProofWalk>, ApiError> {
    let s = state.clone();
    blocking(move || walk_now(&s, &q)).await.map(Json)
}

fn walk_now(state: &AppState, q: &WalkQuery) -> Result<ProofWalk, ApiError> {
    let index = state.certificates();
    let root: Position = q
        .root
        .parse()
        .map_err(|e| ApiError::bad(format!("root: {e}")))?;
    if index.rooted_at(&root.to_string()).is_empty() {
        // Not yet, perhaps: the directory is still being checked.
        if let Some(c) = state.checking.progress().and_then(|p| CheckingView::of(&p)) {
            return Err(ApiError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message: format!(
                    "the certificates are being checked ({} of {} done; now {}, {:.1} MB, {:.0} s so far): this page asks again every second",
                    c.done,
                    c.total,
                    c.file,
                    c.bytes as f64 / 1e6,
                    c.seconds
                ),
            });
        }
        return Err(ApiError {
            status: StatusCode::NOT_FOUND,
            message: format!(
                "no checked certificate has the root {}",
                fanorona_rules::geometry::clipped(&q.root)
            ),
        });
    }
    let asked: Vec<&str> = q.line.split([' ', ',']).filter(|m| !m.is_empty()).collect();
    // A move that is not legal where it stands: the walk shows the line up to it and says
    // which move it was.
    let played = play_line(&root, &asked);
    let (positions, line) = (played.positions, played.moves);
    let error = played.error.map(|e| e.to_string());
    let pos = *positions.last().expect("the root at least");
    let judged = judge(state, &index, &root, &line, &pos, true)?;
    // The line's last move, for the board to mark.
    let last = line.last().and_then(|m| {
        let before = positions[positions.len() - 2];
        fanorona_rules::moves::Move::parse(&before, m)
            .ok()
            .map(|mv| MovePlayed::of(&mv, &before))
    });
    let mover = pos.side_to_move();
    let mut moves: Vec<MoveProved> = judged
        .moves
        .into_iter()
        .map(|m| MoveProved {
            value: m.bounds.and_then(|b| b.words()),
            rank: m.bounds.map_or(0, |b| b.low as i32 + b.high as i32 + 1),
            mv: m.notation,
            after: m.after,
            by: m.by,
        })
        .collect();
    // Best first for the side to move, then in notation order.
    moves.sort_by(|a, b| b.rank.cmp(&a.rank).then_with(|| a.mv.cmp(&b.mv)));
    let certificates = judged
        .walked
        .iter()
        .map(|w| CertificateWalked {
            file: file_name(&w.known.file),
            claim: claim_words(&w.known),
            nodes: w.tree.len(),
            reached: w.node.is_some(),
            followed: w.followed,
            here: w.node.map(|n| subtree(&w.tree, n)),
        })
        .collect();
    Ok(ProofWalk {
        root,
        line,
        error,
        position: pos,
        board: view::board(pos.board()),
        cells: view::cells(&pos),
        side: mover,
        value: judged.here.and_then(|b| b.words()),
        certificates,
        moves,
        end: judged.end,
        steps: view::moves(&pos),
        last,
    })
}

/// What the certificates rooted at `root` (walked along `line`, which leads to `pos`), and
/// those rooted at `pos` and at each position after a move, prove of `pos` and its moves.
pub(crate) struct Judged {
    walked: Vec<Walked>,
    /// The position's value for its side to move.
    pub here: Option<Bounds>,
    /// Why the game is over there, if it is (no legal move).
    pub end: Option<String>,
    pub moves: Vec<MoveJudged>,
}

pub(crate) struct MoveJudged {
    pub notation: String,
    pub after: Position,
    /// The move's value for its mover.
    pub bounds: Option<Bounds>,
    pub by: Vec<LineEnding>,
}

/// `Judged` for the line `line` (in notation, legal) from `root` to `pos`. With `elsewhere`
/// false, only the certificates of `root` are read: a game in play has a past before `pos`
/// that a certificate rooted there knows nothing of.
pub(crate) fn judge(
    state: &AppState,
    index: &Index,
    root: &Position,
    line: &[String],
    pos: &Position,
    elsewhere: bool,
) -> Result<Judged, ApiError> {
    let rooted = |p: &Position| {
        if elsewhere {
            index.root_bounds(p)
        } else {
            None
        }
    };
    let mut walked = Vec::new();
    for k in index.rooted_at(&root.to_string()) {
        let tree = state.proof_trees.get(k)?;
        let at = tree.follow(line);
        let (node, followed) = ((at.moves == line.len()).then_some(at.node), at.moves);
        walked.push(Walked {
            known: k.clone(),
            tree,
            node,
            followed,
        });
    }
    let mover = pos.side_to_move();
    let legal = legal_moves(pos);
    let end = legal
        .is_empty()
        .then(|| format!("{} has no move: {} has lost", mover.name(), mover.name()));
    // The position's value: lost without a move; else what the walked certificates say
    // (exact at a table leaf), with those rooted at the position itself.
    let here = if end.is_some() {
        Some(Bounds::exact(Verdict::Loss))
    } else {
        let leaf = walked
            .iter()
            .filter_map(|w| w.node.map(|n| w.tree.ending(n)))
            .find_map(|e| match e {
                Ending::Table(v) => Some(Bounds::exact(v)),
                _ => None,
            });
        let said = position_bounds(
            walked
                .iter()
                .filter(|w| w.node.is_some())
                .map(|w| (w.known.attacker, w.known.proven)),
            mover,
        );
        leaf.or_else(|| Bounds::meet(said, rooted(pos)))
    };
    let moves = legal
        .into_iter()
        .map(|m| {
            let notation = m.notation(pos.board());
            let after = m.apply(pos);
            let mut says = Vec::new();
            let mut by = Vec::new();
            // A line that ends in the tables or the rules ends with an exact value.
            let mut exact = None;
            for w in walked.iter() {
                let Some(n) = w.node else { continue };
                let child = w.tree.children(n).find(|&c| w.tree.mv(c) == notation);
                says.push((w.known.attacker, w.known.proven, child.is_some()));
                if let Some(c) = child {
                    by.push(ending_view(&w.tree, c, &after, &w.known));
                    exact = exact.or(match w.tree.ending(c) {
                        Ending::Table(v) => Some(Bounds::exact(v.flipped())),
                        Ending::Terminal => Some(Bounds::exact(Verdict::Win)),
                        _ => None,
                    });
                }
            }
            let bounds = exact.or_else(|| {
                Bounds::meet(bounds_of(says, mover), rooted(&after).map(Bounds::flipped))
            });
            MoveJudged {
                notation,
                after,
                bounds,
                by,
            }
        })
        .collect();
    Ok(Judged {
        walked,
        here,
        end,
        moves,
    })
}

/// Nodes in the subtree that stands for `node`.
fn subtree(tree: &Tree, node: u32) -> u64 {
    match tree.ending(node) {
        Ending::Inner { nodes } => nodes,
        _ => 1,
    }
}

/// How one certificate goes on after a move: the subtree below it, or how it ends there and
/// why, in a line.
fn ending_view(tree: &Tree, child: u32, after: &Position, known: &Known) -> LineEnding {
    let to_move = after.side_to_move();
    let pieces = after.piece_count();
    let (why, shared) = match tree.ending(child) {
        Ending::Inner { .. } => ("the proof goes on below".to_string(), None),
        Ending::Table(v) => {
            let said = match fanorona_search::Value::of(v, to_move) {
                fanorona_search::Value::Draw => "draw".to_string(),
                fanorona_search::Value::Win(c) => format!("{} wins", c.name()),
            };
            (format!("{pieces} pieces: {said} (tables)"), None)
        }
        Ending::Terminal => (
            format!("{} has no move left and loses", to_move.name()),
            None,
        ),
        Ending::Repetition { plies } => (
            format!("back to the position {plies} plies ago: play goes round, a draw"),
            None,
        ),
        Ending::Shared { node } => {
            let line = tree.line_to(node);
            (
                format!(
                    "the same position as after {}: proven there",
                    if line.is_empty() {
                        "the root".to_string()
                    } else {
                        line.join(" ")
                    }
                ),
                Some(line.iter().map(|m| m.to_string()).collect::<Vec<_>>()),
            )
        }
        Ending::Open => ("left open (a partial certificate)".to_string(), None),
    };
    LineEnding {
        file: file_name(&known.file),
        nodes: subtree(tree, tree.standing_for(child)),
        why,
        shared,
    }
}

#[derive(Deserialize)]
pub struct FindQuery {
    position: String,
}

/// GET /api/proofs/find?position=POSITION: the first checked certificate that reaches the
/// position, and the line to it from its root (its moves played from the root; a few
/// seconds for the largest certificates).
pub async fn find(
    State(state): State<Arc<AppState>>,
    Query(q): Query<FindQuery>,
) -> Result<Json<ProofFound>, ApiError> {
    blocking(move || {
        let pos: Position = q
            .position
            .parse()
            .map_err(|e| ApiError::bad(format!("position: {e}")))?;
        let index = state.certificates();
        let started = Instant::now();
        let mut roots: Vec<(&String, &Vec<Known>)> = index.roots().collect();
        roots.sort_by(|a, b| a.0.cmp(b.0));
        let mut searched = 0;
        for (root, known) in roots {
            let board = root.parse::<Position>().map(|p| p.board()).ok();
            if board != Some(pos.board()) {
                continue;
            }
            let mut files: Vec<&Known> = known.iter().collect();
            files.sort_by(|a, b| a.file.cmp(&b.file));
            for k in files {
                let tree = state.proof_trees.get(k)?;
                searched += tree.len();
                if let Some(node) = tree.find(&pos) {
                    return Ok(Json(ProofFound {
                        root: root.clone(),
                        line: tree.line_to(node).iter().map(|m| m.to_string()).collect(),
                        file: file_name(&k.file),
                        searched,
                        seconds: started.elapsed().as_secs_f64(),
                    }));
                }
            }
        }
        Err(ApiError {
            status: StatusCode::NOT_FOUND,
            message: format!(
                "no checked certificate reaches {pos} ({searched} nodes searched in {:.1} s)",
                started.elapsed().as_secs_f64()
            ),
        })
    })
    .await
}

#[derive(Deserialize)]
pub struct FileQuery {
    name: String,
}

/// GET /api/proofs/file?name=FILE: a checked certificate of the directory, as it is on disk.
pub async fn file(
    State(state): State<Arc<AppState>>,
    Query(q): Query<FileQuery>,
) -> Result<Response, ApiError> {
    let (name, bytes) = blocking(move || {
        let index = state.certificates();
        // Only a file the listing holds: no path from the request is ever opened.
        let known = index
            .roots()
            .flat_map(|(_, k)| k.iter())
            .find(|k| file_name(&k.file) == q.name)
            .ok_or_else(|| ApiError {
                status: StatusCode::NOT_FOUND,
                message: format!(
                    "no checked certificate is called {}",
                    fanorona_rules::geometry::clipped(&q.name)
                ),
            })?;
        let bytes = std::fs::read(&known.file).map_err(|e| ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("{}: {e}", file_name(&known.file)),
        })?;
        Ok((file_name(&known.file), bytes))
    })
    .await?;
    let kind = if name.ends_with(".gz") {
        "application/gzip"
    } else {
        "text/plain; charset=utf-8"
    };
    Ok(super::download(kind, name, bytes))
}
