//! Repetition: whether a position, with the same side to move, occurred earlier on a path.

use crate::position::Position;

/// Whether `pos` occurred earlier on `path` (oldest first; `pos` itself not included).
/// Pieces are never added, so the scan stops at the first earlier position with more pieces:
/// nothing before a capture can repeat after it.
pub fn occurred_before(path: &[Position], pos: &Position) -> bool {
    let pieces = pos.piece_count();
    path.iter()
        .rev()
        .take_while(|p| p.piece_count() == pieces)
        .any(|p| p == pos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moves::Move;

    #[test]
    fn a_shuffle_repeats_and_a_capture_cuts_the_history() {
        // Two lone pieces far apart: only paika moves, so shuffling repeats.
        let start: Position = "B..../...../...../...../....W w".parse().unwrap();
        let mut path = vec![start];
        for m in ["e1-e2", "a5-a4", "e2-e1", "a4-a5"] {
            let next = Move::parse(path.last().unwrap(), m)
                .unwrap()
                .apply(path.last().unwrap());
            assert_eq!(occurred_before(&path, &next), m == "a4-a5", "after {m}");
            path.push(next);
        }
        // Same pieces, other side to move: not a repetition.
        assert!(!occurred_before(
            &path[..1],
            &start.with_side(crate::Color::Black)
        ));
        // An earlier position with more pieces ends the scan.
        let more: Position = "BB.../...../...../...../....W w".parse().unwrap();
        assert!(!occurred_before(&[start, more], &start));
    }
}
