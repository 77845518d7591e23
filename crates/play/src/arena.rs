//! Games between two players, and matches of many games on several threads: colours
//! alternated, every game seeded from the match's seed and its number (so a match replays
//! exactly whatever the threads), and a summary with a confidence interval and an Elo
//! difference.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::agent::{Agent, Spec, Tools};
use crate::game::{End, Game};
use crate::roster::make;
use fanorona_rules::position::{Color, Position};

/// A finished game and the time each side spent thinking.
pub struct Played {
    pub game: Game,
    pub end: End,
    /// Seconds of thinking by White and by Black.
    pub seconds: [f64; 2],
    /// Moves played by White and by Black.
    pub moves: [u32; 2],
    /// White's and Black's moves by where they came from, for players that say
    /// (`MoveFrom::index`).
    pub from: [[u32; 4]; 2],
}

fn side(c: Color) -> usize {
    match c {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// Plays `white` against `black` from `start` to the end (the rules' draws included).
pub fn play_game(
    white: &mut dyn Agent,
    black: &mut dyn Agent,
    start: Position,
    max_plies: Option<usize>,
) -> Played {
    let mut game = Game::new(start, max_plies);
    let (mut seconds, mut moves, mut from) = ([0.0; 2], [0; 2], [[0; 4]; 2]);
    while game.end().is_none() {
        let mover = game.position().side_to_move();
        let t = Instant::now();
        let choice = match mover {
            Color::White => white.choose(&game),
            Color::Black => black.choose(&game),
        };
        seconds[side(mover)] += t.elapsed().as_secs_f64();
        moves[side(mover)] += 1;
        if let Some(why) = &choice.why {
            from[side(mover)][why.from.index()] += 1;
        }
        game.play(&choice.mv)
            .expect("a player chooses among the legal moves");
    }
    let end = game.end().expect("the loop ends with the game");
    Played {
        game,
        end,
        seconds,
        moves,
        from,
    }
}

/// A match: A against B.
pub struct MatchSpec {
    pub a: Spec,
    pub b: Spec,
    /// The starting positions: game `i` starts from `starts[(i / 2) % len]`, so each is
    /// played once with each colour.
    pub starts: Vec<Position>,
    pub games: usize,
    pub threads: usize,
    pub seed: u64,
    pub max_plies: Option<usize>,
    pub tools: Tools,
}

impl MatchSpec {
    /// The position game `index` starts from.
    pub fn start_of(&self, index: usize) -> Position {
        self.starts[(index / 2) % self.starts.len()]
    }
}

/// One game of a match, from A's side.
#[derive(Clone, Debug)]
pub struct GameRow {
    pub index: usize,
    pub a_white: bool,
    pub end: End,
    /// 1 for an A win, 0.5 for a draw, 0 for a loss.
    pub a_score: f64,
    pub plies: usize,
    pub seconds: f64,
    pub a_seconds_per_move: f64,
    pub b_seconds_per_move: f64,
    /// A's and B's moves by where they came from (`MoveFrom::index`), for players that say.
    pub a_from: [u32; 4],
    pub b_from: [u32; 4],
    pub moves: String,
}

/// The seed of player `who` (0 for A, 1 for B) in game `index`.
fn seed(base: u64, index: usize, who: u64) -> u64 {
    base.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (index as u64) << 1 ^ who
}

/// Plays game `index` of the match: A is White in even games.
pub fn match_game(spec: &MatchSpec, index: usize) -> GameRow {
    let tools = |who| Tools {
        seed: seed(spec.seed, index, who),
        ..spec.tools.clone()
    };
    let mut a = make(spec.a, &tools(0));
    let mut b = make(spec.b, &tools(1));
    let a_white = index.is_multiple_of(2);
    let t = Instant::now();
    let start = spec.start_of(index);
    let played = if a_white {
        play_game(a.as_mut(), b.as_mut(), start, spec.max_plies)
    } else {
        play_game(b.as_mut(), a.as_mut(), start, spec.max_plies)
    };
    let (ai, bi) = if a_white { (0, 1) } else { (1, 0) };
    let a_color = if a_white { Color::White } else { Color::Black };
    let per_move = |i: usize| played.seconds[i] / played.moves[i].max(1) as f64;
    let board = start.board();
    GameRow {
        index,
        a_white,
        end: played.end,
        a_score: match played.end.winner() {
            Some(c) if c == a_color => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        },
        plies: played.game.plies(),
        seconds: t.elapsed().as_secs_f64(),
        a_seconds_per_move: per_move(ai),
        b_seconds_per_move: per_move(bi),
        a_from: played.from[ai],
        b_from: played.from[bi],
        moves: played
            .game
            .moves()
            .iter()
            .map(|m| m.notation(board))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Plays the whole match on `spec.threads` threads; `progress` sees each finished game.
/// Once `stop` is set no game starts: the rows are those of the games finished, the first
/// ones by number.
pub fn run_match(
    spec: &MatchSpec,
    progress: &(dyn Fn(&GameRow) + Sync),
    stop: &AtomicBool,
) -> Vec<GameRow> {
    crate::pool::run_numbered(
        spec.games,
        spec.threads,
        |i| match_game(spec, i),
        progress,
        stop,
    )
}

/// A match's result from A's side.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    pub games: usize,
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
    /// Mean score (win 1, draw 0.5) and its 95% confidence interval.
    pub score: f64,
    pub score_low: f64,
    pub score_high: f64,
    /// A's Elo advantage, with the interval the score's gives (clamped where the score is 0
    /// or 1, whose Elo difference is unbounded).
    pub elo: f64,
    pub elo_low: f64,
    pub elo_high: f64,
}

/// The Elo difference a score implies. A score of 0 or 1 (unbounded) is taken half a game
/// from it; every other score, an interval's end included, as it is.
fn elo(score: f64, games: usize) -> f64 {
    let eps = 0.5 / games.max(1) as f64;
    let s = if score <= 0.0 {
        eps
    } else if score >= 1.0 {
        1.0 - eps
    } else {
        score
    };
    // + 0.0: an even score gives 0, not -0.
    -400.0 * (1.0 / s - 1.0).log10() + 0.0
}

/// The 95% interval of the mean score: Agresti and Coull's for a proportion ("Approximate is
/// better than 'exact' for interval estimation of binomial proportions", 1998), with draws:
/// z²/2 pseudo-wins and as many pseudo-losses join the games, and the normal interval of the
/// mean of them all is taken. Without them a match of all wins (or all draws) had a sample
/// variance of 0 and claimed "1.000 to 1.000" after two games.
fn score_interval(scores: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    const Z: f64 = 1.96;
    let pseudo = Z * Z / 2.0;
    let n = scores.clone().count() as f64 + 2.0 * pseudo;
    let mean = (scores.clone().sum::<f64>() + pseudo) / n;
    let var = (scores.map(|x| (x - mean).powi(2)).sum::<f64>()
        + pseudo * ((1.0 - mean).powi(2) + mean.powi(2)))
        / n;
    let half = Z * (var / n).sqrt();
    ((mean - half).max(0.0), (mean + half).min(1.0))
}

pub fn summarise(rows: &[GameRow]) -> Summary {
    let n = rows.len();
    let wins = rows.iter().filter(|r| r.a_score == 1.0).count();
    let draws = rows.iter().filter(|r| r.a_score == 0.5).count();
    let score = rows.iter().map(|r| r.a_score).sum::<f64>() / n.max(1) as f64;
    let (low, high) = score_interval(rows.iter().map(|r| r.a_score));
    Summary {
        games: n,
        wins,
        draws,
        losses: n - wins - draws,
        score,
        score_low: low,
        score_high: high,
        elo: elo(score, n),
        elo_low: elo(low, n),
        elo_high: elo(high, n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(a_score: f64) -> GameRow {
        GameRow {
            index: 0,
            a_white: true,
            end: End::Repetition,
            a_score,
            plies: 0,
            seconds: 0.0,
            a_seconds_per_move: 0.0,
            b_seconds_per_move: 0.0,
            a_from: [0; 4],
            b_from: [0; 4],
            moves: String::new(),
        }
    }

    #[test]
    fn a_summary_counts_scores_and_elo() {
        let rows: Vec<GameRow> = [1.0, 1.0, 1.0, 0.5, 0.0].map(row).to_vec();
        let s = summarise(&rows);
        assert_eq!((s.wins, s.draws, s.losses), (3, 1, 1));
        assert!((s.score - 0.7).abs() < 1e-12);
        // 0.7 is about +147 Elo.
        assert!((s.elo - 147.2).abs() < 0.5, "{}", s.elo);
        assert!(s.score_low < 0.7 && s.score_high > 0.7);
        let even = summarise(&[1.0, 0.0].map(row));
        assert!(even.elo.abs() < 1e-9);
        // Two wins prove little: the interval stays wide (it was "1.000 to 1.000").
        let two = summarise(&[1.0, 1.0].map(row));
        assert!(two.score_low < 0.35 && two.score_high == 1.0, "{two:?}");
        // For wins and losses alone it is Agresti and Coull's: 18 of 20 gives 0.687 to 0.984.
        let mut rows = vec![row(1.0); 18];
        rows.extend([row(0.0), row(0.0)]);
        let s = summarise(&rows);
        assert!((s.score_low - 0.687).abs() < 0.001, "{s:?}");
        assert!((s.score_high - 0.984).abs() < 0.001, "{s:?}");
        // A hundred draws: even players, known closely but not exactly.
        let draws = summarise(&vec![row(0.5); 100]);
        assert!(draws.score_low > 0.47 && draws.score_low < 0.5, "{draws:?}");
        assert!((draws.score_high - (1.0 - draws.score_low)).abs() < 1e-12);
        // One win: the Elo interval follows the score's (it was clamped to 0 to 0), and an
        // even score is +0, not -0.
        let one = summarise(&[row(1.0)]);
        let expected = -400.0 * (1.0 / one.score_low - 1.0).log10();
        assert!(one.score_low > 0.0 && one.score_low < 0.5, "{one:?}");
        assert!(
            (one.elo_low - expected).abs() < 1e-9 && one.elo_low < -100.0,
            "{one:?}"
        );
        assert!(one.elo >= 0.0 && one.elo_high >= one.elo, "{one:?}");
        assert!(even.elo.is_sign_positive(), "{even:?}");
    }
}
