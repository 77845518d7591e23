//! The proof-number solvers (PN, PN², df-pn) against a plain alpha-beta solver, on random positions of small
//! boards (rules only) and of 5x9 (over 3-piece tables).

use fanorona::egdb::Database;
use fanorona::search::Algorithm;
use fanorona::search::alphabeta::AlphaBeta;
use fanorona::search::dfpn::{self, DfPn};
use fanorona::search::pn;
use fanorona::search::proof::check;
use fanorona::search::solution::extract;
use fanorona::search::{Goal, Init, LeafEval, Limits, game_value};
use fanorona::{Board, Color, Position};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A random position of `board` with `white` and `black` pieces.
fn random_position(rng: &mut Rng, board: Board, white: u32, black: u32) -> Position {
    let (mut w, mut b) = (0u64, 0u64);
    while w.count_ones() < white {
        w |= 1 << rng.below(board.size() as u64);
    }
    while b.count_ones() < black {
        let p = 1 << rng.below(board.size() as u64);
        if w & p == 0 {
            b |= p;
        }
    }
    let side = if rng.below(2) == 0 {
        Color::White
    } else {
        Color::Black
    };
    Position::from_parts(board, w, b, side)
}

/// Compares PN and PN² with alpha-beta on `count` random positions; returns how many
/// alpha-beta solved within its budget.
fn cross_check(
    db: Option<&Database>,
    board: Board,
    pieces: (u32, u32),
    count: usize,
    seed: u64,
) -> usize {
    let mut rng = Rng(seed);
    let mut solved = 0;
    for _ in 0..count {
        let pos = random_position(&mut rng, board, pieces.0, pieces.1);
        if fanorona::movegen::is_lost(&pos) {
            continue;
        }
        let Some(expected) = AlphaBeta::new(db, 20_000).value(&pos) else {
            continue;
        };
        solved += 1;
        // The leaves' first numbers steer the search, never its answer.
        for init in [Init::Mobility, Init::Material] {
            let leaf = LeafEval::new(db).with_init(init);
            for level in [Algorithm::Pn, Algorithm::Pn2] {
                let s = game_value(&pos, |goal| {
                    pn::solve(&pos, goal, leaf, level, Limits::none(), |_| {})
                });
                assert_eq!(s.value, Some(expected), "{pos} {level:?} {init:?}");
            }
            let s = game_value(&pos, |goal| {
                dfpn::solve(&pos, goal, leaf, Limits::none(), 1 << 20, |_| {})
            });
            assert_eq!(s.value, Some(expected), "{pos} df-pn {init:?}");
        }
        // Every answer's solution tree (proofs, and disproofs with their repetition draws)
        // passes the independent check; df-pn with a tiny table too.
        for goal in [
            Goal {
                attacker: Color::White,
            },
            Goal {
                attacker: Color::Black,
            },
        ] {
            let (tree, _) = pn::search(
                &pos,
                goal,
                LeafEval::new(db),
                Algorithm::Pn,
                Limits::none(),
                |_| {},
            );
            check(&extract(&tree, LeafEval::new(db)).unwrap(), db).unwrap();
            let mut small = DfPn::new(goal, LeafEval::new(db), Limits::none(), 4096);
            small.search(&pos, |_| {});
            check(&small.solution(&pos).unwrap(), db).unwrap();
        }
    }
    solved
}

#[test]
fn proof_number_solvers_agree_with_alpha_beta_on_small_boards() {
    let solved = cross_check(None, "3x3".parse().unwrap(), (3, 3), 60, 1)
        + cross_check(None, "3x5".parse().unwrap(), (3, 2), 60, 2)
        + cross_check(None, "5x3".parse().unwrap(), (2, 3), 60, 3);
    eprintln!("alpha-beta solved {solved}");
    assert!(solved > 100, "{solved}");
}

#[test]
fn proof_number_solvers_agree_with_alpha_beta_over_tables() {
    let dir = crate::common::tables::built(Board::STANDARD, 3);
    let db = Database::new(dir.path(), Board::STANDARD);
    let solved = cross_check(Some(&db), Board::STANDARD, (2, 2), 80, 4)
        + cross_check(Some(&db), Board::STANDARD, (3, 1), 40, 5);
    eprintln!("alpha-beta solved {solved}");
    assert!(solved > 30, "{solved}");
}

/// A new df-pn node one piece beyond the tables whose side to move must capture is decided at
/// once from its children's table values (`DfPn::by_captures`): on random 4-piece 5x9
/// positions over 3-piece tables, the value must be the 4-piece table's, found without
/// searching the root (one node and at most one per move probed), and its solution tree must
/// hold the root as an inner node over table leaves.
#[test]
fn a_capture_into_the_tables_decides_a_node_as_the_next_table_says() {
    let three = crate::common::tables::built(Board::STANDARD, 3);
    let four = crate::common::tables::built(Board::STANDARD, 4);
    let (db3, db4) = (
        Database::new(three.path(), Board::STANDARD),
        Database::new(four.path(), Board::STANDARD),
    );
    let mut rng = Rng(11);
    let (mut decided, mut wins) = (0, 0);
    while decided < 60 {
        let (w, b) = [(2, 2), (3, 1), (1, 3)][rng.below(3) as usize];
        let pos = random_position(&mut rng, Board::STANDARD, w, b);
        if !fanorona::movegen::has_capture(&pos) {
            continue;
        }
        let expected = db4.probe(&pos).unwrap();
        let goal = Goal {
            attacker: pos.side_to_move(),
        };
        let mut d = DfPn::new(goal, LeafEval::new(Some(&db3)), Limits::none(), 1 << 12);
        // Decided as the root was created: no deepening step ran.
        let mut steps = 0;
        let e = d.search(&pos, |_| steps += 1);
        assert_eq!(steps, 0, "{pos}: searched in {steps} steps");
        assert_eq!(
            e.pn == 0,
            expected == fanorona::egdb::Wdl::Win,
            "{pos}: {e:?}, the tables say {expected:?}"
        );
        assert!(e.pn == 0 || e.dn == 0, "{pos}: {e:?}");
        let moves = fanorona::movegen::count_moves(&pos);
        assert!(d.stats.nodes <= 1 + moves, "{pos}: {} nodes", d.stats.nodes);
        let tree = d.solution(&pos).unwrap();
        check(&tree, Some(&db3)).unwrap();
        assert!(
            !tree.nodes[0].children.is_empty(),
            "{pos}: the root is a leaf"
        );
        decided += 1;
        wins += usize::from(e.pn == 0);
    }
    // Both kinds of answer were met.
    assert!(wins > 0 && wins < decided, "{wins} wins of {decided}");
}
