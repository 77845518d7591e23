//! A game in play: its start, the moves played, and how it ended. The rules' draws in play
//! (`docs/RULES.md`): a position repeated with the same side to move ends the game as a
//! draw; so does a move cap, if one is set.

use std::fmt;

use thiserror::Error;

use fanorona_rules::moves::{Move, MoveError, legal_moves};
use fanorona_rules::position::{Color, Position};

#[derive(Debug, Error)]
pub enum GameError {
    #[error("the game is over: {0}")]
    Over(End),
    #[error(transparent)]
    Move(#[from] MoveError),
    #[error("{notation} is not a legal move in {position}")]
    Illegal { notation: String, position: String },
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The loser had no legal move: every piece captured (`captured`), or none could move.
    NoMoves {
        winner: Color,
        captured: bool,
    },
    Resigned {
        winner: Color,
    },
    /// A position repeated with the same side to move.
    Repetition,
    /// The move cap was reached.
    MoveCap,
}

impl End {
    pub fn winner(self) -> Option<Color> {
        match self {
            End::NoMoves { winner, .. } | End::Resigned { winner } => Some(winner),
            End::Repetition | End::MoveCap => None,
        }
    }

    /// The record's result: `1-0`, `0-1` or `1/2-1/2`.
    pub fn result(self) -> &'static str {
        match self.winner() {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        }
    }

    /// The record's termination tag.
    pub fn termination(self) -> &'static str {
        match self {
            End::NoMoves { captured: true, .. } => "all captured",
            End::NoMoves { .. } => "no moves",
            End::Resigned { .. } => "resignation",
            End::Repetition => "repetition",
            End::MoveCap => "move cap",
        }
    }
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            End::NoMoves {
                winner,
                captured: true,
            } => write!(
                f,
                "{winner} wins ({} has no pieces left)",
                winner.opponent()
            ),
            End::NoMoves { winner, .. } => {
                write!(f, "{winner} wins ({} has no move)", winner.opponent())
            }
            End::Resigned { winner } => write!(f, "{winner} wins ({} resigned)", winner.opponent()),
            End::Repetition => f.write_str("draw by repetition"),
            End::MoveCap => f.write_str("draw: the move cap was reached"),
        }
    }
}

/// A game: the start, the moves, every position reached, and the end once there is one.
#[derive(Clone, Debug)]
pub struct Game {
    /// `positions[0]` is the start; `positions[i]` follows `moves[i - 1]`.
    positions: Vec<Position>,
    moves: Vec<Move>,
    /// Plies after which the game is drawn (`None`: no cap).
    pub max_plies: Option<usize>,
    resigned: Option<Color>,
}

impl Game {
    pub fn new(start: Position, max_plies: Option<usize>) -> Game {
        Game {
            positions: vec![start],
            moves: Vec::new(),
            max_plies,
            resigned: None,
        }
    }

    pub fn start(&self) -> &Position {
        &self.positions[0]
    }

    /// The position now.
    pub fn position(&self) -> &Position {
        self.positions.last().expect("a game has its start")
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Every position so far, the start first.
    pub fn positions(&self) -> &[Position] {
        &self.positions
    }

    pub fn plies(&self) -> usize {
        self.moves.len()
    }

    /// Whether `pos` already occurred in this game (with the same side to move). Captures
    /// cannot be undone, so only positions with as many pieces need comparing.
    pub fn occurred(&self, pos: &Position) -> bool {
        self.positions
            .iter()
            .rev()
            .take_while(|p| p.piece_count() == pos.piece_count())
            .any(|p| p == pos)
    }

    /// How the game ended, if it has.
    pub fn end(&self) -> Option<End> {
        if let Some(loser) = self.resigned {
            return Some(End::Resigned {
                winner: loser.opponent(),
            });
        }
        let pos = self.position();
        if fanorona_rules::movegen::is_lost(pos) {
            return Some(End::NoMoves {
                winner: pos.side_to_move().opponent(),
                captured: pos.us() == 0,
            });
        }
        let earlier = &self.positions[..self.positions.len() - 1];
        if earlier
            .iter()
            .rev()
            .take_while(|p| p.piece_count() == pos.piece_count())
            .any(|p| p == pos)
        {
            return Some(End::Repetition);
        }
        if self.max_plies.is_some_and(|cap| self.moves.len() >= cap) {
            return Some(End::MoveCap);
        }
        None
    }

    /// Plays `mv`, which must be one of the legal moves now.
    pub fn play(&mut self, mv: &Move) -> Result<(), GameError> {
        if let Some(end) = self.end() {
            return Err(GameError::Over(end));
        }
        let pos = *self.position();
        if !legal_moves(&pos).contains(mv) {
            return Err(GameError::Illegal {
                notation: mv.notation(pos.board()),
                position: pos.to_string(),
            });
        }
        self.positions.push(mv.apply(&pos));
        self.moves.push(*mv);
        Ok(())
    }

    /// Plays a move given in the paper's notation (its capture marks may be left out where
    /// only one legal move reads so: `Move::parse_typed`); returns it.
    pub fn play_text(&mut self, text: &str) -> Result<Move, GameError> {
        if let Some(end) = self.end() {
            return Err(GameError::Over(end));
        }
        let mv = Move::parse_typed(self.position(), text)?;
        self.play(&mv)?;
        Ok(mv)
    }

    /// Takes back the last move (and a resignation).
    pub fn undo(&mut self) -> Option<Move> {
        if self.resigned.take().is_some() {
            return None;
        }
        let mv = self.moves.pop()?;
        self.positions.pop();
        Some(mv)
    }

    /// The side to move gives up.
    pub fn resign(&mut self) {
        if self.end().is_none() {
            self.resigned = Some(self.position().side_to_move());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_position_draws_and_a_cap_ends_the_game() {
        // One piece each, far apart on 5x5, shuffling: paika moves only.
        let start: Position = "....B/...../...../...../W.... w".parse().unwrap();
        let mut g = Game::new(start, None);
        for m in ["a1-b1", "e5-d5", "b1-a1", "d5-e5"] {
            assert_eq!(g.end(), None, "{m}");
            g.play_text(m).unwrap();
        }
        assert_eq!(g.end(), Some(End::Repetition));
        assert!(matches!(g.play_text("a1-b1"), Err(GameError::Over(_))));
        g.undo();
        assert_eq!(g.end(), None);
        let mut capped = Game::new(start, Some(2));
        capped.play_text("a1-b1").unwrap();
        capped.play_text("e5-d5").unwrap();
        assert_eq!(capped.end(), Some(End::MoveCap));
        assert_eq!(End::MoveCap.result(), "1/2-1/2");
    }

    #[test]
    fn no_moves_loses_and_resigning_too() {
        let mut g = Game::new("BBB/B.W/WWW w".parse().unwrap(), None);
        g.resign();
        assert_eq!(
            g.end(),
            Some(End::Resigned {
                winner: Color::Black
            })
        );
        g.undo();
        assert_eq!(g.end(), None);
        let lost = Game::new("..B/.../... w".parse().unwrap(), None);
        assert_eq!(
            lost.end(),
            Some(End::NoMoves {
                winner: Color::Black,
                captured: true,
            })
        );
        assert_eq!(
            lost.end().unwrap().to_string(),
            "black wins (white has no pieces left)"
        );
    }
}
