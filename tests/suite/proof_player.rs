//! The proof player against every reply: certificates made here on boards the suite solves,
//! then every line the opponent can choose walked to the end of the certificate. The player
//! must play the certificate's move (or a win a search proves, checked again here) and no
//! line may reach a position lost for it.

use std::collections::HashSet;
use std::sync::Arc;

use fanorona::certificate::explore::{Ending, Tree};
use fanorona::egdb::Database;
use fanorona::play::proof::Proof;
use fanorona::play::strategy::{Library, Standing, standing};
use fanorona::play::{Agent, Game, MoveFrom, Tools};
use fanorona::search::dfpn::DfPn;
use fanorona::search::{Goal, LeafEval, Limits, Outcome};
use fanorona::{Color, Position, legal_moves};

use crate::certificate::{DRAWN_3X5, certificate};

/// What a walk saw.
#[derive(Default, Debug)]
struct Walked {
    /// The player's moves that were the certificate's, and wins it found instead.
    certificate_moves: u64,
    wins_found: u64,
    /// Lines ended: by the game's end, at a table leaf.
    ended: u64,
    table_leaves: u64,
}

struct Walk<'a> {
    tree: &'a Tree,
    player: Proof,
    side: Color,
    /// The player's promise: a win (a proof) or at least a draw.
    wins: bool,
    db: Option<&'a Database>,
    seen: HashSet<(Position, u32)>,
    walked: Walked,
}

impl Walk<'_> {
    fn walk(&mut self, game: &mut Game) {
        if let Some(end) = game.end() {
            let winner = end.winner();
            assert_ne!(
                winner,
                Some(self.side.opponent()),
                "{end}: {:?}",
                game.moves()
            );
            if self.wins {
                assert_eq!(winner, Some(self.side), "{end}: a proof's line drawn");
            }
            self.walked.ended += 1;
            return;
        }
        let node = match standing(self.tree, game, 0) {
            Standing::At {
                node,
                ending: Ending::Inner { .. },
            } => node,
            Standing::At {
                ending: Ending::Table(v),
                ..
            } => {
                // The tables' value for the side to move, turned to the player's.
                let mine = if game.position().side_to_move() == self.side {
                    v
                } else {
                    v.flipped()
                };
                let needed = if self.wins {
                    fanorona::egdb::Wdl::Win
                } else {
                    fanorona::egdb::Wdl::Draw
                };
                assert!(mine >= needed, "table leaf {mine:?} at {}", game.position());
                self.walked.table_leaves += 1;
                return;
            }
            other => panic!("{other:?} at {} after {:?}", game.position(), game.moves()),
        };
        if !self.seen.insert((*game.position(), node)) {
            return;
        }
        let pos = *game.position();
        if pos.side_to_move() == self.side {
            let choice = self.player.choose(game);
            let why = choice.why.clone().expect("the proof player says why");
            let expected = self.tree.children(node).next().expect("a chooser's move");
            let played = choice.mv.notation(pos.board());
            if played == self.tree.mv(expected) {
                // The certificate's move, or a win found that is the same move.
                assert!(
                    matches!(why.from, MoveFrom::Certificate | MoveFrom::Win),
                    "{}",
                    why.text
                );
                self.walked.certificate_moves += 1;
                game.play(&choice.mv).unwrap();
                self.walk(game);
                game.undo();
            } else {
                // Only a win, proven again here without a budget.
                assert_eq!(why.from, MoveFrom::Win, "{played}: {}", why.text);
                let child = choice.mv.apply(&pos);
                let won = fanorona::movegen::is_lost(&child)
                    || DfPn::new(
                        Goal {
                            attacker: self.side,
                        },
                        LeafEval::new(self.db),
                        Limits::none(),
                        1 << 20,
                    )
                    .result(&child, |_| {})
                    .outcome
                        == Outcome::Proven;
                assert!(won, "{played} from {pos} is not a win");
                self.walked.wins_found += 1;
            }
        } else {
            for mv in legal_moves(&pos) {
                game.play(&mv).unwrap();
                self.walk(game);
                game.undo();
            }
        }
    }
}

