//! Builds the 5x9 tables with 2 to 4 pieces and compares their counts with the paper's
//! Table 3 (tests/data/table3-wdl-5x9.tsv). 5 and 6 pieces: scripts/reproduce-table3.sh.

use fanorona::Board;
use fanorona::egdb::stats::table3_counts;
use fanorona::egdb::{Database, Material, Slice};

/// Table 3 rows: (slice, win, draw, loss).
fn table3() -> Vec<(Material, u64, u64, u64)> {
    include_str!("../data/table3-wdl-5x9.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("slice"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn tables_with_2_to_4_pieces_match_table_3() {
    let dir = crate::common::tables::built(Board::STANDARD, 4);
    let db = Database::new(dir.path(), Board::STANDARD);
    let mut checked = 0;
    for (material, win, draw, loss) in table3() {
        if material.pieces() > 4 {
            continue;
        }
        let slice = Slice::new(Board::STANDARD, material).unwrap();
        let file = db.slice(material).unwrap().expect("built");
        let c = table3_counts(
            &fanorona::egdb::scheme::Index::Paper(slice),
            file.payload(),
            2,
        )
        .unwrap();
        assert_eq!(
            (c.win, c.draw, c.loss),
            (win, draw, loss),
            "slice {material}"
        );
        checked += 1;
    }
    assert_eq!(checked, 6);
}
