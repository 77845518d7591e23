//! Property tests: the parsers never panic, and printing then parsing gives back the value.

use fanorona::{Board, Move, Position, legal_moves};
use proptest::prelude::*;

/// A position on one of the supported boards, with random pieces.
fn any_position() -> impl Strategy<Value = Position> {
    (0usize..12, any::<u64>(), any::<u64>(), any::<bool>()).prop_map(|(b, w, k, side)| {
        let board = Board::all().nth(b).unwrap();
        let all = board.geometry().all;
        let white = w & all;
        let black = k & all & !white;
        let side = if side {
            fanorona::Color::White
        } else {
            fanorona::Color::Black
        };
        Position::from_parts(board, white, black, side)
    })
}

proptest! {
    #[test]
    fn position_parse_never_panics(s in "\\PC{0,80}") {
        let _ = s.parse::<Position>();
    }

    #[test]
    fn position_like_text_never_panics(s in "[WB./x ]{0,60}( [wbx])?") {
        if let Ok(p) = s.parse::<Position>() {
            prop_assert_eq!(p.to_string().parse::<Position>(), Ok(p));
        }
    }

    #[test]
    fn positions_round_trip(p in any_position()) {
        prop_assert_eq!(p.to_string().parse::<Position>(), Ok(p));
    }

    #[test]
    fn move_parse_never_panics(p in any_position(), s in "[a-k0-9AW-]{0,24}") {
        if let Ok(m) = Move::parse(&p, &s) {
            // Whatever parses is a legal move, and prints back to what it parsed.
            prop_assert!(legal_moves(&p).contains(&m), "{} parsed in {}", s, p);
            prop_assert_eq!(m.notation(p.board()), s.trim());
        }
    }

    #[test]
    fn arbitrary_move_text_never_panics(p in any_position(), s in "\\PC{0,40}") {
        let _ = Move::parse(&p, &s);
    }

    #[test]
    fn board_parse_never_panics(s in "\\PC{0,12}") {
        let _ = s.parse::<Board>();
    }
}
