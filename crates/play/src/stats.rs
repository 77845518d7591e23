//! The game measured as the paper's Section 3 measured it: games between two alpha-beta
//! players searching 4 plies over material with a random factor; the average game length
//! and branching factor; how often the side to move must capture, and the branching factor,
//! by pieces on the board (Figures 4 and 5); and the same averages with a "virtual
//! database" of k pieces, where a game ends as soon as k or fewer pieces are left (Table 1).

use std::sync::atomic::AtomicBool;

use crate::agent::Agent;
use crate::alphabeta::{AlphaBeta, Settings};
use crate::game::Game;
use fanorona_rules::movegen::{count_moves, has_capture};
use fanorona_rules::position::Position;

/// How the games are played.
#[derive(Clone, Copy, Debug)]
pub struct StatsSpec {
    pub start: Position,
    pub games: usize,
    pub depth: u32,
    pub noise: f64,
    pub threads: usize,
    pub seed: u64,
    pub max_plies: usize,
}

/// One position a game passed through (where a move was made).
#[derive(Clone, Copy, Debug)]
struct Visit {
    pieces: u32,
    moves: u64,
    capture: bool,
}

/// Counts by pieces on the board.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PiecesRow {
    pub pieces: u32,
    /// Positions met with this many pieces.
    pub positions: u64,
    /// Of which the side to move had to capture.
    pub capture_positions: u64,
    /// Legal moves summed over them.
    pub moves: u64,
}

/// The averages with a virtual database of `k` pieces (`k` 0: none).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CutRow {
    #[serde(rename = "pieces")]
    pub k: u32,
    pub mean_length: f64,
    pub mean_branching: f64,
    /// Games that reached k pieces (so the database would have ended them).
    pub games_cut: usize,
}

#[derive(Clone, Debug, Default)]
pub struct GameStats {
    pub games: usize,
    /// Games drawn by repetition or the cap.
    pub draws: usize,
    pub by_pieces: Vec<PiecesRow>,
    /// k = 0 (no database), then 2 to 10 pieces.
    pub cuts: Vec<CutRow>,
}

fn play_one(spec: &StatsSpec, index: usize) -> (Vec<Visit>, bool) {
    let make = |who: u64| {
        AlphaBeta::new(
            Settings {
                depth: spec.depth,
                time: None,
                prune: true,
                noise: spec.noise,
                material_only: true,
            },
            spec.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (index as u64) << 1 ^ who,
        )
    };
    let (mut white, mut black) = (make(0), make(1));
    let mut game = Game::new(spec.start, Some(spec.max_plies));
    let mut visits = Vec::new();
    while game.end().is_none() {
        let pos = *game.position();
        visits.push(Visit {
            pieces: pos.piece_count(),
            moves: count_moves(&pos),
            capture: has_capture(&pos),
        });
        let agent: &mut dyn Agent = match pos.side_to_move() {
            fanorona_rules::Color::White => &mut white,
            fanorona_rules::Color::Black => &mut black,
        };
        let mv = agent.choose(&game).mv;
        game.play(&mv).expect("the player chooses a legal move");
    }
    let drawn = game.end().and_then(|e| e.winner()).is_none();
    (visits, drawn)
}

/// Plays the games on `spec.threads` threads; `progress` sees each finished game. Once
/// `stop` is set no game starts, and the statistics are those of the games finished.
pub fn measure(spec: &StatsSpec, progress: &(dyn Fn() + Sync), stop: &AtomicBool) -> GameStats {
    let games = crate::pool::run_numbered(
        spec.games,
        spec.threads,
        |i| play_one(spec, i),
        &|_| progress(),
        stop,
    );
    let max_pieces = spec.start.piece_count();
    let mut by_pieces: Vec<PiecesRow> = (0..=max_pieces)
        .map(|p| PiecesRow {
            pieces: p,
            ..PiecesRow::default()
        })
        .collect();
    for (visits, _) in &games {
        for v in visits {
            let row = &mut by_pieces[v.pieces as usize];
            row.positions += 1;
            row.moves += v.moves;
            row.capture_positions += u64::from(v.capture);
        }
    }
    by_pieces.retain(|r| r.positions > 0);
    // Databases of 2 to 10 pieces, as the paper's Table 1, but none that holds the start
    // (on a small board it would end every game before it began).
    let cuts = std::iter::once(0)
        .chain(2..=10.min(max_pieces.saturating_sub(1)))
        .map(|k| {
            let (mut plies, mut moves, mut positions, mut cut) = (0u64, 0u64, 0u64, 0);
            for (visits, _) in &games {
                // A k-piece database ends the game at the first position with k or fewer.
                let end = visits
                    .iter()
                    .position(|v| k > 0 && v.pieces <= k)
                    .unwrap_or(visits.len());
                if end < visits.len() {
                    cut += 1;
                }
                plies += end as u64;
                positions += end as u64;
                moves += visits[..end].iter().map(|v| v.moves).sum::<u64>();
            }
            CutRow {
                k,
                mean_length: plies as f64 / games.len().max(1) as f64,
                mean_branching: moves as f64 / positions.max(1) as f64,
                games_cut: cut,
            }
        })
        .collect();
    GameStats {
        games: games.len(),
        draws: games.iter().filter(|(_, d)| *d).count(),
        by_pieces,
        cuts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measures_add_up() {
        let spec = StatsSpec {
            start: Position::initial("5x5".parse().unwrap()),
            games: 6,
            depth: 2,
            noise: 0.05,
            threads: 2,
            seed: 3,
            max_plies: 200,
        };
        let s = measure(&spec, &|| {}, &AtomicBool::new(false));
        assert_eq!(s.games, 6);
        let none = s.cuts[0];
        assert_eq!(none.k, 0);
        let positions: u64 = s.by_pieces.iter().map(|r| r.positions).sum();
        assert!((none.mean_length * 6.0 - positions as f64).abs() < 1e-9);
        let moves: u64 = s.by_pieces.iter().map(|r| r.moves).sum();
        assert!((none.mean_branching - moves as f64 / positions as f64).abs() < 1e-9);
        // A database only shortens games, the more pieces it holds the more.
        assert!(
            s.cuts
                .windows(2)
                .skip(1)
                .all(|w| w[0].mean_length >= w[1].mean_length)
        );
        assert!(s.cuts.iter().all(|c| c.mean_length <= none.mean_length));
        // Every game starts with the full board, where the side to move must capture.
        let full = s.by_pieces.last().unwrap();
        assert_eq!((full.pieces, full.capture_positions), (24, 6));
        // On 3x3 (8 pieces) the databases stop at 7.
        let small = StatsSpec {
            start: Position::initial("3x3".parse().unwrap()),
            games: 2,
            ..spec
        };
        let ks: Vec<u32> = measure(&small, &|| {}, &AtomicBool::new(false))
            .cuts
            .iter()
            .map(|c| c.k)
            .collect();
        assert_eq!(ks, [0, 2, 3, 4, 5, 6, 7]);
    }
}
