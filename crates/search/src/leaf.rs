//! Leaves: what a solver knows about a position without searching it: the end of the game
//! (a side with no pieces or no move has lost) and the endgame tables.

use serde::{Deserialize, Serialize};

use crate::{Goal, Stats};
use fanorona_rules::movegen::{count_moves_and_capturers, is_lost};
use fanorona_rules::position::Position;
use fanorona_tables::{Database, Wdl};

/// A leaf's verdict for a goal.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Leaf {
    /// The attacker wins from here.
    Proven,
    /// The attacker does not win from here.
    Disproven,
    /// Not known without searching.
    Open,
}

/// Material's weight: a lead of every piece on the board multiplies a number by 1 + this.
const MATERIAL_WEIGHT: i64 = 24;

/// How an open leaf's first proof and disproof numbers are set.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Init {
    /// From the side to move's mobility (Allis): at an OR node pn 1 and dn the number of
    /// moves, the reverse at an AND node.
    #[default]
    Mobility,
    /// Mobility weighted by material, after Winands and Schadd's evaluation-function based
    /// PN search (EF-PN, 2010): the number that says the side behind in pieces must win is
    /// multiplied by 1 + 24 * lead / pieces, so a lead of one piece in 8 quadruples it and
    /// one in 44 adds half. (24 was the best of 8, 16, 24 and 32 on the 5x9 start's "Black
    /// wins?"; docs/journal/5x9.md, "First numbers from material".)
    Material,
    /// Material's numbers scaled by the value model trained on the tables (`fanorona learn`,
    /// weights built in for 5x9 and 9x5): the number that says a side the model thinks
    /// unlikely to win must win is multiplied by up to 4, the one that says a side it thinks
    /// likely to win must not by up to 16 (`learned::numbers`). On mobility's numbers
    /// instead it spent 9.2 times material's nodes on the 5x9 start's "White wins?"
    /// (docs/journal/learned-guide.md).
    Learned,
}

impl Init {
    /// Why these first numbers cannot be used on `board`, if they cannot (learned ones
    /// where no weights are built in). Every way a search starts asks this first, so that
    /// `LeafEval::initial` never meets a board it has no numbers for.
    pub fn refused_on(self, board: fanorona_rules::Board) -> Option<String> {
        match self {
            Init::Learned => crate::learned::unavailable(board),
            Init::Mobility | Init::Material => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Init::Mobility => "mobility",
            Init::Material => "material",
            Init::Learned => "learned",
        }
    }
}

impl std::str::FromStr for Init {
    type Err = String;

    /// "mobility", "material" or "learned" (the command line's and the config's words).
    fn from_str(s: &str) -> Result<Init, String> {
        [Init::Mobility, Init::Material, Init::Learned]
            .into_iter()
            .find(|i| i.name() == s)
            .ok_or_else(|| format!("'{s}' is not \"mobility\", \"material\" or \"learned\""))
    }
}

/// Decides leaves from the rules' terminal positions and, if given, the endgame tables, and
/// sets the first numbers of the others.
#[derive(Clone, Copy)]
pub struct LeafEval<'a> {
    pub db: Option<&'a Database>,
    pub init: Init,
    /// The model of `Init::Learned` when not the built-in one (`solve --weights`): made for
    /// the board searched.
    pub model: Option<&'a crate::learned::Model>,
}

/// Mobility's (pn, dn) weighted by the material lead (`Init::Material`): 1 + 24 * lead /
/// pieces, in sixteenths, on the number that says the side behind must win.
fn by_material(pos: &Position, goal: Goal, (pn, dn): (u64, u64)) -> (u64, u64) {
    let attacker = pos.pieces(goal.attacker).count_ones() as i64;
    let defender = pos.pieces(goal.attacker.opponent()).count_ones() as i64;
    let lead = attacker - defender;
    let weight = |x: i64| -> u64 {
        let total = (attacker + defender).max(1);
        (16 + 16 * MATERIAL_WEIGHT * x.max(0) / total) as u64
    };
    // Rounded, at least 1: the numbers stay on mobility's scale, so a tree that changes its
    // init keeps numbers that compare.
    let scale = |n: u64, w: u64| ((n * w + 8) / 16).max(1);
    (scale(pn, weight(-lead)), scale(dn, weight(lead)))
}

