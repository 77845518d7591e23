//! The API's own answers (those that are not the daemon's, which go out as the daemon gives
//! them): typed, so that the handlers only fill them. The pieces a page draws (a board, a
//! position's cells, its moves step by step) are `view`'s.

use fanorona_daemon::answers::{MovesAt, Status};
use fanorona_play::agent::Verdict;
use fanorona_rules::geometry::Board;
use fanorona_rules::position::{Color, Position};
use fanorona_session::log::Progress;
use serde::{Deserialize, Serialize};

use super::view::{BoardView, MoveView};

/// Any refusal: one line saying why (the HTTP status says what kind).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorAnswer {
    pub error: String,
}

/// POST /api/game and /api/record: a game as the page shows it.
#[derive(Serialize)]
pub struct GameState {
    pub board: BoardView,
    pub start: Position,
    pub position: Position,
    /// The side to move.
    pub side: Color,
    pub cells: String,
    /// The legal moves, step by step (none once the game has ended).
    pub moves: Vec<MoveView>,
    pub history: Vec<MovePlayed>,
    pub end: Option<GameEnd>,
    /// The game's record, as `play --save` writes it.
    pub record: String,
}

/// A move played: who played it, and the points it went through and the pieces it took, so
/// the page can draw a player's capture chain (its end point alone says little of it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovePlayed {
    pub notation: String,
    pub side: Color,
    pub from: u8,
    pub path: Vec<u8>,
    pub taken: Vec<u8>,
}

impl MovePlayed {
    /// `m`, played from `before`: who played it, the points it went through, what it took.
    pub fn of(m: &fanorona_rules::moves::Move, before: &Position) -> MovePlayed {
        MovePlayed {
            notation: m.notation(before.board()),
            side: before.side_to_move(),
            from: m.from(),
            path: m.path().to_vec(),
            taken: super::view::point_list(m.captured()),
        }
    }
}

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GameEnd {
    /// "1-0", "0-1" or "1/2-1/2".
    pub result: &'static str,
    pub winner: Option<Color>,
    pub termination: &'static str,
    /// In words.
    pub text: String,
}

/// POST /api/analyse: the game as /api/game shows it, and its analysis.
#[derive(Serialize)]
pub struct AnalysedGame {
    #[serde(flatten)]
    pub game: GameState,
    pub analysis: Analysis,
    /// The last move of the line that reached a position set up on its own (`line_from`),
    /// for the board to mark.
    pub last: Option<MovePlayed>,
}

/// The position's value and every legal move's, best first, with where each came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    /// "win", "draw", "loss", "at least a draw", "at most a draw" or "unknown".
    pub value: &'static str,
    pub moves: Vec<MoveAnalysed>,
    /// The tables read (null: none for this board).
    pub tables: Option<TablesRead>,
    /// Entries of the rote store read, certificates read and refused (null: not read).
    pub rote: Option<usize>,
    pub certificates: Option<usize>,
    pub certificates_refused: Option<usize>,
    /// The certificate directory's check under way (what it says may change): the page
    /// asks again once it is over.
    pub certificates_checking: Option<CheckingView>,
    /// After moves: valued as a game in play (repeating one of its positions draws).
    pub in_play: bool,
}

/// The check of the certificate directory under way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckingView {
    /// Files read and files in all.
    pub done: usize,
    pub total: usize,
    /// The file being checked, its size, and the seconds its check has taken so far.
    pub file: String,
    pub bytes: u64,
    pub seconds: f64,
}

impl CheckingView {
    pub fn of(p: &crate::certificates::Progress) -> Option<CheckingView> {
        let (file, bytes, seconds) = match &p.file {
            Some((file, bytes, began)) => (file.clone(), *bytes, began.elapsed().as_secs_f64()),
            None => ("the directory's list".to_string(), 0, 0.0),
        };
        Some(CheckingView {
            done: p.done,
            total: p.total,
            file,
            bytes,
            seconds,
        })
    }
}

/// The tables an analysis read: up to so many pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TablesRead {
    pub pieces: usize,
}

/// One move of an analysis: its value for the side to move, and from where.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveAnalysed {
    /// As `Analysis::value`.
    pub value: &'static str,
    /// "rules", "tables", "rote", "search" or "certificate" (null: unknown).
    pub source: Option<&'static str>,
    pub notation: String,
    /// Plies to the end or a capture, where the tables keep distances.
    pub distance: Option<u32>,
    pub score: Option<f64>,
    pub after: Position,
}

/// POST /api/agent: the move a player chooses, with what it knows of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgentMove {
    pub player: String,
    #[serde(rename = "move")]
    pub mv: String,
    /// Its value for the mover, where the player knows it, and from where.
    pub value: Option<Verdict>,
    pub source: Option<&'static str>,
    /// Nodes searched or playouts run.
    pub work: u64,
    pub seconds: f64,
    /// Why it chose the move, for players that say (the proof player: the certificate it
    /// follows, the tables, a win found, or what it fell back on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// GET /api/info: the boards, the players and their levels.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppInfo {
    pub boards: Vec<BoardInfo>,
    pub players: Vec<PlayerInfo>,
}

