//! How large PN²'s second-level searches may grow.
//!
//! The paper bounds each by the first-level tree's size: the tree then grows like the square
//! root of the nodes searched, since every expansion costs as much as the tree holds. A fixed
//! bound keeps expansions cheap while the tree is small (the fastest measured on the 5x9
//! start), but the tree then grows in proportion to the nodes searched: over a run of days a
//! question still open fills the machine. A share of the tree with a floor is both: the fixed
//! bound while the tree is small, the paper's square-root growth once it is large.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SecondLevel {
    /// As the paper: at most as many nodes as the first-level tree has.
    TreeSize,
    /// At most this many nodes, whatever the first level's size.
    Fixed(u64),
    /// At most the first-level tree's size divided by `divisor`, and never below `floor`.
    Share { divisor: u64, floor: u64 },
}

impl SecondLevel {
    /// The node budget of a second-level search under a first level of `first` nodes.
    pub fn budget(self, first: u64) -> u64 {
        match self {
            SecondLevel::TreeSize => first,
            SecondLevel::Fixed(n) => n,
            SecondLevel::Share { divisor, floor } => (first / divisor).max(floor),
        }
    }
}

const FORMS: &str = "\"tree-size\", a node count, \"tree/D\" or \"max(N,tree/D)\"";

fn count(s: &str) -> Option<u64> {
    s.trim().parse::<u64>().ok().filter(|&n| n > 0)
}

/// `tree/D`: the divisor D.
fn share(s: &str) -> Option<u64> {
    count(s.trim().strip_prefix("tree/")?)
}

impl FromStr for SecondLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("'{s}' is not a second-level bound: {FORMS}");
        if s == "tree-size" {
            return Ok(SecondLevel::TreeSize);
        }
        if let Some(divisor) = share(s) {
            return Ok(SecondLevel::Share { divisor, floor: 1 });
        }
        if let Some(inner) = s.strip_prefix("max(").and_then(|r| r.strip_suffix(')')) {
            let (floor, tree) = inner.split_once(',').ok_or_else(bad)?;
            return match (count(floor), share(tree)) {
                (Some(floor), Some(divisor)) => Ok(SecondLevel::Share { divisor, floor }),
                _ => Err(bad()),
            };
        }
        count(s).map(SecondLevel::Fixed).ok_or_else(bad)
    }
}

impl fmt::Display for SecondLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecondLevel::TreeSize => f.write_str("tree-size"),
            SecondLevel::Fixed(n) => write!(f, "{n}"),
            SecondLevel::Share { divisor, floor: 1 } => write!(f, "tree/{divisor}"),
            SecondLevel::Share { divisor, floor } => write!(f, "max({floor},tree/{divisor})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_reads_back_as_it_is_written() {
        for (text, bound) in [
            ("tree-size", SecondLevel::TreeSize),
            ("30000", SecondLevel::Fixed(30_000)),
            (
                "tree/100",
                SecondLevel::Share {
                    divisor: 100,
                    floor: 1,
                },
            ),
            (
                "max(30000,tree/100)",
                SecondLevel::Share {
                    divisor: 100,
                    floor: 30_000,
                },
            ),
        ] {
            assert_eq!(text.parse::<SecondLevel>(), Ok(bound), "{text}");
            assert_eq!(bound.to_string(), text);
        }
        assert_eq!(
            "max(30000, tree/100)".parse::<SecondLevel>(),
            Ok(SecondLevel::Share {
                divisor: 100,
                floor: 30_000
            })
        );
    }

    #[test]
    fn malformed_bounds_name_the_forms() {
        for bad in [
            "",
            "0",
            "-5",
            "big",
            "tree/",
            "tree/0",
            "tree/x",
            "max(0,tree/10)",
            "max(5)",
            "max(5,tree/10",
            "max(tree/10,5)",
            "tree",
        ] {
            let e = bad.parse::<SecondLevel>().unwrap_err();
            assert!(
                e.contains("tree/D") && e.contains(&format!("'{bad}'")),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_share_is_the_floor_until_the_tree_outgrows_it() {
        let b = SecondLevel::Share {
            divisor: 100,
            floor: 30_000,
        };
        assert_eq!(b.budget(1), 30_000);
        assert_eq!(b.budget(3_000_000), 30_000);
        assert_eq!(b.budget(3_000_100), 30_001);
        assert_eq!(b.budget(29_500_000), 295_000);
        assert_eq!(SecondLevel::TreeSize.budget(1234), 1234);
        assert_eq!(SecondLevel::Fixed(7).budget(1234), 7);
    }
}
