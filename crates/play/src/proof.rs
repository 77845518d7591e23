//! The proof player: it follows checked certificates. Wherever its side must choose inside a
//! certificate that is a strategy for it (`strategy`), it plays the certificate's move; at
//! and below a table leaf it plays from the tables; so it never plays a move whose value it
//! does not know to hold. It still tries to win: where no certificate denies it a win, a
//! bounded df-pn looks for one and takes it, and in a drawn table position it keeps the
//! draw with the move most likely to make the opponent go wrong (WINIMAX). Outside every
//! certificate and the tables it plays as perfect play does, and says so in its move's
//! reason.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::{Agent, Choice, MoveFrom, MoveInfo, Source, Tools, Verdict, Why};
use crate::game::Game;
use crate::perfect::Perfect;
use crate::strategy::{Library, Standing, standing};
use crate::winimax::Winimax;
use fanorona_check::explore::Ending;
use fanorona_rules::moves::{Move, legal_moves};
use fanorona_search::dfpn::DfPn;
use fanorona_search::{Goal, LeafEval, Limits, Outcome};
use fanorona_tables::Database;

/// Nodes the search for a win may create a move, by default.
pub const WIN_BUDGET: u64 = 50_000;

/// The search for a win gives up after this long, whatever its budget.
const WIN_TIME: Duration = Duration::from_secs(2);

/// Entries of the win search's df-pn table.
const WIN_TABLE: usize = 1 << 18;

pub struct Proof {
    perfect: Perfect,
    /// In the tables: perfect play that, where the position is a draw, keeps it with the
    /// move most likely to make the opponent go wrong.
    winimax: Winimax,
    library: Option<Arc<Library>>,
    db: Option<Arc<Database>>,
    /// Nodes the search for a win may create a move (0: it never looks).
    pub win_budget: u64,
}

/// What the certificates say where the game stands, for the side to move.
enum Plan {
    /// The move of certificate `name`: a win if it is a proof, at least a draw otherwise.
    Certificate {
        mv: Move,
        name: String,
        proven: bool,
    },
    /// At or below the table leaf of certificate `name`.
    Tables { name: String },
    /// No certificate chooses here: why, certificate by certificate.
    Outside { notes: Vec<String> },
}

impl Proof {
    pub fn new(tools: &Tools) -> Proof {
        Proof {
            perfect: Perfect::new(tools),
            winimax: Winimax::new(tools),
            library: tools.certificates.clone(),
            db: tools.db.clone(),
            win_budget: WIN_BUDGET,
        }
    }

    /// What the certificates say of the game's position.
    fn plan(&self, game: &Game) -> Plan {
        let mut notes = Vec::new();
        let Some(lib) = &self.library else {
            notes.push("no certificates given".to_string());
            return Plan::Outside { notes };
        };
        let pos = *game.position();
        let side = pos.side_to_move();
        for (i, at) in lib.reached(game, side) {
            let e = &lib.entries()[i];
            let tree = match lib.tree(i) {
                Ok(t) => t,
                Err(why) => {
                    notes.push(format!("{} is not used: {why}", e.name));
                    continue;
                }
            };
            match standing(&tree, game, at) {
                Standing::At {
                    node,
                    ending: Ending::Inner { .. },
                } => {
                    let Some(child) = tree.children(node).next() else {
                        continue;
                    };
                    match Move::parse(&pos, tree.mv(child)) {
                        Ok(mv) if legal_moves(&pos).contains(&mv) => {
                            return Plan::Certificate {
                                mv,
                                name: e.name.clone(),
                                proven: e.proven,
                            };
                        }
                        Ok(_) | Err(_) => notes.push(format!(
                            "{}'s move {} is not legal here",
                            e.name,
                            tree.mv(child)
                        )),
                    }
                }
                Standing::At {
                    ending: Ending::Table(_),
                    ..
                }
                | Standing::BelowTableLeaf => {
                    return Plan::Tables {
                        name: e.name.clone(),
                    };
                }
                Standing::At { ending, .. } => {
                    notes.push(format!("{} ends here ({ending:?})", e.name));
                }
                Standing::Left { index } => notes.push(format!(
                    "the game left {} at move {index} from its root",
                    e.name
                )),
            }
        }
        if notes.is_empty() {
            notes.push(format!(
                "no certificate for {side} reaches this position ({} in the library)",
                lib.len()
            ));
        }
        Plan::Outside { notes }
    }

    /// A winning move a bounded df-pn proves from the game's position, if it finds one the
    /// opponent cannot answer by repeating a position of the game; and the nodes it took.
    fn find_win(&self, game: &Game) -> (Option<Move>, u64) {
        if self.win_budget == 0 {
            return (None, 0);
        }
        let pos = *game.position();
        let goal = Goal {
            attacker: pos.side_to_move(),
        };
        let limits = Limits {
            nodes: Some(self.win_budget),
            time: Some(WIN_TIME),
            memory: Some(256 << 20),
        };
        let mut search = DfPn::new(goal, LeafEval::new(self.db.as_deref()), limits, WIN_TABLE);
        let result = search.result(&pos, |_| {});
        let nodes = result.stats.nodes;
        let mv = (result.outcome == Outcome::Proven)
            .then_some(result.best_move)
            .flatten()
            .filter(|mv| {
                let child = mv.apply(&pos);
                !game.occurred(&child) && !crate::perfect::opponent_can_repeat(game, &child)
            });
        (mv, nodes)
    }

