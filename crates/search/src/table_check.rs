//! A forward check of a layer of tables: random quiet positions of that many pieces solved by
//! df-pn over the tables one layer down, and each answer the search gives compared with what
//! the new tables say. Independent of the builder: the search only knows the rules and the
//! smaller tables.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::dfpn::DfPn;
use crate::{Goal, LeafEval, Limits, Outcome};
use fanorona_rules::geometry::Board;
use fanorona_rules::movegen::has_capture;
use fanorona_rules::position::{Color, Position};
use fanorona_tables::index::Material;
use fanorona_tables::{Database, Wdl};

/// df-pn table entries of each search.
const CAPACITY: usize = 1 << 20;

/// What the check found.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ForwardCheck {
    /// Quiet positions drawn.
    pub positions: u64,
    /// Questions ("does White win?", "does Black win?") the search answered within its nodes.
    pub decided: u64,
    /// Of those, answers the tables agree with.
    pub agreed: u64,
    /// Positions whose both questions were answered, so whose whole value is known.
    pub both_decided: u64,
    /// Nodes searched in all.
    pub nodes: u64,
    /// The first disagreements: position, question, search's answer, tables' value.
    pub disagreements: Vec<String>,
}

/// `db forward-check`: what the check found, with what it asked (a layer of a board, so many
/// nodes a question) and how long it took.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ForwardChecked {
    pub board: Board,
    pub pieces: usize,
    /// Two a position: "does White win?" and "does Black win?".
    pub questions: u64,
    pub nodes_per_question: u64,
    pub seconds: f64,
    #[serde(flatten)]
    pub found: ForwardCheck,
}

/// Checks `samples` random quiet positions with `pieces` pieces (White to move), drawn from
/// the slices in proportion to their sizes, against `tables`, searching each question with at
/// most `nodes` nodes over `below` (the same tables capped one layer down).
pub fn forward_check(
    tables: &Database,
    below: &Database,
    pieces: usize,
    samples: u64,
    nodes: u64,
    threads: usize,
) -> ForwardCheck {
    let board = tables.board();
    let slices: Vec<(Material, u64)> = Material::with_pieces(pieces)
        .filter_map(|m| {
            let file = tables.slice(m).ok()??;
            Some((m, file.slice.len()))
        })
        .collect();
    let total: u64 = slices.iter().map(|s| s.1).sum();
    let found = Mutex::new(ForwardCheck::default());
    let next = AtomicU64::new(0);
    if total == 0 {
        return ForwardCheck::default();
    }
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= samples {
                        break;
                    }
                    let pos = quiet_position(tables, board, &slices, total, k);
                    let one = check_one(tables, below, &pos, nodes);
                    let mut f = found.lock().expect("no thread panics holding it");
                    f.positions += 1;
                    f.decided += one.decided;
                    f.agreed += one.agreed;
                    f.both_decided += u64::from(one.decided == 2);
                    f.nodes += one.nodes;
                    if f.disagreements.len() < 10 {
                        f.disagreements.extend(one.disagreements);
                    }
                }
            });
        }
    });
    found.into_inner().expect("no thread panics holding it")
}

/// The `k`-th quiet position of the draw: entries drawn at random (splitmix64 of `k` and the
/// attempt), skipping those with a capture or no move, the same in every run.
fn quiet_position(
    tables: &Database,
    board: Board,
    slices: &[(Material, u64)],
    total: u64,
    k: u64,
) -> Position {
    let mut attempt = 0u64;
    loop {
        let mut z = (k << 20 | attempt)
            .wrapping_add(1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let mut r = (z ^ (z >> 31)) % total;
        attempt += 1;
        for &(m, len) in slices {
            if r >= len {
                r -= len;
                continue;
            }
            let file = tables.slice(m).ok().flatten().expect("listed as built");
            let (us, them) = file.slice.unrank(r);
            let pos = Position::from_parts(board, us, them, Color::White);
            if !has_capture(&pos) && !fanorona_rules::movegen::is_lost(&pos) {
                return pos;
            }
            break;
        }
    }
}

struct One {
    decided: u64,
    agreed: u64,
    nodes: u64,
    disagreements: Vec<String>,
}

fn check_one(tables: &Database, below: &Database, pos: &Position, nodes: u64) -> One {
    let value = tables
        .probe(pos)
        .expect("the position was drawn from the tables");
    let mut one = One {
        decided: 0,
        agreed: 0,
        nodes: 0,
        disagreements: Vec::new(),
    };
    for attacker in [Color::White, Color::Black] {
        let goal = Goal { attacker };
        let limits = Limits {
            nodes: Some(nodes),
            ..Limits::none()
        };
        let result =
            DfPn::new(goal, LeafEval::with_db(below), limits, CAPACITY).result(pos, |_| {});
        one.nodes += result.stats.nodes;
        // White is to move: the tables' value is White's.
        let wins = matches!(
            (attacker, value),
            (Color::White, Wdl::Win) | (Color::Black, Wdl::Loss)
        );
        let answer = match result.outcome {
            Outcome::Proven => true,
            Outcome::Disproven => false,
            Outcome::Unknown => continue,
        };
        one.decided += 1;
        if answer == wins {
            one.agreed += 1;
        } else {
            one.disagreements.push(format!(
                "{pos}: {goal}? search says {}, the tables say {value} for White",
                if answer { "yes" } else { "no" }
            ));
        }
    }
    one
}
