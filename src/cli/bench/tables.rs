//! `bench tables`: what an index costs (positions ranked a second under the paper's index
//! and the symmetric one, on the largest 9-piece 5x9 slices) and, with `--db DIR`, random
//! probes a second of its largest slices from a warm page cache, and the first pass of a
//! 9-piece build (positions with a capture valued a second) over its 8-piece slices, and the
//! first pass of 4-5 in its two orders (entries valued a second).

use std::path::Path;

use crate::cli::bench::harness as bench;
use crate::cli::output::{CliResult, Failure};
use fanorona::Board;
use fanorona::egdb::build::symmetric::{PassOrder, first_pass_sample};
use fanorona::egdb::capture_values::{CaptureValues, Reads, Scratch};
use fanorona::egdb::scheme::{Index, Scheme};
use fanorona::egdb::symmetric::SymSlice;
use fanorona::egdb::wdl::DRAW;
use fanorona::egdb::{Database, Material};
use fanorona::geometry::Bitboard;
use fanorona::movegen::capturing_pieces;
use fanorona::{Color, Position};

/// A case of the tables' workload: what is timed, on which slice. The index is its name, or
/// "?" for a probed slice that cannot be read.
#[derive(serde::Serialize)]
#[serde(tag = "case", rename_all = "lowercase")]
enum TablesCase {
    Rank {
        slice: Material,
        index: &'static str,
    },
    Probe {
        slice: Material,
        index: &'static str,
    },
    /// A build's first pass, its reads from the page cache or resident, gathered or not.
    #[serde(rename = "capture values")]
    CaptureValues {
        slice: Material,
        read: &'static str,
        way: &'static str,
    },
    /// The first pass of a slice in the order of its entries or by big sets.
    #[serde(rename = "first pass order")]
    FirstPassOrder {
        slice: Material,
        read: &'static str,
        order: &'static str,
    },
}

/// Positions per case: a fixed pseudo-random sample, so the signature is the same anywhere.
const SAMPLE: usize = 1 << 20;

/// `count` random positions of slice `m` of `board` (xorshift from a fixed seed).
fn sample(board: Board, m: Material, count: usize) -> Vec<(Bitboard, Bitboard)> {
    let paper = Index::new(Scheme::Paper, board, m).expect("the slice fits the board");
    let mut x = 0x2545_F491_4F6C_DD1Du64 ^ (m.a as u64) << 8 ^ m.b as u64;
    (0..count)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            paper.unrank(x % paper.len())
        })
        .collect()
}

pub fn bench(repeat: usize, db: Option<&Path>, json: bool) -> CliResult {
    let board = Board::STANDARD;
    let tables = db
        .map(|dir| Database::open_whole(dir, board))
        .transpose()
        .map_err(Failure::input)?;
    // Copies of the slices in memory, as a build reads them.
    let resident = db.map(|dir| Database::resident(dir, board));
    let mut cases = Vec::new();
    for m in ["5-4", "4-5", "7-2"] {
        let m: Material = m.parse().expect("a slice");
        let positions = sample(board, m, SAMPLE);
        for scheme in [Scheme::Paper, Scheme::Symmetric] {
            let index = Index::new(scheme, board, m).expect("the slice fits the board");
            let positions = positions.clone();
            cases.push(bench::Case {
                label: format!("rank {m} {scheme:>9}"),
                fields: TablesCase::Rank {
                    slice: m,
                    index: scheme.name(),
                },
                run: Box::new(move || {
                    // The ranks are summed so that none is optimised away.
                    let sum = positions
                        .iter()
                        .fold(0u64, |s, &(us, them)| s.wrapping_add(index.rank(us, them)));
                    std::hint::black_box(sum);
                    positions.len() as u64
                }),
            });
        }
    }
    if let Some(tables) = &tables {
        let pieces = tables.max_pieces();
        for m in Material::with_pieces(pieces).filter(|m| m.a >= m.b) {
            let positions = sample(board, m, SAMPLE);
            // Warm the page cache (and open the file) before timing.
            for &(us, them) in &positions {
                tables.probe_sides(us, them);
            }
            let scheme = tables
                .slice(m)
                .ok()
                .flatten()
                .map_or("?", |f| f.slice.scheme().name());
            cases.push(bench::Case {
                label: format!("probe {m} {scheme:>9}"),
                fields: TablesCase::Probe {
                    slice: m,
                    index: scheme,
                },
                run: Box::new(move || {
                    let found = positions
                        .iter()
                        .filter(|&&(us, them)| tables.probe_sides(us, them).is_some())
                        .count();
                    found as u64
                }),
            });
        }
    }
    for (tables, read) in [(&tables, "page cache"), (&resident, "resident")] {
        let Some(tables) = tables else { continue };
        // A build's first pass over the largest 9-piece slices: positions with a capture,
        // valued from the slices their captures lead to (all of them probed at random), each
        // of the two ways.
        for m in ["6-3", "3-6", "5-4", "4-5"] {
            let m: Material = m.parse().expect("a slice");
            // Without the slices its captures lead to, no case.
            let Ok(captures) = CaptureValues::new(tables, m) else {
                continue;
            };
            let positions: Vec<Position> = sample(board, m, SAMPLE)
                .into_iter()
                .map(|(us, them)| Position::from_parts(board, us, them, Color::White))
                .filter(|p| capturing_pieces(p) != 0)
                .take(SAMPLE / 4)
                .collect();
            for (way, name) in [
                (Reads::FirstWin, "first win"),
                (Reads::Gathered, "gathered"),
            ] {
                let captures = captures.clone().reading(way);
                let positions = positions.clone();
                let mut reads = Scratch::new();
                for p in &positions {
                    captures.value(p, &mut reads);
                }
                cases.push(bench::Case {
                    label: format!("first pass {m} {read:>10} {name:>9}"),
                    fields: TablesCase::CaptureValues {
                        slice: m,
                        read,
                        way: name,
                    },
                    run: Box::new(move || {
                        let mut reads = Scratch::new();
                        let sum = positions.iter().fold(0u64, |s, p| {
                            s + captures.value(p, &mut reads).unwrap_or(DRAW) as u64
                        });
                        std::hint::black_box(sum);
                        positions.len() as u64
                    }),
                });
            }
        }
    }
    // The first pass of 4-5 over 2 million entries from the middle of the slice, in the
    // order of the entries and by big sets: the same work, reads in another order.
    for (tables, read) in [(&tables, "page cache"), (&resident, "resident")] {
        let Some(tables) = tables else { continue };
        let m: Material = "4-5".parse().expect("a slice");
        let Ok(captures) = CaptureValues::new(tables, m) else {
            continue;
        };
        let slice = SymSlice::new(board, m).expect("the slice fits the board");
        for (order, name) in [
            (PassOrder::Entries, "entries"),
            (PassOrder::BigSets, "big sets"),
        ] {
            let captures = captures.clone();
            cases.push(bench::Case {
                label: format!("first pass {m} {read:>10} by {name:>8}"),
                fields: TablesCase::FirstPassOrder {
                    slice: m,
                    read,
                    order: name,
                },
                run: Box::new(move || {
                    let (n, sum) = first_pass_sample(&slice, &captures, order, 0.5, 2_000_000);
                    std::hint::black_box(sum);
                    n
                }),
            });
        }
    }
    bench::run(cases, repeat, 1, "positions", json)
}