    /// Whether the tables value the game's position.
    fn in_tables(&self, game: &Game) -> bool {
        self.db
            .as_ref()
            .is_some_and(|db| db.lookup(game.position()).is_ok())
    }

    /// Perfect play's move (WINIMAX's where the tables value the position), with why it
    /// was made.
    fn perfect_choice(&mut self, game: &Game, from: MoveFrom, text: String) -> Choice {
        let mut c = if self.in_tables(game) {
            self.winimax.choose(game)
        } else {
            self.perfect.choose(game)
        };
        let from = match c.info.value {
            Some((_, Source::Tables)) if from == MoveFrom::Fallback => MoveFrom::Tables,
            _ => from,
        };
        c.why = Some(Why { from, text });
        c
    }
}

fn made(
    mv: Move,
    value: Option<(Verdict, Source)>,
    work: u64,
    from: MoveFrom,
    text: String,
) -> Choice {
    Choice {
        why: Some(Why { from, text }),
        ..Choice::of(mv, value, None, work)
    }
}

impl Agent for Proof {
    fn name(&self) -> String {
        format!(
            "proof ({} certificates, {})",
            self.library.as_ref().map_or(0, |l| l.len()),
            if self.db.is_some() {
                "tables"
            } else {
                "no tables"
            }
        )
    }

    fn choose(&mut self, game: &Game) -> Choice {
        let side = game.position().side_to_move();
        let plan = self.plan(game);
        // Where the tables hold the position they know its value exactly, which is at least
        // what any certificate there promises.
        if self.in_tables(game) && !matches!(plan, Plan::Tables { .. }) {
            let whose = match &plan {
                Plan::Certificate { name, .. } => format!("inside {name}, "),
                _ => "outside every certificate, ".to_string(),
            };
            return self.perfect_choice(
                game,
                MoveFrom::Tables,
                format!("{whose}inside the tables: from the tables"),
            );
        }
        match plan {
            Plan::Certificate { mv, name, proven } if proven => {
                // The game's past is not the certificate's: a move back to a position of the
                // game, or one the opponent can answer so, is a draw in play.
                let child = mv.apply(game.position());
                let value = (!game.occurred(&child)
                    && !crate::perfect::opponent_can_repeat(game, &child))
                .then_some((Verdict::Win, Source::Certificate));
                let said = if value.is_some() {
                    "which wins"
                } else {
                    "a win in the certificate, but the game can repeat a position from here"
                };
                made(
                    mv,
                    value,
                    0,
                    MoveFrom::Certificate,
                    format!("{name}: its move, {said}"),
                )
            }
            Plan::Certificate { mv, name, .. } => {
                // A disproof of our own win holding the position too: the value is a draw,
                // and no search can find a win.
                let denied = self
                    .library
                    .as_ref()
                    .is_some_and(|l| l.denies_win(game, side));
                if denied {
                    return made(
                        mv,
                        Some((Verdict::Draw, Source::Certificate)),
                        0,
                        MoveFrom::Certificate,
                        format!(
                            "{name}: its move, which draws (no certificate lets {side} win here)"
                        ),
                    );
                }
                let (win, nodes) = self.find_win(game);
                match win {
                    Some(w) => made(
                        w,
                        Some((Verdict::Win, Source::Search)),
                        nodes,
                        MoveFrom::Win,
                        format!(
                            "a win proven in {nodes} search nodes, instead of {name}'s move (at least a draw)"
                        ),
                    ),
                    None => made(
                        mv,
                        None,
                        nodes,
                        MoveFrom::Certificate,
                        format!("{name}: its move, at least a draw"),
                    ),
                }
            }
            Plan::Tables { name } => self.perfect_choice(
                game,
                MoveFrom::Tables,
                format!("at or below a table leaf of {name}: from the tables"),
            ),
            // Inside the tables the choice was made above.
            Plan::Outside { notes } => {
                let outside = format!("outside every certificate ({})", notes.join("; "));
                let (win, nodes) = self.find_win(game);
                if let Some(w) = win {
                    return made(
                        w,
                        Some((Verdict::Win, Source::Search)),
                        nodes,
                        MoveFrom::Win,
                        format!("{outside}: a win proven in {nodes} search nodes"),
                    );
                }
                let mut c = self.perfect_choice(
                    game,
                    MoveFrom::Fallback,
                    format!("{outside}: perfect play"),
                );
                c.work += nodes;
                c
            }
        }
    }

    fn analyse(&mut self, game: &Game) -> Vec<MoveInfo> {
        let choice = self.choose(game);
        let mut moves = self.perfect.analyse(game);
        moves.retain(|m| m.mv != choice.mv);
        moves.insert(0, choice.info);
        moves
    }
}
