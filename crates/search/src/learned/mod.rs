//! A learned value model for positions above the endgame tables: trained on positions the
//! tables value, it gives the search's open leaves their first proof and disproof numbers
//! (`Init::Learned`).

pub mod features;
pub mod model;
pub mod train;

pub use model::{Model, WeightsError};

use std::sync::OnceLock;

use fanorona_rules::{Board, Position};

/// The weights made by `fanorona learn` on the 5x9 tables to 9 pieces, kept in the source so
/// that a machine without the tables has them (docs/journal/learned-guide.md says how).
const WEIGHTS_5X9: &[u8] = include_bytes!("../../weights/5x9.fnlw");

/// The model the search uses on `board`: the 5x9 weights, read for 5x9 or 9x5; `None` on
/// other boards (`Init::Learned` is refused there before a search starts).
pub fn builtin(board: Board) -> Option<&'static Model> {
    static BY_ORIENTATION: [OnceLock<Model>; 2] = [OnceLock::new(), OnceLock::new()];
    let rows_first = match (board.rows(), board.cols()) {
        (5, 9) => 0,
        (9, 5) => 1,
        _ => return None,
    };
    Some(BY_ORIENTATION[rows_first].get_or_init(|| {
        Model::from_bytes("the built-in 5x9 weights", WEIGHTS_5X9)
            .ok()
            .and_then(|m| m.for_board(board))
            .expect("the built-in weights are checked by a test")
    }))
}

/// Why `Init::Learned` cannot be used on `board`, if it cannot.
pub fn unavailable(board: Board) -> Option<String> {
    builtin(board).is_none().then(|| {
        format!(
            "first numbers \"learned\" have weights for 5x9 and 9x5 only, not {board}; use \"material\" (or make weights with `{}`)",
            model::LEARN_COMMAND
        )
    })
}

/// How sharply the model's odds scale the numbers: (1 - p) / p to this power.
const SHARPNESS: i32 = 4;
/// The most the number that says the attacker must win is multiplied by.
const PROOF_CAP: f32 = 4.0;
/// The most the number that says the attacker must not win is multiplied by.
const DISPROOF_CAP: f32 = 16.0;

/// The first (pn, dn) from the model, given the numbers it refines (`material`'s, in the
/// search): the number that says the attacker must win is multiplied by ((1 - p) / p)^4, p
/// the model's chance that the attacker wins, at most 4, and the number that says it must
/// not by (p / (1 - p))^4, at most 16, each only where that is above 1, so the numbers never
/// fall below those given (dividing them as well spent twice the nodes of `material` on the
/// f2-e3A question). The power and the caps were chosen on four closed questions among
/// powers 0.5 to 4 and caps 1 to 64 (docs/journal/learned-guide.md): a high power makes the
/// factor nearly a verdict (the full cap on one side of p = 1/2, nothing on the other); a
/// proof number's cap of 16 flattened the order among the many positions the model
/// thinks lost.
/// `moves` and `capturers`: the side to move's move count and capturing pieces
/// (`count_moves_and_capturers`).
#[inline]
pub fn numbers(
    model: &Model,
    pos: &Position,
    (moves, capturers): (u64, u64),
    attacker_moves: bool,
    (pn, dn): (u64, u64),
) -> (u64, u64) {
    let [win, _, loss] = model.predict_counted(pos, moves, capturers);
    let p = if attacker_moves { win } else { loss };
    // A chance that is not a number (weights that overflow) would make both factors 0, and a
    // proof number of 0 is a proof: it gives material's numbers instead.
    let p = if p.is_finite() { p } else { 0.5 }.clamp(1e-4, 1.0 - 1e-4);
    // In sixteenths, 16 (1) to 16 * cap.
    let up = |odds: f32, cap: f32| (odds.powi(SHARPNESS) * 16.0).clamp(16.0, 16.0 * cap) as u64;
    let (a, b) = (
        up((1.0 - p) / p, PROOF_CAP),
        up(p / (1.0 - p), DISPROOF_CAP),
    );
    ((pn * a + 8) / 16, (dn * b + 8) / 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_that_overflow_give_materials_numbers_never_zero() {
        let board: Board = "5x9".parse().unwrap();
        let m = builtin(board).unwrap();
        let huge = Model::new(board, 0, 0, vec![1e30; m.w1.len()], vec![1e30; m.w2.len()]);
        let pos = Position::initial(board);
        let counted = fanorona_rules::movegen::count_moves_and_capturers(&pos);
        assert!(huge.predict(&pos, counted.0).iter().any(|p| !p.is_finite()));
        for attacker_moves in [true, false] {
            assert_eq!(
                numbers(&huge, &pos, counted, attacker_moves, (3, 5)),
                (3, 5)
            );
        }
    }

    #[test]
    fn the_built_in_weights_load_for_both_orientations_only() {
        let m = builtin("5x9".parse().unwrap()).expect("5x9 weights");
        assert_eq!(m.board, "5x9".parse().unwrap());
        assert!(builtin("9x5".parse().unwrap()).is_some());
        assert!(builtin("5x5".parse().unwrap()).is_none());
        assert!(unavailable("7x5".parse().unwrap()).unwrap().contains("7x5"));
    }

    #[test]
    fn numbers_stay_positive_and_favour_the_likely_winner() {
        let board: Board = "5x9".parse().unwrap();
        let m = builtin(board).unwrap();
        // White to move with 6 pieces against 2: White should be likely to win.
        let pos: Position = ".........\n.........\n..W.W.W..\n...B.B...\nW.W.W.... w"
            .replace('\n', "/")
            .parse()
            .unwrap();
        let counted = fanorona_rules::movegen::count_moves_and_capturers(&pos);
        let moves = counted.0;
        let (pn, dn) = numbers(m, &pos, counted, true, (1, moves));
        assert!(pn >= 1 && dn >= 1);
        let (pn_b, dn_b) = numbers(m, &pos, counted, false, (moves, 1));
        assert!(
            pn <= pn_b && dn >= dn_b,
            "White's win looks likelier than Black's: {pn},{dn} against {pn_b},{dn_b}"
        );
    }
}
