//! Where a pair's build stands, saved beside it so that a killed build resumes.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::file::{FileError, Kind, slice_path};
use crate::index::Material;
use crate::symmetric::SymSlice;
use fanorona_rules::geometry::Board;

use super::order::PassOrder;

/// Where a pair's build stands, kept beside it in `A-B.build.json`.
#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
pub(super) struct State {
    /// Per slice of the pair: entries below this mark are through the first pass (the whole
    /// slice once a pass by big sets ends).
    pub(super) first_pass: Vec<u64>,
    /// Per slice whose first pass goes by big sets (`PassOrder::of`): big sets, by rank,
    /// below this mark are through it. Absent in older state files: none.
    #[serde(default)]
    pub(super) big_sets_done: Vec<u64>,
    /// Paika rounds done (0 while the first pass runs).
    pub(super) rounds: u32,
    /// Set once the rounds reached their fixpoint: what is left is writing the files.
    pub(super) finishing: bool,
    /// Seconds spent so far, over every run.
    pub(super) seconds: f64,
    /// Processor seconds (all threads) spent so far, over every run: beside `seconds`, what
    /// the pair costs when other work shares the cores. Absent in older state files: counted
    /// from the first run that knows it.
    #[serde(default)]
    pub(super) cpu_seconds: f64,
}

impl State {
    /// Entries of slice `x` through the first pass: under a pass by big sets, as many as
    /// the share of big sets done (an estimate: big sets do not all have as many entries).
    pub(super) fn first_pass_done(&self, x: usize, slice: &SymSlice) -> f64 {
        let sets = self.big_sets_done.get(x).copied().unwrap_or(0);
        if self.first_pass[x] == 0 && sets > 0 {
            slice.len() as f64 * sets as f64 / slice.big_sets() as f64
        } else {
            self.first_pass[x] as f64
        }
    }

    /// Units of slice `x` through its first pass in `order`.
    pub(super) fn mark(&self, x: usize, order: PassOrder) -> u64 {
        match order {
            PassOrder::Entries => self.first_pass[x],
            PassOrder::BigSets => self.big_sets_done[x],
        }
    }

    pub(super) fn set_mark(&mut self, x: usize, order: PassOrder, done: u64) {
        match order {
            PassOrder::Entries => self.first_pass[x] = done,
            PassOrder::BigSets => self.big_sets_done[x] = done,
        }
    }
}

pub(super) fn building_path(root: &Path, board: Board, material: Material) -> PathBuf {
    slice_path(root, board, material, Kind::Wdl).with_extension("wdl.building")
}

pub(super) fn save_state(path: &Path, state: &State) -> Result<(), FileError> {
    let io = |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let tmp = path.with_extension("json.tmp");
    let mut f = File::create(&tmp).map_err(io)?;
    f.write_all(&serde_json::to_vec(state).expect("a state serialises"))
        .map_err(io)?;
    f.sync_all().map_err(io)?;
    fs::rename(&tmp, path).map_err(io)
}

pub(super) fn load_state(path: &Path) -> Option<State> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Material;
    use crate::symmetric::SymSlice;

    #[test]
    fn a_state_survives_its_file_and_a_damaged_one_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("4-3.build.json");
        let state = State {
            first_pass: vec![12, 0],
            big_sets_done: vec![0, 7],
            rounds: 3,
            finishing: false,
            seconds: 1.5,
            cpu_seconds: 2.75,
        };
        save_state(&path, &state).unwrap();
        assert_eq!(load_state(&path), Some(state));
        assert!(!path.with_extension("json.tmp").exists());
        fs::write(&path, b"{\"first_pass\": [1").unwrap();
        assert_eq!(
            load_state(&path),
            None,
            "a cut state file starts the pair over"
        );
        // Older state files lack the fields added later.
        fs::write(
            &path,
            br#"{"first_pass":[5],"rounds":0,"finishing":false,"seconds":1.0}"#,
        )
        .unwrap();
        let old = load_state(&path).unwrap();
        assert_eq!((old.big_sets_done.len(), old.cpu_seconds), (0, 0.0));
    }

    #[test]
    fn marks_follow_the_pass_order() {
        let board = "5x5".parse().unwrap();
        let slice = SymSlice::new(board, Material { a: 2, b: 2 }).unwrap();
        let mut state = State {
            first_pass: vec![0],
            big_sets_done: vec![0],
            ..State::default()
        };
        state.set_mark(0, PassOrder::Entries, 40);
        assert_eq!(state.mark(0, PassOrder::Entries), 40);
        assert_eq!(state.first_pass_done(0, &slice), 40.0);
        state.first_pass[0] = 0;
        let half = slice.big_sets() / 2;
        state.set_mark(0, PassOrder::BigSets, half);
        assert_eq!(state.mark(0, PassOrder::BigSets), half);
        let done = state.first_pass_done(0, &slice);
        let share = slice.len() as f64 * half as f64 / slice.big_sets() as f64;
        assert_eq!(done, share, "by big sets: their share of the entries");
    }
}
