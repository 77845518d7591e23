//! The learned first numbers' weights of a session that does not use the built-in ones
//! (`weights` in the config): the file's bytes kept in the session's record, so that a
//! week-long session searches with the same weights however the file changes, wherever it
//! goes, and after a backup is put back.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use fanorona_rules::Board;
use fanorona_search::learned::{Model, WeightsError};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// The file they were read from (shown by `session status`).
    pub file: PathBuf,
    /// Its bytes, in hexadecimal.
    pub hex: String,
}

impl Weights {
    /// Reads the weights file at `path` for a session on `board`: refused, the file named,
    /// unless it holds whole weights of that board or its transpose.
    pub fn read(path: &Path, board: Board) -> Result<Weights, WeightsError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| WeightsError::Unreadable(name.clone(), e.to_string()))?;
        Model::from_bytes_for(&name, &bytes, board)?;
        Ok(Weights {
            file: path.to_path_buf(),
            hex: crate::store::hex(&bytes),
        })
    }

    /// The model they make, read for `board`.
    pub fn model(&self, board: Board) -> Result<Model, WeightsError> {
        let name = format!(
            "the weights the session keeps (read from {})",
            self.file.display()
        );
        let bytes: Option<Vec<u8>> = self
            .hex
            .len()
            .is_multiple_of(2)
            .then(|| {
                (0..self.hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(self.hex.get(i..i + 2)?, 16).ok())
                    .collect()
            })
            .flatten();
        let bytes = bytes.ok_or_else(|| WeightsError::Damaged(name.clone()))?;
        Model::from_bytes_for(&name, &bytes, board)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn kept_weights_make_the_files_model_and_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let board: Board = "5x9".parse().unwrap();
        let builtin = fanorona_search::learned::builtin(board).unwrap();
        let path = file(dir.path(), "w.fnlw", &builtin.to_bytes());
        let kept = Weights::read(&path, "9x5".parse().unwrap()).unwrap();
        // The file may go: the record holds the weights.
        std::fs::remove_file(&path).unwrap();
        let m = kept.model(board).unwrap();
        assert_eq!((&m.w1, &m.w2), (&builtin.w1, &builtin.w2));
        let e = Weights::read(&path, board).unwrap_err().to_string();
        assert!(e.contains("w.fnlw") && e.contains("fanorona learn"), "{e}");
        let other = Weights::read(
            &file(dir.path(), "x.fnlw", &builtin.to_bytes()),
            "5x5".parse().unwrap(),
        );
        assert!(
            matches!(other, Err(WeightsError::OtherBoard(..))),
            "{other:?}"
        );
        let mut damaged = kept.clone();
        damaged.hex.replace_range(100..102, "zz");
        assert!(matches!(
            damaged.model(board),
            Err(WeightsError::Damaged(_))
        ));
        damaged.hex.truncate(7);
        assert!(matches!(
            damaged.model(board),
            Err(WeightsError::Damaged(_))
        ));
    }
}
