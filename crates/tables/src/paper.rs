//! The paper's Table 3 (won, drawn and lost 5x9 positions per slice), for comparison.

use crate::index::Material;
use crate::stats::Counts;

const TABLE3: &str = include_str!("../../../tests/data/table3-wdl-5x9.tsv");

/// The paper's counts of a 5x9 slice, where Table 3 has them (up to 6 pieces).
pub fn table3(material: Material) -> Option<Counts> {
    TABLE3
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("slice"))
        .find_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.first()?.parse::<Material>().ok()? == material).then(|| Counts {
                win: f[1].parse().unwrap_or(0),
                draw: f[2].parse().unwrap_or(0),
                loss: f[3].parse().unwrap_or(0),
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_3_rows_are_found() {
        let c = table3("3-3".parse().unwrap()).unwrap();
        assert_eq!((c.win, c.draw, c.loss), (24137779, 13955354, 2644731));
        assert_eq!(table3("4-4".parse().unwrap()), None);
    }
}
