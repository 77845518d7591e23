//! Which search answers a question: the names `solve --algo`, `session start --algo`, a
//! session's record and the daemon's answers use.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A proof search. PN and the two PN² build a first-level tree (a session keeps it in the
/// store); df-pn searches depth-first with a transposition table and builds none.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Algorithm {
    /// Allis's proof-number search: a leaf's children are generated and evaluated.
    #[serde(rename = "pn")]
    Pn,
    /// PN², as the paper: a leaf's children come from a second-level PN search bounded by
    /// the first-level tree's size.
    #[serde(rename = "pn2")]
    Pn2,
    /// PN² with df-pn at the second level (same bound), its transposition table kept across
    /// iterations.
    #[serde(rename = "pn2-dfpn")]
    Pn2DfPn,
    /// df-pn with a transposition table.
    #[serde(rename = "dfpn")]
    DfPn,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Pn,
        Algorithm::Pn2,
        Algorithm::Pn2DfPn,
        Algorithm::DfPn,
    ];

    /// The algorithms that build a first-level tree: those a session can run.
    pub const FIRST_LEVEL: [Algorithm; 3] = [Algorithm::Pn, Algorithm::Pn2, Algorithm::Pn2DfPn];

    /// Its name in text: "pn", "pn2", "pn2-dfpn" or "dfpn".
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Pn => "pn",
            Algorithm::Pn2 => "pn2",
            Algorithm::Pn2DfPn => "pn2-dfpn",
            Algorithm::DfPn => "dfpn",
        }
    }

    /// What it is, in a few words (the command line's help).
    pub fn about(self) -> &'static str {
        match self {
            Algorithm::Pn => "Allis's proof-number search",
            Algorithm::Pn2 => "PN², as the paper",
            Algorithm::Pn2DfPn => "PN² with df-pn at the second level",
            Algorithm::DfPn => "df-pn with a transposition table",
        }
    }

    /// Whether it builds a first-level tree (PN and PN²; not df-pn).
    pub fn has_first_level(self) -> bool {
        self != Algorithm::DfPn
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An algorithm's name not known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown algorithm '{0}': pn, pn2, pn2-dfpn or dfpn")]
pub struct UnknownAlgorithm(pub String);

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    fn from_str(s: &str) -> Result<Algorithm, UnknownAlgorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| UnknownAlgorithm(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_in_text_and_json() {
        for a in Algorithm::ALL {
            assert_eq!(a.name().parse::<Algorithm>(), Ok(a));
            assert_eq!(
                serde_json::to_string(&a).unwrap(),
                format!("\"{}\"", a.name())
            );
        }
        assert!("pn3".parse::<Algorithm>().is_err());
    }
}
