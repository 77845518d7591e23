//! An owned whole-turn move, its notation (`b2-c2A-c3A`, `b2-b1`), and parsing a move
//! against a position with the precise reason an illegal one is illegal.

use std::fmt;

use thiserror::Error;

use crate::geometry::{Bitboard, Board, Geometry, NONE};
use crate::movegen::{self, Capture, MAX_STEPS, MoveRef};
use crate::position::{Color, Position};

/// A whole-turn move: a paika step, or a chain of capturing steps.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move {
    from: u8,
    len: u8,
    path: [u8; MAX_STEPS],
    withdrawals: u64,
    captured: Bitboard,
}

impl Move {
    pub fn from_ref(m: MoveRef<'_>) -> Move {
        let mut path = [0; MAX_STEPS];
        path[..m.path.len()].copy_from_slice(m.path);
        Move {
            from: m.from,
            len: m.path.len() as u8,
            path,
            // Bits past the path are left over from longer chains the generator walked.
            withdrawals: if m.is_capture() {
                m.withdrawals & ((1u64 << m.path.len()) - 1)
            } else {
                0
            },
            captured: m.captured,
        }
    }

    pub fn from(&self) -> u8 {
        self.from
    }

    pub fn to(&self) -> u8 {
        self.path[self.len as usize - 1]
    }

    pub fn path(&self) -> &[u8] {
        &self.path[..self.len as usize]
    }

    pub fn captured(&self) -> Bitboard {
        self.captured
    }

    pub fn is_capture(&self) -> bool {
        self.captured != 0
    }

    /// How step `i` captures, or `None` for a paika step.
    pub fn capture_kind(&self, i: usize) -> Option<Capture> {
        if !self.is_capture() {
            None
        } else if self.withdrawals & (1 << i) != 0 {
            Some(Capture::Withdrawal)
        } else {
            Some(Capture::Approach)
        }
    }

    /// The position after this move.
    pub fn apply(&self, pos: &Position) -> Position {
        pos.after(self.from, self.to(), self.captured)
    }

    /// The move in the paper's notation on `board`.
    pub fn notation(&self, board: Board) -> String {
        let mut s = String::with_capacity(3 * (self.len as usize + 1));
        self.push_notation(board, &mut s);
        s
    }

    /// Appends the move's notation on `board` to `out`.
    pub fn push_notation(&self, board: Board, out: &mut String) {
        board.push_point_name(self.from, out);
        for (i, &p) in self.path().iter().enumerate() {
            out.push('-');
            board.push_point_name(p, out);
            match self.capture_kind(i) {
                Some(Capture::Approach) => out.push('A'),
                Some(Capture::Withdrawal) => out.push('W'),
                None => {}
            }
        }
    }

    /// Parses `text` as a move of the side to move in `pos`, checking every rule.
    pub fn parse(pos: &Position, text: &str) -> Result<Move, MoveError> {
        parse_move(pos, text)
    }

