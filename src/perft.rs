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

/// perft on `threads` threads, splitting the first-ply moves among them.
pub fn perft_parallel(pos: &Position, depth: u32, threads: usize) -> u64 {
    if depth <= 2 || threads <= 1 {
        return perft(pos, depth);
    }
    let mut children = Vec::new();
    for_each_child(pos, |c| children.push(c));
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut n = 0;
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(c) = children.get(i) else { break n };
                        n += perft(c, depth - 1);
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("perft worker panicked")).sum()
    })
}
