//! What the `db` commands answer with `--json` (`build`, `convert`, `stats`, `probe`,
//! `verify`): typed, so that the command line only fills and prints them. (`db checksums` and
//! `db verify --quick` answer with `audit`'s reports.)

use std::path::PathBuf;

use fanorona_rules::Board;
use fanorona_rules::position::{Color, Position};
use serde::{Deserialize, Serialize};

use crate::index::Material;
use crate::scheme::Scheme;
use crate::stats::Counts;
use crate::wdl::Wdl;

/// `db build`: how many slices a build needed, built and found already there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TablesBuilt {
    pub board: Board,
    /// The largest piece count built.
    pub pieces: usize,
    /// With `--pair`: the pair asked for (null when building up to `pieces`).
    pub pair: Option<Material>,
    /// The tables' root directory.
    pub db: PathBuf,
    pub slices: usize,
    pub built: usize,
    pub already_there: usize,
    pub seconds: f64,
}

/// `db convert`: the slices rewritten under the symmetric index, and the bytes saved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlicesConverted {
    pub board: Board,
    pub converted: Vec<SliceConverted>,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// One slice rewritten by `db convert`: its file's bytes before and after.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliceConverted {
    pub slice: Material,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// A slice a command could not read, in its place in the report: "MISSING" or
/// "DAMAGED: why", or why it was not checked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreadableSlice {
    pub slice: Material,
    pub error: String,
}

/// `db stats`: each slice's Table 3 counts, against the paper's where it has them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableCounts {
    pub board: Board,
    pub slices: Vec<CountsRow>,
    /// Slices whose counts differ from the paper's.
    pub paper_mismatches: u64,
}

/// A slice of `db stats`: counted, or why not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CountsRow {
    Counted(SliceCounts),
    Unreadable(UnreadableSlice),
}

/// A slice's win, draw and loss counts in the paper's Table 3 convention.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliceCounts {
    pub slice: Material,
    #[serde(flatten)]
    pub counts: Counts,
    /// The paper's counts, on 5x9 where Table 3 lists the slice (the key is absent
    /// elsewhere, as is `matches_paper`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper: Option<Counts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches_paper: Option<bool>,
}

/// `db probe`: a position's value for the side to move, and each move's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PositionProbe {
    pub position: Position,
    pub value: Wdl,
    pub side_to_move: Color,
    /// Plies to a capture or the end with best play, where the tables hold distances.
    pub plies_to_conversion: Option<u32>,
    /// A move that keeps the value (the longest defence of a loss).
    pub best_move: Option<String>,
    pub moves: Vec<MoveProbe>,
}

/// A move of `db probe`: its value for the mover, and the plies it leaves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveProbe {
    #[serde(rename = "move")]
    pub mv: String,
    /// Null where the position after it is not in the tables.
    pub value: Option<Wdl>,
    pub plies_after: Option<u32>,
}

/// `db verify`: each slice's entries checked against their successors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TablesChecked {
    pub board: Board,
    pub slices: Vec<CheckedRow>,
    /// Entries that disagree with their successors, in all.
    pub errors: u64,
}

/// A slice of `db verify`: checked, or why not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CheckedRow {
    Checked(SliceChecked),
    Unreadable(UnreadableSlice),
}

/// One slice checked by `db verify`: every entry, or a sample.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliceChecked {
    pub slice: Material,
    /// Entries checked.
    pub positions: u64,
    /// Entries in the slice.
    pub entries: u64,
    pub index: Scheme,
    pub sampled: bool,
    pub errors: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A census row reads back as the kind it was: counts with the paper's, or the reason a
    /// slice was not counted (the two share only `slice`).
    #[test]
    fn count_rows_read_back_as_their_kind() {
        let counts = Counts {
            win: 158,
            draw: 334,
            loss: 26,
        };
        let report = TableCounts {
            board: Board::STANDARD,
            slices: vec![
                CountsRow::Counted(SliceCounts {
                    slice: Material { a: 1, b: 1 },
                    counts,
                    paper: Some(counts),
                    matches_paper: Some(true),
                }),
                CountsRow::Unreadable(UnreadableSlice {
                    slice: Material { a: 2, b: 1 },
                    error: "MISSING".to_string(),
                }),
            ],
            paper_mismatches: 0,
        };
        let text = serde_json::to_string(&report).unwrap();
        assert_eq!(
            text,
            r#"{"board":"5x9","slices":[{"slice":"1-1","win":158,"draw":334,"loss":26,"paper":{"win":158,"draw":334,"loss":26},"matches_paper":true},{"slice":"2-1","error":"MISSING"}],"paper_mismatches":0}"#
        );
        assert_eq!(serde_json::from_str::<TableCounts>(&text).unwrap(), report);
    }
}
