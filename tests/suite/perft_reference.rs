//! perft against counts that independent implementations agree on.

use fanorona::Position;
use fanorona::perft::perft;

/// Rows of a perft data file: (position, depth, count); `#` lines are the source header.
pub fn read_perft_file(text: &str) -> Vec<(Position, u32, u64)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty() && !l.starts_with("board\t"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let pos: Position = f[1].parse().unwrap_or_else(|e| panic!("{l}: {e}"));
            assert_eq!(pos.board().to_string(), f[0], "{l}");
            (pos, f[2].parse().unwrap(), f[3].parse().unwrap())
        })
        .collect()
}

#[test]
fn every_reference_perft_count_matches() {
    let rows = read_perft_file(include_str!("../data/perft-reference.tsv"));
    assert_eq!(rows.len(), 94);
    let mut wrong = Vec::new();
    for (pos, depth, expect) in rows {
        let got = perft(&pos, depth);
        if got != expect {
            wrong.push(format!("{pos} depth {depth}: expected {expect}, got {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
