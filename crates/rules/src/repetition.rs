//! Repetition: whether a position, with the same side to move, occurred earlier on a path.

use crate::position::Position;

/// splitmix64's finaliser: a fixed, well-mixed 64-bit hash step.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A 64-bit hash of a position, fixed for all time (it is part of keys kept on disk: the
/// rote store's and the first-level trees' sets since the last capture).
///
/// Flawed: the side to move (1 or 2) lands on the white bitboard's two lowest points, so a
/// position with White to move and a White piece on the first point, the second empty, hashes
/// as the one after that piece steps to the second point; the XOR of a set then loses both.
/// Searches that keep nothing on disk use `position_key`; the stores keep this one until
/// they are migrated.
pub fn position_hash(pos: &Position) -> u64 {
    mix(mix(pos.white() ^ tag(pos)).wrapping_add(pos.black()) ^ 0x9E37_79B9_7F4A_7C15)
}

/// The board's size and the side to move, as hashes mix them in.
fn tag(pos: &Position) -> u64 {
    (pos.board().rows() as u64) << 8
        | (pos.board().cols() as u64) << 16
        | (pos.side_to_move() as u64 + 1)
}

/// The order-free hash of the positions since the last capture up to and including `pos`,
/// given that hash for the position before it (`None` at the start of a game).
/// Only these positions can ever be repeated from `pos` on.
pub fn since_capture(before: Option<(&Position, u64)>, pos: &Position) -> u64 {
    set_after(before, pos, position_hash)
}

/// The set hash after `pos`, each position hashed by `hash`: the set before it plus `pos`,
/// or `pos` alone after a capture (or at the start).
fn set_after(before: Option<(&Position, u64)>, pos: &Position, hash: fn(&Position) -> u64) -> u64 {
    match before {
        Some((prev, set)) if prev.piece_count() == pos.piece_count() => set ^ hash(pos),
        _ => hash(pos),
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

/// A 64-bit hash of a position with the side to move and the board kept apart from the
/// pieces (each bitboard mixed before the next part joins), so distinct positions collide
/// only by chance and the XOR of several stays a good hash of the set.
pub fn position_key(pos: &Position) -> u64 {
    mix(mix(mix(pos.white()) ^ tag(pos)).wrapping_add(pos.black()) ^ 0x9E37_79B9_7F4A_7C15)
}

/// `since_capture` with `position_key`: the set hash of searches that keep nothing on disk.
pub fn since_capture_key(before: Option<(&Position, u64)>, pos: &Position) -> u64 {
    set_after(before, pos, position_key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moves::Move;

    /// White to move with a piece on the first point, and the position after it steps to the
    /// second (Black to move).
    fn step_pair() -> (Position, Position) {
        let x: Position = "B..../...../...../...../W...W w".parse().unwrap();
        let y = Move::parse(&x, "a1-b1").unwrap().apply(&x);
        (x, y)
    }

    #[test]
    fn the_stored_hash_merges_a_step_from_the_first_point_and_the_key_does_not() {
        let (x, y) = step_pair();
        assert_ne!(x, y);
        // The flaw `position_hash` keeps for the stores' sake.
        assert_eq!(position_hash(&x), position_hash(&y));
        assert_ne!(position_key(&x), position_key(&y));
        // A set holding both is not the empty set.
        let set = since_capture_key(Some((&x, since_capture_key(None, &x))), &y);
        assert_ne!(set, 0);
    }

    #[test]
    fn every_position_of_two_pieces_on_3x3_has_its_own_key() {
        let mut seen = std::collections::HashSet::new();
        let mut count = 0;
        for w in 0..9 {
            for b in 0..9 {
                if w == b {
                    continue;
                }
                for side in ["w", "b"] {
                    let mut cells = ['.'; 9];
                    cells[w] = 'W';
                    cells[b] = 'B';
                    let rows: Vec<String> = cells.chunks(3).map(|r| r.iter().collect()).collect();
                    let pos: Position = format!("{} {side}", rows.join("/")).parse().unwrap();
                    assert!(seen.insert(position_key(&pos)), "{pos}");
                    count += 1;
                }
            }
        }
        assert_eq!(count, 144);
    }

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
