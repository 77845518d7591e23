//! Deeper perft counts from `tests/data/perft-deep.tsv` (see its header for their sources).

use crate::common;

use fanorona::Position;
use fanorona::movegen::successors;
use fanorona::perft::perft;

/// perft over de-duplicated successors: sequences of distinct resulting positions, the
/// counting some public implementations use (moves with the same start, end and captured
/// pieces merged).
fn perft_positions(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    successors(pos)
        .iter()
        .map(|c| perft_positions(c, depth - 1))
        .sum()
}

#[test]
fn deep_perft_counts_match() {
    let text = include_str!("../data/perft-deep.tsv");
    let mut rows = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("board\t"))
    {
        let f: Vec<&str> = line.split('\t').collect();
        let pos: Position = f[1].parse().unwrap();
        assert_eq!(pos.board().to_string(), f[0]);
        let depth: u32 = f[2].parse().unwrap();
        let expect: u64 = f[4].parse().unwrap();
        let got = match f[3] {
            "moves" => perft(&pos, depth),
            "positions" => perft_positions(&pos, depth),
            other => panic!("unknown counting '{other}' in {line}"),
        };
        assert_eq!(got, expect, "{line}");
        rows += 1;
    }
    assert!(rows >= 12, "every board needs a deep row");
}

/// Re-computes every 'moves' row with the simple model (slow: minutes).
#[test]
#[ignore]
fn simple_model_agrees_on_every_deep_row() {
    let text = include_str!("../data/perft-deep.tsv");
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("board\t"))
    {
        let f: Vec<&str> = line.split('\t').collect();
        if f[3] != "moves" {
            continue;
        }
        let grid = common::simple_rules::Grid::parse(f[1]);
        assert_eq!(
            grid.perft(f[2].parse().unwrap()),
            f[4].parse::<u64>().unwrap(),
            "{line}"
        );
        eprintln!("agrees: {line}");
    }
}
