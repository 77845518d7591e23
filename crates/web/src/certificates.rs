//! Certificates as a source of values for the analysis page: each certificate in the
//! server's certificate directory is checked (rules and tables, as `fanorona verify` does)
//! before it is believed; then what it says of its root's moves bounds their values.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use fanorona_certificate::check::Tables;
use fanorona_certificate::format::{self, Header};
use fanorona_play::agent::Verdict;
use fanorona_rules::position::{Color, Position};

/// What one checked certificate says: the root, the question and the answer, and the root's
/// moves it contains.
#[derive(Clone, Debug)]
pub struct Known {
    pub file: String,
    /// The file's size and time of change when it was checked: a file changed since is not
    /// walked until it is checked again.
    pub stamp: Stamp,
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
pub type Stamp = (u64, Option<std::time::SystemTime>);

pub fn stamp(path: &Path) -> Stamp {
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
    pub fn exact(v: Verdict) -> Bounds {
        Bounds { low: v, high: v }
    }

    /// The same bounds for the other side.
    pub fn flipped(self) -> Bounds {
        Bounds {
            low: self.high.flipped(),
            high: self.low.flipped(),
        }
    }

    /// What both say together; `None` for nothing (bounds that disagree say nothing).
    pub fn meet(a: Option<Bounds>, b: Option<Bounds>) -> Option<Bounds> {
        match (a, b) {
            (Some(a), Some(b)) => {
                let m = Bounds {
                    low: a.low.max(b.low),
                    high: a.high.min(b.high),
                };
                (m.low <= m.high).then_some(m)
            }
            (a, None) => a,
            (None, b) => b,
        }
    }

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
                _ => fanorona_certificate::verify_file(
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
                    stamp: now,
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

    /// The checked certificates by root position (its text), in no particular order.
    pub fn roots(&self) -> impl Iterator<Item = (&String, &Vec<Known>)> {
        self.by_root.iter()
    }

    /// The checked certificates rooted at the position of text `root`.
    pub fn rooted_at(&self, root: &str) -> &[Known] {
        self.by_root.get(root).map_or(&[], Vec::as_slice)
    }

    /// What the certificates rooted at `pos` say of its value for its side to move.
    pub fn root_bounds(&self, pos: &Position) -> Option<Bounds> {
        let says = self
            .rooted_at(&pos.to_string())
            .iter()
            .map(|k| (k.attacker, k.proven));
        position_bounds(says, pos.side_to_move())
    }
}

/// What certificates say of one move of `mover`, each as (the side whose win it is about,
/// whether it proves that win, whether it lists the move where the move is played), as
/// bounds on the move's value for `mover`; `None` if none says anything (or they disagree).
///
/// A proof of "X wins" lists one winning move where X moves (a win for X) and every move
/// where X's opponent moves (each a loss for the opponent). A disproof lists one move of
/// X's opponent that keeps X from winning (at least a draw for the opponent) and every
/// move of X's (none wins: at most a draw).
pub fn bounds_of(
    says: impl IntoIterator<Item = (Color, bool, bool)>,
    mover: Color,
) -> Option<Bounds> {
    let mut b = Bounds {
        low: Verdict::Loss,
        high: Verdict::Win,
    };
    let mut any = false;
    for (attacker, proven, listed) in says {
        match (proven, mover == attacker) {
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

/// What certificates say of a position they reach, each as (the side whose win it is
/// about, whether it proves that win), as bounds on its value for `to_move`: what they say
/// of a move listed there, the position being as good as its best move.
pub fn position_bounds(
    says: impl IntoIterator<Item = (Color, bool)>,
    to_move: Color,
) -> Option<Bounds> {
    bounds_of(says.into_iter().map(|(a, p)| (a, p, true)), to_move)
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
            stamp: (0, None),
            attacker,
            proven: header.claim == "proven",
            moves,
        },
    ))
}