    /// As `parse`, for a move a person typed: one written without its capture marks
    /// (`c1-b2` for `c1-b2A`) is taken when it is the only legal move that reads so. The
    /// error is `parse`'s otherwise (certificates and the checker keep to `parse`).
    pub fn parse_typed(pos: &Position, text: &str) -> Result<Move, MoveError> {
        let strict = parse_move(pos, text);
        let text = text.trim();
        if strict.is_ok() || text.contains(['A', 'W']) {
            return strict;
        }
        let board = pos.board();
        let unmarked = |m: &Move| m.notation(board).replace(['A', 'W'], "");
        let mut found = legal_moves(pos).into_iter().filter(|m| unmarked(m) == text);
        match (found.next(), found.next()) {
            (Some(m), None) => Ok(m),
            _ => strict,
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Move(from {} path {:?}", self.from, self.path())?;
        if self.is_capture() {
            write!(
                f,
                " withdrawals {:b} captured {:x}",
                self.withdrawals, self.captured
            )?;
        }
        write!(f, ")")
    }
}

/// Every legal move of the side to move, in generation order.
pub fn legal_moves(pos: &Position) -> Vec<Move> {
    let mut out = Vec::new();
    movegen::for_each_move(pos, |m| out.push(Move::from_ref(m)));
    out
}

/// Why a move's text was refused. Steps are counted from 1.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MoveError {
    #[error("empty move: expected a move such as 'b2-c2A-c3A' or 'b2-b1'")]
    Empty,
    #[error("malformed move '{0}': expected points joined by '-', such as 'b2-c2A-c3A'")]
    Syntax(String),
    #[error("move '{text}' has {steps} steps; no chain can have more than {MAX_STEPS}")]
    TooManySteps { text: String, steps: usize },
    #[error("step {step}: '{mark}' is not a capture mark: use A (approach) or W (withdrawal)")]
    BadMark { step: usize, mark: char },
    #[error("'{text}' is not a point of the {board} board")]
    BadPoint { text: String, board: Board },
    #[error("no piece on {point}")]
    NoPiece { point: String },
    #[error("the piece on {point} belongs to {owner}, but {} is to move", owner.opponent())]
    NotYourPiece { point: String, owner: Color },
    #[error("step {step}: {to} is not one step along a line from {from}")]
    NotAdjacent {
        step: usize,
        from: String,
        to: String,
    },
    #[error("step {step}: {from} is a weak point, so no diagonal line leads from it to {to}")]
    DiagonalFromWeak {
        step: usize,
        from: String,
        to: String,
    },
    #[error("step {step}: {to} is occupied")]
    Occupied { step: usize, to: String },
    #[error("capture is compulsory: a paika move is not allowed here (for example {example})")]
    CaptureCompulsory { example: String },
    #[error(
        "step {step}: a paika move is a single step; only capturing steps, marked A or W, can be chained"
    )]
    ChainedPaika { step: usize },
    #[error("step {step}: after a capture only capturing steps may follow; mark it A or W")]
    UnmarkedContinuation { step: usize },
    #[error("step {step}: nothing to approach: {beyond} does not hold an enemy piece")]
    NothingToApproach { step: usize, beyond: String },
    #[error("step {step}: nothing to withdraw from: {behind} does not hold an enemy piece")]
    NothingToWithdraw { step: usize, behind: String },
    #[error("step {step}: moves in the same direction as the step before it")]
    SameDirection { step: usize },
    #[error("step {step}: returns to {point}, already occupied during this move")]
    Revisit { step: usize, point: String },
}

/// A marked step of a typed move: the point it reaches and its capture mark (`A` or `W`).
type Step = (u8, Option<Capture>);

fn parse_move(pos: &Position, text: &str) -> Result<Move, MoveError> {
    let board = pos.board();
    let (from, steps) = read_steps(board, text)?;
    let fb = 1u64 << from;
    if pos.us() & fb == 0 {
        let name = board.point_name(from);
        return Err(if pos.them() & fb != 0 {
            MoveError::NotYourPiece {
                point: name,
                owner: pos.side_to_move().opponent(),
            }
        } else {
            MoveError::NoPiece { point: name }
        });
    }
    match steps[0] {
        (to, None) => paika_move(pos, from, to, steps.len()),
        _ => capturing_move(pos, from, &steps),
    }
}

/// The text of a move read as its starting point and its steps, nothing about the position
/// checked yet.
fn read_steps(board: Board, text: &str) -> Result<(u8, Vec<Step>), MoveError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(MoveError::Empty);
    }
    let tokens: Vec<&str> = text.split('-').collect();
    if tokens.len() < 2 {
        return Err(MoveError::Syntax(crate::geometry::clipped(text)));
    }
    if tokens.len() > MAX_STEPS + 1 {
        return Err(MoveError::TooManySteps {
            text: crate::geometry::clipped(text),
            steps: tokens.len() - 1,
        });
    }
    let point = |t: &str| {
        board.parse_point(t).ok_or(MoveError::BadPoint {
            text: crate::geometry::clipped(t),
            board,
        })
    };
    let from = point(tokens[0])?;
    let mut steps = Vec::with_capacity(tokens.len() - 1);
    for (i, t) in tokens[1..].iter().enumerate() {
        let (p, mark) = match t.strip_suffix('A') {
            Some(p) => (p, Some(Capture::Approach)),
            None => match t.strip_suffix('W') {
                Some(p) => (p, Some(Capture::Withdrawal)),
                None => (*t, None),
            },
        };
        // A point name ends in a digit; any other last letter is a wrong mark.
        if mark.is_none()
            && let Some(last) = t.chars().last().filter(|c| c.is_ascii_alphabetic())
            && board.parse_point(&t[..t.len() - 1]).is_some()
        {
            return Err(MoveError::BadMark {
                step: i + 1,
                mark: last,
            });
        }
        steps.push((point(p)?, mark));
    }
    Ok((from, steps))
}

