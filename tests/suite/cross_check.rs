//! The fast generator against the separately written simple model (tests/common), on the
//! reference positions, random positions of every board and random games; and every
//! generated move printed, re-parsed and replayed.

use crate::common;

use common::simple_rules::Grid;
use fanorona::movegen::{count_moves, count_moves_and_capturers, successors};
use fanorona::perft::perft;
use fanorona::{Board, Move, Position, legal_moves};

/// A small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random position: each point empty, White or Black with random densities.
fn random_position(rng: &mut Rng, board: Board) -> Position {
    let fill = 20 + rng.below(70);
    let white_share = 20 + rng.below(60);
    let mut text = String::new();
    for row in 0..board.rows() {
        if row > 0 {
            text.push('/');
        }
        for _ in 0..board.cols() {
            text.push(if rng.below(100) >= fill {
                '.'
            } else if rng.below(100) < white_share {
                'W'
            } else {
                'B'
            });
        }
    }
    text.push_str(if rng.below(2) == 0 { " w" } else { " b" });
    text.parse().unwrap()
}

/// Compares the two generators' moves (notation and the position each leads to).
fn check_moves(pos: &Position) {
    let b = pos.board();
    let mut fast: Vec<(String, String)> = legal_moves(pos)
        .iter()
        .map(|m| (m.notation(b), m.apply(pos).to_string()))
        .collect();
    let mut simple: Vec<(String, String)> = Grid::parse(&pos.to_string())
        .moves()
        .into_iter()
        .map(|(n, g)| (n, g.text()))
        .collect();
    fast.sort();
    simple.sort();
    assert_eq!(fast, simple, "moves of {pos}");
    assert_eq!(count_moves(pos), fast.len() as u64, "count of {pos}");
    // The pieces that capture: the starts of the capturing moves.
    let capturers = legal_moves(pos)
        .iter()
        .filter(|m| m.is_capture())
        .fold(0, |set, m| set | 1u64 << m.from());
    assert_eq!(
        count_moves_and_capturers(pos),
        (fast.len() as u64, capturers),
        "capturers of {pos}"
    );
    let mut children: Vec<String> = simple.iter().map(|(_, p)| p.clone()).collect();
    children.sort();
    children.dedup();
    let mut dedup: Vec<String> = successors(pos).iter().map(|p| p.to_string()).collect();
    dedup.sort();
    assert_eq!(dedup, children, "successors of {pos}");
}

/// Every generated move prints, re-parses to the same move, and is legal.
fn check_round_trip(pos: &Position) {
    for m in legal_moves(pos) {
        let text = m.notation(pos.board());
        assert_eq!(Move::parse(pos, &text), Ok(m), "{text} in {pos}");
    }
}

#[test]
fn random_positions_of_every_board_agree() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut captures = 0;
    for board in Board::all() {
        for _ in 0..400 {
            let pos = random_position(&mut rng, board);
            check_moves(&pos);
            check_round_trip(&pos);
            if fanorona::movegen::has_capture(&pos) {
                captures += 1;
            }
        }
    }
    // The sample must exercise captures as well as paika.
    assert!(captures > 1000, "{captures}");
}

#[test]
fn random_games_of_every_board_agree() {
    let mut rng = Rng(12345);
    for board in Board::all() {
        for _ in 0..30 {
            let mut pos = Position::initial(board);
            for _ in 0..200 {
                check_moves(&pos);
                check_round_trip(&pos);
                let moves = legal_moves(&pos);
                if moves.is_empty() {
                    break;
                }
                pos = moves[rng.below(moves.len() as u64) as usize].apply(&pos);
            }
        }
    }
}

#[test]
fn perft_agrees_with_the_simple_model_on_every_start() {
    for board in Board::all() {
        let pos = Position::initial(board);
        let grid = Grid::parse(&pos.to_string());
        for depth in 1..=4 {
            assert_eq!(
                perft(&pos, depth),
                grid.perft(depth),
                "{board} depth {depth}"
            );
        }
    }
}
