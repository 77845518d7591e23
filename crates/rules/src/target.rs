//! What a solve, a session, a game or a probe starts from: a board's start (`RxC`, such as
//! `5x9`) or a position in the text format, read once here and checked to be a position a
//! game can be played on. The command line, the web app and the daemon all read targets
//! with `parse_target`, so they accept and refuse the same texts with the same words.

use thiserror::Error;

use crate::geometry::{Board, BoardError};
use crate::position::{Color, Position, PositionError};

/// Why a target's text was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TargetError {
    /// Text with rows or a side to move that is not a position.
    #[error("bad position: {0}")]
    Position(#[from] PositionError),
    /// Text without them that is not a supported board.
    #[error(transparent)]
    Board(#[from] BoardError),
    /// The side not to move has no pieces: the game ended before this move.
    #[error(
        "bad position {position}: {} has no pieces, so the game ended with {}'s win before this move",
        .waiting.name(),
        .waiting.opponent().name()
    )]
    Ended { position: Position, waiting: Color },
    /// No piece of either side: no game reaches it (the last capture leaves the taker's
    /// pieces), so it has no value to find.
    #[error("bad position {0}: the board is empty, a game needs pieces on it")]
    Empty(Position),
}

/// A board (RxC, its start) or a position that can be played on. Text with rows or a side
/// to move is read as a position, so a position typed without its slashes is named as one.
pub fn parse_target(text: &str) -> Result<Position, TargetError> {
    let text = text.trim();
    if text.contains('/') || text.contains(char::is_whitespace) {
        let pos = text.parse::<Position>()?;
        playable(&pos)?;
        Ok(pos)
    } else {
        Ok(Position::initial(text.parse::<Board>()?))
    }
}

/// Refuses `pos` if its side not to move has no pieces: the game ended when the other took
/// the last one. (The side to move without pieces is a lost position, which the searches
/// answer.)
pub fn playable(pos: &Position) -> Result<(), TargetError> {
    if pos.white() | pos.black() == 0 {
        return Err(TargetError::Empty(*pos));
    }
    let waiting = pos.side_to_move().opponent();
    if pos.pieces(waiting) == 0 && pos.pieces(pos.side_to_move()) != 0 {
        return Err(TargetError::Ended {
            position: *pos,
            waiting,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_positions_and_ended_games() {
        assert_eq!(
            parse_target(" 3x3 ").unwrap(),
            Position::initial("3x3".parse().unwrap())
        );
        assert!(matches!(parse_target("4x4"), Err(TargetError::Board(_))));
        assert!(matches!(
            parse_target("BBB/B.W/WWW"),
            Err(TargetError::Position(_))
        ));
        let ended = parse_target("BBB/.../... b").unwrap_err();
        assert_eq!(
            ended.to_string(),
            "bad position BBB/.../... b: white has no pieces, so the game ended with black's win before this move"
        );
        // The side to move without pieces has lost: a position the searches answer.
        assert!(parse_target("BBB/.../... w").is_ok());
        // No piece at all: no game gets there.
        assert!(matches!(
            parse_target(".../.../... w"),
            Err(TargetError::Empty(_))
        ));
    }
}