/// Walks every line of `root`'s certificate of `attacker`'s win, the proof player playing
/// the certificate's side.
fn walk_all(root: &str, attacker: Color, db: Option<Arc<Database>>) -> (Walked, bool) {
    let (text, proves) = certificate(root, attacker, "dfpn", db.as_deref());
    let tree = Tree::read(std::path::Path::new("made"), &mut text.as_bytes()).unwrap();
    let mut library = Library::new(db.clone());
    library.add_text("made.cert", text).unwrap();
    let library = Arc::new(library);
    assert!(library.tree(0).is_ok(), "{:?}", library.tree(0).err());
    let tools = Tools {
        db: db.clone(),
        certificates: Some(library.clone()),
        ..Tools::default()
    };
    let side = library.entries()[0].player();
    let mut walk = Walk {
        tree: &tree,
        player: Proof::new(&tools),
        side,
        wins: proves,
        db: db.as_deref(),
        seen: HashSet::new(),
        walked: Walked::default(),
    };
    let mut game = Game::new(root.parse().unwrap(), None);
    walk.walk(&mut game);
    eprintln!("{root} {attacker} wins? {:?}", walk.walked);
    (walk.walked, proves)
}

#[test]
fn the_proof_player_keeps_every_certificate_against_every_reply() {
    let root5 = Position::initial("5x5".parse().unwrap()).to_string();
    // 5x5: White does not win; the disproof is Black's strategy, kept against every White
    // move to the end of the certificate (about 2,400 of its moves, in 2 s).
    let (w, proves) = walk_all(&root5, Color::White, None);
    assert!(
        !proves && w.certificate_moves > 1000 && w.ended > 500,
        "{w:?}"
    );
    // 3x7: White wins; the proof is White's strategy to a win at every line's end.
    let root = Position::initial("3x7".parse().unwrap()).to_string();
    let (w, proves) = walk_all(&root, Color::White, None);
    assert!(proves);
    assert!(w.certificate_moves > 10 && w.ended > 10, "{w:?}");
    assert_eq!(w.wins_found, 0, "a proof's own move is taken: {w:?}");
    // A drawn 3x5 position: each disproof is a strategy for the defender, who never loses
    // (and may find a win where the opponent errs).
    for attacker in [Color::White, Color::Black] {
        let (w, proves) = walk_all(DRAWN_3X5, attacker, None);
        assert!(!proves);
        assert!(w.certificate_moves > 0 && w.ended > 0, "{attacker}: {w:?}");
    }
    // 3x5 with its 4-piece tables: lines end at table leaves, won for the player.
    let dir = crate::certificate::tables();
    let db = Arc::new(Database::new(dir.path(), "3x5".parse().unwrap()));
    let root = Position::initial("3x5".parse().unwrap()).to_string();
    let (w, proves) = walk_all(&root, Color::White, Some(db));
    assert!(proves);
    assert!(w.table_leaves > 0, "{w:?}");
}

#[test]
fn a_certificate_that_does_not_fit_is_named_and_perfect_play_goes_on() {
    // A 3x7 proof, a 3x5 game: no certificate reaches it, and the reason says so.
    let root = Position::initial("3x7".parse().unwrap()).to_string();
    let (text, _) = certificate(&root, Color::White, "dfpn", None);
    let mut library = Library::new(None);
    library.add_text("3x7.cert", text.clone()).unwrap();
    // The same proof with a move of its changed: it does not check, so it is not followed.
    let first = text.lines().nth(2).unwrap().to_string();
    let other = legal_moves(&root.parse::<Position>().unwrap())
        .iter()
        .map(|m| m.notation(root.parse::<Position>().unwrap().board()))
        .find(|m| !first.contains(m.as_str()))
        .unwrap();
    let moved = first.split(' ').nth(1).unwrap().to_string();
    let tampered = text.replacen(&first, &first.replacen(&moved, &other, 1), 1);
    let mut bad = Library::new(None);
    bad.add_text("tampered.cert", tampered).unwrap();
    let tools = |lib: Library| Tools {
        certificates: Some(Arc::new(lib)),
        ..Tools::default()
    };
    let game = Game::new(DRAWN_3X5.parse().unwrap(), None);
    let choice = Proof::new(&tools(library)).choose(&game);
    let why = choice.why.unwrap();
    assert!(legal_moves(game.position()).contains(&choice.mv));
    assert!(
        why.text
            .contains("no certificate for white reaches this position"),
        "{}",
        why.text
    );
    assert_ne!(why.from, MoveFrom::Certificate);
    let game = Game::new(root.parse().unwrap(), None);
    let choice = Proof::new(&tools(bad)).choose(&game);
    let why = choice.why.unwrap();
    assert!(legal_moves(game.position()).contains(&choice.mv));
    assert!(
        why.text
            .contains("tampered.cert is not used: it does not check: line"),
        "{}",
        why.text
    );
    assert_ne!(why.from, MoveFrom::Certificate);
}