/// The direction of step `step` from `cur` to `to`, which must be a line of the board.
fn step_direction(board: Board, cur: u8, to: u8, step: usize) -> Result<usize, MoveError> {
    let name = |p: u8| board.point_name(p);
    if let Some(d) = (0..8).find(|&d| board.geometry().neighbour(cur, d) == to) {
        return Ok(d);
    }
    let diagonal_exists = board.row_of(cur).abs_diff(board.row_of(to)) == 1
        && board.col_of(cur).abs_diff(board.col_of(to)) == 1;
    Err(if diagonal_exists && !board.is_strong(cur) {
        MoveError::DiagonalFromWeak {
            step,
            from: name(cur),
            to: name(to),
        }
    } else {
        MoveError::NotAdjacent {
            step,
            from: name(cur),
            to: name(to),
        }
    })
}

/// An unmarked first step: a paika move, one step to an empty point, when no capture is
/// possible.
fn paika_move(pos: &Position, from: u8, to: u8, steps: usize) -> Result<Move, MoveError> {
    let board = pos.board();
    step_direction(board, from, to, 1)?;
    if steps > 1 {
        return Err(MoveError::ChainedPaika { step: 2 });
    }
    if pos.empty() & (1 << to) == 0 {
        return Err(MoveError::Occupied {
            step: 1,
            to: board.point_name(to),
        });
    }
    if movegen::has_capture(pos) {
        let example = legal_moves(pos)
            .first()
            .map(|m| m.notation(board))
            .unwrap_or_default();
        return Err(MoveError::CaptureCompulsory { example });
    }
    let mut path = [0u8; MAX_STEPS];
    path[0] = to;
    Ok(Move {
        from,
        len: 1,
        path,
        withdrawals: 0,
        captured: 0,
    })
}

/// A capturing move: every step marked, each capturing the line of enemy pieces its mark
/// names, never in the direction of the step before nor back to a point the move visited.
fn capturing_move(pos: &Position, from: u8, steps: &[Step]) -> Result<Move, MoveError> {
    let board = pos.board();
    let g = board.geometry();
    let name = |p: u8| board.point_name(p);
    let mut empty = pos.empty();
    let mut enemy = pos.them();
    let mut captured = 0u64;
    let mut visited = 1u64 << from;
    let mut withdrawals = 0u64;
    let mut path = [0u8; MAX_STEPS];
    let mut cur = from;
    let mut last_dir = None;
    for (i, &(to, mark)) in steps.iter().enumerate() {
        let step = i + 1;
        let d = step_direction(board, cur, to, step)?;
        let Some(kind) = mark else {
            return Err(MoveError::UnmarkedContinuation { step });
        };
        if last_dir == Some(d) {
            return Err(MoveError::SameDirection { step });
        }
        if visited & (1 << to) != 0 {
            return Err(MoveError::Revisit {
                step,
                point: name(to),
            });
        }
        if empty & (1 << to) == 0 {
            return Err(MoveError::Occupied { step, to: name(to) });
        }
        let (first, line_dir) = match kind {
            Capture::Approach => (g.neighbour(to, d), d),
            Capture::Withdrawal => (g.neighbour(cur, d ^ 4), d ^ 4),
        };
        if first == NONE || enemy & (1 << first) == 0 {
            let where_ = if first == NONE {
                "the edge".to_string()
            } else {
                name(first)
            };
            return Err(match kind {
                Capture::Approach => MoveError::NothingToApproach {
                    step,
                    beyond: where_,
                },
                Capture::Withdrawal => MoveError::NothingToWithdraw {
                    step,
                    behind: where_,
                },
            });
        }
        let line_from = match kind {
            Capture::Approach => to,
            Capture::Withdrawal => cur,
        };
        let run = Geometry::leading_run(g.ray[line_from as usize][line_dir], line_dir, enemy);
        if kind == Capture::Withdrawal {
            withdrawals |= 1 << i;
        }
        captured |= run;
        enemy &= !run;
        empty = (empty | run | (1 << cur)) & !(1 << to);
        visited |= 1 << to;
        path[i] = to;
        cur = to;
        last_dir = Some(d);
    }
    Ok(Move {
        from,
        len: steps.len() as u8,
        path,
        withdrawals,
        captured,
    })
}

