//! Repetition: whether a position, with the same side to move, occurred earlier on a path.

use crate::position::Position;

/// splitmix64's finaliser: a fixed, well-mixed 64-bit hash step.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A 64-bit hash of a position, fixed for all time (it is part of keys kept on disk), mixed
/// well enough that the XOR of several stays a good hash of the set.
pub fn position_hash(pos: &Position) -> u64 {
    let tag = (pos.board().rows() as u64) << 8
        | (pos.board().cols() as u64) << 16
        | (pos.side_to_move() as u64 + 1);
    mix(mix(pos.white() ^ tag).wrapping_add(pos.black()) ^ 0x9E37_79B9_7F4A_7C15)
}

/// The order-free hash of the positions since the last capture up to and including `pos`,
/// given that hash for the position before it (`None` at the start of a game).
/// Only these positions can ever be repeated from `pos` on.
pub fn since_capture(before: Option<(&Position, u64)>, pos: &Position) -> u64 {
    match before {
        Some((prev, set)) if prev.piece_count() == pos.piece_count() => set ^ position_hash(pos),
        _ => position_hash(pos),
    }
}

/// `since_capture` over a whole path (oldest first): the hash for its last position.
pub fn since_capture_of(path: &[Position]) -> u64 {
    let Some(last) = path.last() else { return 0 };
    let pieces = last.piece_count();
    path.iter()
        .rev()
        .take_while(|p| p.piece_count() == pieces)
        .fold(0, |h, p| h ^ position_hash(p))
}

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
