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
    /// Seconds its check took.
    pub seconds: f64,
    /// The file's size and time of change when it was checked: a file changed since is not
    /// walked until it is checked again.
    pub stamp: Stamp,
    pub attacker: Color,
    pub proven: bool,
    pub moves: Vec<String>,
}

/// The checked certificates by root position (its text).
#[derive(Clone, Default)]
pub struct Index {
    by_root: HashMap<String, Vec<Known>>,
    /// Files that did not check, with the reason (shown, never used).
    pub refused: Vec<(String, String)>,
    /// What each file read to, by its size and time of change: a file unchanged since the
    /// last reading is not checked again.
    seen: HashMap<PathBuf, (Stamp, Reading)>,
    /// The tables' directories as they were when the files were read: a certificate refused
    /// then is checked again once they change (the tables it needs may be built now).
    tables: Vec<(String, Stamp)>,
}

/// How far a reading of the certificate directory is.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    /// Files read (checked, or taken as they were) and files in all.
    pub done: usize,
    pub total: usize,
    /// The file being checked, its size, and when its check began.
    pub file: Option<(String, u64, std::time::Instant)>,
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
    /// it was read then (a refused one only while the tables are unchanged too). The files
    /// taken as they were come first, then those checked now, one by one: `publish` sees
    /// the index so far and the progress after each, so readers need not wait for all.
    pub fn load(
        dir: &Path,
        db_dir: &Path,
        before: Option<&Index>,
        publish: &mut dyn FnMut(&Index, &Progress),
    ) -> Index {
        let mut index = Index {
            tables: tables_seen(db_dir),
            ..Index::default()
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            publish(&index, &Progress::default());
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
        let tables_same = before.is_some_and(|b| b.tables == index.tables);
        let known_before = |path: &Path, now: Stamp| {
            before
                .and_then(|b| b.seen.get(path))
                .filter(|(then, result)| *then == now && (result.is_ok() || tables_same))
                .map(|(_, result)| result.clone())
        };
        let stamped: Vec<(PathBuf, Stamp)> = files
            .into_iter()
            .map(|p| {
                let s = stamp(&p);
                (p, s)
            })
            .collect();
        // What needs no check first: it is there at once.
        let (kept, fresh): (Vec<_>, Vec<_>) = stamped
            .into_iter()
            .partition(|(p, s)| known_before(p, *s).is_some());
        let mut progress = Progress {
            done: 0,
            total: kept.len() + fresh.len(),
            file: None,
        };
        for (path, now) in kept {
            let read = known_before(&path, now).expect("partitioned as kept");
            index.add(path, now, read);
            progress.done += 1;
        }
        for (path, now) in fresh {
            progress.file = Some((
                path.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                now.0,
                std::time::Instant::now(),
            ));
            publish(&index, &progress);
            let started = std::time::Instant::now();
            let read = fanorona_certificate::verify_file(
                &path,
                Some(Tables::Dir(db_dir)),
                |_| {},
                &mut |_| {},
                &mut |_, _| {},
            )
            .map_err(|e| e.to_string())
            .and_then(|_| read(&path))
            .map(|(root, known)| {
                (
                    root,
                    Known {
                        seconds: started.elapsed().as_secs_f64(),
                        ..known
                    },
                )
            });
            index.add(path, now, read);
            progress.done += 1;
        }
        progress.file = None;
        publish(&index, &progress);
        index
    }

    /// A file read, `read` its reading: indexed by its root, or refused.
    fn add(&mut self, path: PathBuf, now: Stamp, read: Reading) {
        let name = path.display().to_string();
        self.seen.insert(path, (now, read.clone()));
        match read {
            Ok((root, known)) => self.by_root.entry(root).or_default().push(Known {
                file: name,
                stamp: now,
                ..known
            }),
            Err(why) => self.refused.push((name, why)),
        }
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
            seconds: 0.0,
            stamp: (0, None),
            attacker,
            proven: header.claim == "proven",
            moves,
        },
    ))
}

/// The tables' directories under `db_dir` (one a board), each with its stamp: building a
/// table writes into its board's directory.
fn tables_seen(db_dir: &Path) -> Vec<(String, Stamp)> {
    let mut seen: Vec<(String, Stamp)> = std::fs::read_dir(db_dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        stamp(&e.path()),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    seen.sort();
    seen
}