impl<'a> LeafEval<'a> {
    /// Leaves from the rules alone (the smallest boards need nothing more).
    pub fn rules_only() -> LeafEval<'static> {
        LeafEval::new(None)
    }

    pub fn with_db(db: &'a Database) -> LeafEval<'a> {
        LeafEval::new(Some(db))
    }

    /// Leaves from the rules and the tables if given, first numbers from mobility.
    pub fn new(db: Option<&'a Database>) -> LeafEval<'a> {
        LeafEval {
            db,
            init: Init::Mobility,
            model: None,
        }
    }

    pub fn with_init(self, init: Init) -> LeafEval<'a> {
        LeafEval { init, ..self }
    }

    /// First numbers by `init`; where they are learned, from `model` (read for the board
    /// searched) when given, not the built-in weights. A model beside another init is not
    /// used.
    pub fn with_first_numbers(
        self,
        init: Init,
        model: Option<&'a crate::learned::Model>,
    ) -> LeafEval<'a> {
        LeafEval {
            init,
            model: model.filter(|_| init == Init::Learned),
            ..self
        }
    }

    /// The first (pn, dn) of an open leaf. Mobility: a side with many moves is harder to
    /// beat; at an OR node one good move proves it (pn 1) but every move must fail to
    /// disprove it (dn = moves).
    pub fn initial(&self, pos: &Position, goal: Goal) -> (u64, u64) {
        let (moves, capturers) = count_moves_and_capturers(pos);
        let moves = moves.clamp(1, 1000);
        let (pn, dn) = if pos.side_to_move() == goal.attacker {
            (1, moves)
        } else {
            (moves, 1)
        };
        match self.init {
            Init::Mobility => (pn, dn),
            Init::Material => by_material(pos, goal, (pn, dn)),
            // Refused before a search starts on a board without weights
            // (`Init::refused_on`): mobility's numbers here would be a silent change.
            Init::Learned => match self.model.or_else(|| crate::learned::builtin(pos.board())) {
                Some(model) => crate::learned::numbers(
                    model,
                    pos,
                    (moves, capturers),
                    pos.side_to_move() == goal.attacker,
                    by_material(pos, goal, (pn, dn)),
                ),
                None => panic!("{}", self.init.refused_on(pos.board()).unwrap_or_default()),
            },
        }
    }

    /// What the tables say of `pos` for `goal`: `Some(true)` proven, `Some(false)`
    /// disproven (a draw disproves either side's win), `None` where they do not answer.
    #[inline]
    pub fn from_tables(&self, pos: &Position, goal: Goal) -> Option<bool> {
        let v = self.db?.probe(pos)?;
        let mover_is_attacker = pos.side_to_move() == goal.attacker;
        Some(matches!(
            (v, mover_is_attacker),
            (Wdl::Win, true) | (Wdl::Loss, false)
        ))
    }

    /// The verdict on `pos` for `goal`.
    pub fn eval(&self, pos: &Position, goal: Goal, stats: &mut Stats) -> Leaf {
        if let Some(proven) = self.from_tables(pos, goal) {
            stats.db_hits += 1;
            return if proven {
                Leaf::Proven
            } else {
                Leaf::Disproven
            };
        }
        let mover_is_attacker = pos.side_to_move() == goal.attacker;
        if is_lost(pos) {
            return if mover_is_attacker {
                Leaf::Disproven
            } else {
                Leaf::Proven
            };
        }
        Leaf::Open
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fanorona_rules::position::Color;

    fn goal(attacker: Color) -> Goal {
        Goal { attacker }
    }

    #[test]
    fn material_weighs_mobility_by_the_lead() {
        let leaf = LeafEval::rules_only();
        let material = leaf.with_init(Init::Material);
        // Four pieces each: material changes nothing.
        let even: Position = "BBB/B.W/WWW w".parse().unwrap();
        for c in [Color::White, Color::Black] {
            assert_eq!(
                material.initial(&even, goal(c)),
                leaf.initial(&even, goal(c))
            );
        }
        // White (to move) leads 4 to 3: White's win gets a larger disproof number, Black's a
        // larger proof number, each by 1 + 24 * 1/7 (in sixteenths: 70/16).
        let lead: Position = "BB./B.W/WWW w".parse().unwrap();
        let moves = fanorona_rules::movegen::count_moves(&lead);
        assert!(moves > 1);
        let scaled = (moves * 70 + 8) / 16;
        assert_eq!(leaf.initial(&lead, goal(Color::White)), (1, moves));
        assert_eq!(material.initial(&lead, goal(Color::White)), (1, scaled));
        assert_eq!(leaf.initial(&lead, goal(Color::Black)), (moves, 1));
        assert_eq!(material.initial(&lead, goal(Color::Black)), (scaled, 1));
    }
}