/// `show --json`: a position, its side to move and legal moves, and whether it is lost.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShownPosition {
    pub board: Board,
    pub position: Position,
    pub side_to_move: Color,
    /// In the paper's notation, in generation order.
    pub moves: Vec<String>,
    /// No legal move: the side to move has lost.
    pub lost: bool,
}

/// `moves --json`: a position's legal moves.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MoveList {
    pub board: Board,
    pub position: Position,
    pub moves: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_5x9_start_has_exactly_the_five_moves_of_the_rules() {
        let p = Position::initial(Board::STANDARD);
        let mut got: Vec<String> = legal_moves(&p)
            .iter()
            .map(|m| m.notation(p.board()))
            .collect();
        got.sort();
        assert_eq!(got, ["d2-e3A", "d3-e3A", "d3-e3W", "e2-e3A", "f2-e3A"]);
    }

    #[test]
    fn a_typed_move_may_leave_out_marks_only_one_move_could_have() {
        let p = Position::initial(Board::STANDARD);
        let name = |m: Result<Move, MoveError>| m.map(|m| m.notation(p.board()));
        // f2-e3 captures only by approach; d3-e3 either way, so it stays refused.
        assert_eq!(name(Move::parse_typed(&p, "f2-e3")), Ok("f2-e3A".into()));
        assert_eq!(name(Move::parse_typed(&p, " d2-e3 ")), Ok("d2-e3A".into()));
        assert!(Move::parse_typed(&p, "d3-e3").is_err());
        assert_eq!(
            Move::parse_typed(&p, "d3-e3").err(),
            Move::parse(&p, "d3-e3").err()
        );
        // The strict reading stays strict.
        assert!(Move::parse(&p, "f2-e3").is_err());
    }

    #[test]
    fn parse_errors_name_the_rule() {
        let start = Position::initial(Board::STANDARD);
        let cases: Vec<(&str, MoveError)> = vec![
            ("", MoveError::Empty),
            ("e3", MoveError::Syntax("e3".into())),
            (
                "z9-e3",
                MoveError::BadPoint {
                    text: "z9".into(),
                    board: Board::STANDARD,
                },
            ),
            ("e3-e2", MoveError::NoPiece { point: "e3".into() }),
            (
                "e4-e3",
                MoveError::NotYourPiece {
                    point: "e4".into(),
                    owner: Color::Black,
                },
            ),
            (
                "d2-d3",
                MoveError::Occupied {
                    step: 1,
                    to: "d3".into(),
                },
            ),
            (
                "d3-e3",
                MoveError::CaptureCompulsory {
                    example: legal_moves(&start)[0].notation(Board::STANDARD),
                },
            ),
            (
                "c2-e3A",
                MoveError::NotAdjacent {
                    step: 1,
                    from: "c2".into(),
                    to: "e3".into(),
                },
            ),
            (
                "e2-e3W",
                MoveError::NothingToWithdraw {
                    step: 1,
                    behind: "e1".into(),
                },
            ),
            ("e2-e3a", MoveError::BadMark { step: 1, mark: 'a' }),
        ];
        for (text, err) in cases {
            assert_eq!(Move::parse(&start, text), Err(err), "{text:?}");
        }
        let long = format!("e2{}", "-e3A-e4A".repeat(23));
        assert_eq!(
            Move::parse(&start, &long),
            Err(MoveError::TooManySteps {
                // Quoted by its start: a long move is not echoed back whole.
                text: crate::geometry::clipped(&long),
                steps: 46
            })
        );
    }
}
