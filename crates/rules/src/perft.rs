//! perft: the number of move sequences of exactly `depth` moves, counting every distinct
//! notated move (two moves that reach the same position are two sequences).

use crate::movegen::{count_moves, for_each_child, for_each_move};
use crate::moves::Move;
use crate::position::Position;

/// perft with bulk counting at the last ply.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => count_moves(pos),
        _ => {
            let mut n = 0;
            for_each_child(pos, |c| n += perft(&c, depth - 1));
            n
        }
    }
}

/// perft split by the first move, in generation order.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    assert!(depth >= 1, "divide needs a depth of at least 1");
    let mut out = Vec::new();
    for_each_move(pos, |m| {
        let m = Move::from_ref(m);
        out.push((m, perft(&m.apply(pos), depth - 1)));
    });
    out
}

/// perft on `threads` threads. The tree is opened breadth-first until there are many more
/// subtrees than threads (the few first moves differ a lot in size), then the threads take
/// subtrees from a shared counter.
pub fn perft_parallel(pos: &Position, depth: u32, threads: usize) -> u64 {
    if depth <= 2 || threads <= 1 {
        return perft(pos, depth);
    }
    let mut frontier = vec![*pos];
    let mut remaining = depth;
    while frontier.len() < threads * 64 && remaining > 2 {
        let mut next = Vec::new();
        for p in &frontier {
            for_each_child(p, |c| next.push(c));
        }
        frontier = next;
        remaining -= 1;
    }
    let cursor = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut n = 0;
                    loop {
                        let i = cursor.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(p) = frontier.get(i) else { break n };
                        n += perft(p, remaining);
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("perft worker panicked"))
            .sum()
    })
}

/// `perft --json`: the move sequences of a depth, and how fast they were counted.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PerftCount {
    pub board: crate::geometry::Board,
    pub position: Position,
    pub depth: u32,
    pub nodes: u64,
    pub seconds: f64,
    pub nodes_per_second: u64,
    /// With `--divide` only (the key is absent without it): the count under each move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divide: Option<Vec<MoveCount>>,
}

/// One move's share of a perft count.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MoveCount {
    #[serde(rename = "move")]
    pub mv: String,
    pub nodes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Board;

    #[test]
    fn parallel_perft_equals_serial_perft() {
        for board in ["5x9", "3x3", "7x5"] {
            let pos = Position::initial(board.parse::<Board>().unwrap());
            for depth in 0..=5 {
                assert_eq!(
                    perft_parallel(&pos, depth, 2),
                    perft(&pos, depth),
                    "{board} {depth}"
                );
            }
        }
    }

    #[test]
    fn divide_sums_to_perft() {
        let pos = Position::initial(Board::STANDARD);
        let parts = divide(&pos, 4);
        assert_eq!(parts.len(), 5);
        assert_eq!(parts.iter().map(|(_, n)| n).sum::<u64>(), 18026);
    }
}
