//! Certificates as a source of values for the analysis page: each certificate in the
//! server's certificate directory is checked (rules and tables, as `fanorona verify` does)
//! before it is believed; then what it says of its root's moves bounds their values.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::certificate::check::Tables;
use crate::certificate::format::{self, Header};
use crate::play::agent::Verdict;
use crate::position::{Color, Position};

/// What one checked certificate says: the root, the question and the answer, and the root's
/// moves it contains.
#[derive(Clone, Debug)]
pub struct Known {
    pub file: String,
    pub attacker: Color,
    pub proven: bool,
    pub moves: Vec<String>,
}

/// The checked certificates by root position (its text).
#[derive(Default)]
pub struct Index {
    by_root: HashMap<String, Vec<Known>>,
    /// Files that did not check, with the reason (shown, never used).
    pub refused: Vec<(String, String)>,
    /// What each file read to, by its size and time of change: a file unchanged since the
    /// last reading is not checked again.
    seen: HashMap<PathBuf, (Stamp, Reading)>,
}

/// A certificate file read: its root and what it says, or why it is not believed.
type Reading = Result<(String, Known), String>;

/// A file's size and last change.
type Stamp = (u64, Option<std::time::SystemTime>);

fn stamp(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok();
    (
        m.as_ref().map_or(0, |m| m.len()),
        m.and_then(|m| m.modified().ok()),
    )
}

/// The bounds on a move's value for the side that plays it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub low: Verdict,
    pub high: Verdict,
}

impl Bounds {
    /// The value as the page words it: exact, "at least a draw" or "at most a draw".
    pub fn words(self) -> Option<&'static str> {
        match (self.low, self.high) {
            (l, h) if l == h => Some(l.name()),
            (Verdict::Draw, Verdict::Win) => Some("at least a draw"),
            (Verdict::Loss, Verdict::Draw) => Some("at most a draw"),
            _ => None,
        }
    }
}

impl Index {
    /// Reads and checks every `*.cert` and `*.cert.gz` file of `dir`, with the tables under
    /// `db_dir` for their table leaves; a file `before` read, unchanged since, is taken as
    /// it was read then.
    pub fn load(dir: &Path, db_dir: &Path, before: Option<&Index>) -> Index {
        let mut index = Index::default();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return index;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.ends_with(".cert") || name.ends_with(".cert.gz")
            })
            .collect();
        files.sort();
        for path in files {
            let name = path.display().to_string();
            let now = stamp(&path);
            let read_now = match before.and_then(|b| b.seen.get(&path)) {
                Some((then, result)) if *then == now => result.clone(),
                _ => crate::certificate::verify_file(
                    &path,
                    Some(Tables::Dir(db_dir)),
                    |_| {},
                    &mut |_| {},
                    &mut |_, _| {},
                )
                .map_err(|e| e.to_string())
                .and_then(|_| read(&path)),
            };
            index.seen.insert(path, (now, read_now.clone()));
            match read_now {
                Ok((root, known)) => index.by_root.entry(root).or_default().push(Known {
                    file: name,
                    ..known
                }),
                Err(why) => index.refused.push((name, why)),
            }
        }
        index
    }

    pub fn len(&self) -> usize {
        self.by_root.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.by_root.is_empty()
    }

    /// What the certificates rooted at `pos` say of its move `notation`, for its mover.
    ///
    /// A proof of "X wins" lists one winning move where X moves (a win for X) and every move
    /// where X's opponent moves (each a loss for the opponent). A disproof lists one move of
    /// X's opponent that keeps X from winning (at least a draw for the opponent) and every
    /// move of X's (none wins: at most a draw).
    pub fn bounds(&self, pos: &Position, notation: &str) -> Option<Bounds> {
        let mover = pos.side_to_move();
        let mut b = Bounds {
            low: Verdict::Loss,
            high: Verdict::Win,
        };
        let mut any = false;
        for k in self.by_root.get(&pos.to_string())? {
            let listed = k.moves.iter().any(|m| m == notation);
            match (k.proven, mover == k.attacker) {
                (true, true) if listed => b.low = Verdict::Win,
                (true, false) => b.high = Verdict::Loss,
                (false, false) if listed => b.low = b.low.max(Verdict::Draw),
                (false, true) => b.high = b.high.min(Verdict::Draw),
                _ => continue,
            }
            any = true;
        }
        (any && b.low <= b.high).then_some(b)
    }
}

/// The root and what a (checked) certificate says: its header and its root's moves.
fn read(path: &Path) -> Reading {
    let mut input = format::open(path, |_| {}).map_err(|e| e.to_string())?;
    let mut line = String::new();
    input.read_line(&mut line).map_err(|e| e.to_string())?;
    let header: Header = serde_json::from_str(line.trim_end()).map_err(|e| e.to_string())?;
    let root: Position = header.position.parse().map_err(|e| format!("{e}"))?;
    let attacker = header
        .attacker()
        .ok_or_else(|| format!("goal '{}'", header.goal))?;
    let mut moves = Vec::new();
    for l in input.lines() {
        let l = l.map_err(|e| e.to_string())?;
        let node = format::parse_node(&l)?;
        if node.depth == 1 {
            moves.push(node.mv.to_string());
        }
    }
    Ok((
        root.to_string(),
        Known {
            file: String::new(),
            attacker,
            proven: header.claim == "proven",
            moves,
        },
    ))
}
