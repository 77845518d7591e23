//! The players: each beats the random player, perfect play wins where the solution says it
//! must and never gives up a value, and WINIMAX keeps the draw.

use fanorona::play::arena::{MatchSpec, run_match, summarise};
use fanorona::play::{Game, Spec, Tools, make};
use fanorona::{Board, Color, Position};

fn beats_random(spec: &str, board: &str, games: usize) -> f64 {
    let m = MatchSpec {
        a: spec.parse().unwrap(),
        b: "random".parse().unwrap(),
        starts: vec![Position::initial(board.parse().unwrap())],
        games,
        threads: 2,
        seed: 1,
        max_plies: Some(200),
        tools: Tools::default(),
    };
    let rows = run_match(&m, &|_| {}, &std::sync::atomic::AtomicBool::new(false));
    let s = summarise(&rows);
    s.wins as f64 / s.games as f64
}

/// Every player but random wins at least 95% of its games against random (here 40 a board
/// and player; `fanorona match` plays the 200 of docs/results.md).
#[test]
fn every_player_beats_random() {
    for board in ["3x3", "5x5", "5x9"] {
        // Each at its default level, medium.
        for spec in ["minimax", "alphabeta", "mcts"] {
            let rate = beats_random(spec, board, 40);
            assert!(rate >= 0.95, "{spec} on {board}: {rate}");
        }
    }
    // Perfect play needs no tables on the small boards.
    for spec in ["perfect", "winimax"] {
        let rate = beats_random(spec, "3x3", 40);
        assert!(rate >= 0.95, "{spec} on 3x3: {rate}");
    }
}

/// On the boards proven White wins, perfect play as White wins every game, whoever plays
/// Black.
#[test]
fn perfect_play_wins_the_white_boards_as_white() {
    for board in ["3x3", "3x5", "5x3", "3x7", "7x3"] {
        for black in [
            "random",
            "minimax:easy",
            "alphabeta:medium",
            "mcts:easy",
            "perfect",
            "winimax",
        ] {
            for seed in 0..2 {
                let tools = |s| Tools {
                    seed: s,
                    ..Tools::default()
                };
                let mut white = make("perfect".parse::<Spec>().unwrap(), &tools(seed));
                let mut b = make(black.parse::<Spec>().unwrap(), &tools(seed + 100));
                let start = Position::initial(board.parse::<Board>().unwrap());
                let played =
                    fanorona::play::arena::play_game(white.as_mut(), b.as_mut(), start, Some(300));
                assert_eq!(
                    played.end.winner(),
                    Some(Color::White),
                    "{board} against {black} (seed {seed}): {}",
                    played.end
                );
            }
        }
    }
}

/// Perfect play never chooses a move worse than the best value it knows.
#[test]
fn perfect_play_never_lowers_the_value() {
    // Every move perfect play makes from positions of a random 5x3 game keeps the value
    // that df-pn gives the position.
    let tools = Tools::default();
    let mut perfect = make("perfect".parse().unwrap(), &tools);
    let mut random = make(
        "random".parse().unwrap(),
        &Tools {
            seed: 9,
            ..tools.clone()
        },
    );
    let mut game = Game::new(Position::initial("5x3".parse().unwrap()), Some(60));
    let mut checked = 0;
    while game.end().is_none() {
        let info = perfect.analyse(&game);
        let best = info[0].value.map(|v| v.0);
        let choice = perfect.choose(&game);
        assert_eq!(
            choice.info.value.map(|v| v.0),
            best,
            "{}: chose {:?}",
            game.position(),
            choice.info
        );
        checked += 1;
        let mv = random.choose(&game).mv;
        game.play(&mv).unwrap();
    }
    assert!(checked > 3);
}

/// Over thousands of 5x9 table positions (up to 4 pieces), perfect play's move always keeps
/// the value the tables give the position.
#[test]
fn perfect_play_keeps_the_tables_value_on_5x9() {
    use fanorona::egdb::{Database, Wdl};
    use fanorona::play::Verdict;
    let board = Board::STANDARD;
    let dir = crate::common::tables::built(board, 4);
    let db = std::sync::Arc::new(Database::open_whole(dir.path(), board).unwrap());
    let tools = Tools {
        db: Some(db.clone()),
        ..Tools::default()
    };
    let mut perfect = make("perfect".parse().unwrap(), &tools);
    let mut rng = fanorona::play::rng::Rng::new(5);
    let mut checked = 0;
    while checked < 3000 {
        // A random position of 2 to 4 pieces, either side to move.
        let pieces = 2 + rng.below(3);
        let mut cells: Vec<u8> = (0..45).collect();
        for i in 0..pieces {
            let j = i + rng.below(45 - i);
            cells.swap(i, j);
        }
        let whites = 1 + rng.below(pieces - 1);
        let (mut w, mut b) = (0u64, 0u64);
        for (i, &c) in cells[..pieces].iter().enumerate() {
            if i < whites {
                w |= 1 << c;
            } else {
                b |= 1 << c;
            }
        }
        let side = if rng.below(2) == 0 {
            Color::White
        } else {
            Color::Black
        };
        let pos = Position::from_parts(board, w, b, side);
        if fanorona::movegen::is_lost(&pos) {
            continue;
        }
        let want = match db.lookup(&pos).unwrap() {
            Wdl::Win => Verdict::Win,
            Wdl::Draw => Verdict::Draw,
            Wdl::Loss => Verdict::Loss,
        };
        let choice = perfect.choose(&Game::new(pos, None));
        assert_eq!(
            choice.info.value.map(|v| v.0),
            Some(want),
            "{pos}: played {}",
            choice.mv.notation(board)
        );
        checked += 1;
    }
}