/// A board: its start, and whether the server has its tables.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardInfo {
    pub name: Board,
    pub start: Position,
    pub tables: bool,
}

/// A kind of player, and its levels (none for those without).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlayerInfo {
    pub kind: &'static str,
    pub levels: Vec<&'static str>,
}

/// GET /api/proofs: the checked certificates by root, and those refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProofList {
    pub roots: Vec<ProofRoot>,
    pub refused: Vec<ProofRefused>,
    /// The certificate directory's check under way, if it is: more may come.
    pub checking: Option<CheckingView>,
}

/// The checked certificates of one root.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProofRoot {
    pub root: String,
    /// Its board ("" when the root does not read as a position).
    pub board: String,
    /// How it is reached from its board's start: "the start", "after d3-e3A"; `None` for
    /// a root further on.
    pub reached_by: Option<String>,
    pub certificates: Vec<ProofFile>,
}

/// A checked certificate: its file name, and its claim in words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProofFile {
    pub file: String,
    pub claim: String,
    /// Its size, and the seconds its check took.
    pub bytes: u64,
    pub check_seconds: f64,
}

/// A certificate the checker refused: why, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProofRefused {
    pub file: String,
    pub why: String,
    pub mend: String,
}

/// GET /api/proofs/find: where a position is in the checked certificates: the first
/// certificate (by root, then file) that reaches it, and the line from its root.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProofFound {
    pub root: String,
    pub line: Vec<String>,
    pub file: String,
    /// Nodes searched in all, and the seconds the search took.
    pub searched: u64,
    pub seconds: f64,
}

/// GET /api/proofs/walk: the position after a line from a root, what the certificates of
/// that root prove of it and of each of its moves, and how each line ends.
#[derive(Serialize)]
pub struct ProofWalk {
    pub root: Position,
    /// The moves played, as far as they are legal.
    pub line: Vec<String>,
    /// The first move that is not legal where it is played.
    pub error: Option<String>,
    pub position: Position,
    pub board: BoardView,
    pub cells: String,
    pub side: Color,
    /// What the certificates that reach the position prove of it, in words.
    pub value: Option<&'static str>,
    pub certificates: Vec<CertificateWalked>,
    /// Best first for the side to move, then in notation order.
    pub moves: Vec<MoveProved>,
    /// The side to move has no move (and so has lost).
    pub end: Option<String>,
    /// The legal moves step by step, for the board to preview a move's path and captures.
    pub steps: Vec<MoveView>,
    /// The line's last move, for the board to mark.
    pub last: Option<MovePlayed>,
}

/// One certificate of a walk: how far it follows the line, and its subtree there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertificateWalked {
    pub file: String,
    pub claim: String,
    pub nodes: u64,
    /// It follows the whole line.
    pub reached: bool,
    /// Moves of the line it follows.
    pub followed: usize,
    /// Nodes below the position, where it reaches it.
    pub here: Option<u64>,
}

/// A legal move of a walk: what the certificates prove after it, and how each goes on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MoveProved {
    #[serde(rename = "move")]
    pub mv: String,
    pub after: Position,
    pub value: Option<&'static str>,
    /// For the order: higher is better for the side to move (0: nothing known).
    pub rank: i32,
    pub by: Vec<LineEnding>,
}

/// How one certificate goes on after a move: the subtree below it, or how it ends there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineEnding {
    pub file: String,
    pub nodes: u64,
    /// In a line.
    pub why: String,
    /// For a leaf shared with another line: that line's moves.
    pub shared: Option<Vec<String>>,
}

/// GET /api/sessions/{id}/curve: the session's status and its root curve, thinned.
#[derive(Serialize)]
pub struct SessionCurve {
    pub status: Status,
    /// Points before thinning.
    pub total: usize,
    /// The proof number that stands for infinity (a decided question's).
    pub infinite: u64,
    pub points: Vec<RootNumbers>,
}

/// A point of a question's curve: the root's proof and disproof numbers after an iteration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RootNumbers {
    /// The question's attacker.
    pub goal: String,
    pub iteration: u64,
    pub nodes: u64,
    pub seconds: f64,
    pub pn: u64,
    pub dpn: u64,
}

/// GET /api/sessions/{id}/moves: the daemon's answer, with the board at the line's end drawn
/// as the other pages draw theirs.
#[derive(Serialize)]
pub struct SessionMoves {
    #[serde(flatten)]
    pub at: MovesAt,
    pub board: BoardView,
    pub cells: String,
    pub side: Color,
}

/// GET /api/sessions/{id}/log: the progress log's lines since an offset, and the offset to
/// ask from next.
#[derive(Serialize)]
pub struct LogLines {
    pub lines: Vec<Progress>,
    pub next: u64,
}
