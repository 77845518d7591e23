//! Certificates as strategies. A proof of "X wins" tells X one winning move wherever X moves
//! and lists every reply; a disproof tells X's opponent one move that keeps X from winning
//! and lists every move of X's. So each checked certificate is a strategy for one side: the
//! proof player (`proof`) follows it along the game's line.
//!
//! A library reads only the headers of a directory's certificates at first; a certificate
//! is checked (rules and tables, as `fanorona verify` does) and held in memory the first
//! time a game reaches its root, and never believed otherwise.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use thiserror::Error;

use fanorona_check::check::{Tables, verify_tables};
use fanorona_check::explore::{Ending, Tree};
use fanorona_check::format::{self, Header};
use fanorona_rules::position::{Color, Position};
use fanorona_tables::Database;

use crate::game::Game;

#[derive(Debug, Error)]
pub enum LibraryError {
    #[error("{path}: {source}")]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One certificate of a library: what its header says, and its tree once checked.
pub struct Entry {
    /// Its file name (or the name a test gave it).
    pub name: String,
    pub root: Position,
    /// The side whose win it is about, and whether it proves that win.
    pub attacker: Color,
    pub proven: bool,
    source: Source,
    /// The checked tree, or why the certificate is not believed.
    tree: OnceLock<Result<Arc<Tree>, String>>,
}

enum Source {
    File(PathBuf),
    Text(String),
}

impl Entry {
    /// The side this certificate is a strategy for: the attacker of a proof, the defender of
    /// a disproof.
    pub fn player(&self) -> Color {
        if self.proven {
            self.attacker
        } else {
            self.attacker.opponent()
        }
    }

    /// What it promises its player: "a win" or "at least a draw".
    pub fn promise(&self) -> &'static str {
        if self.proven {
            "a win"
        } else {
            "at least a draw"
        }
    }
}

/// The certificates a player may follow.
pub struct Library {
    entries: Vec<Entry>,
    /// The tables the certificates' table leaves are checked against.
    db: Option<Arc<Database>>,
    /// Files whose header could not be read, with the reason.
    pub unreadable: Vec<(String, String)>,
}

/// Where a game stands in one certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// At one of the certificate's nodes: its move for the side to move there, if the
    /// certificate chooses for it (the strategy's side at an inner node).
    At { node: u32, ending: Ending },
    /// The certificate ended at a table leaf earlier on the line: the tables go on from it.
    BelowTableLeaf,
    /// The line left the certificate at its `index`-th move from the root (from 1), a move
    /// the certificate does not take.
    Left { index: usize },
}

impl Library {
    /// The certificates (`*.cert`, `*.cert.gz`; partial ones left out) of `dir`, their
    /// headers read; `db` checks their table leaves when they are first used.
    pub fn open(dir: &Path, db: Option<Arc<Database>>) -> Result<Library, LibraryError> {
        let listing = std::fs::read_dir(dir).map_err(|source| LibraryError::Dir {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut files: Vec<PathBuf> = listing
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                (name.ends_with(".cert") || name.ends_with(".cert.gz"))
                    && !name.contains(".partial.")
            })
            .collect();
        files.sort();
        let mut library = Library {
            entries: Vec::new(),
            db,
            unreadable: Vec::new(),
        };
        for path in files {
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            match read_header(&path) {
                Ok(header) => match entry(name.clone(), &header, Source::File(path)) {
                    Ok(e) => library.entries.push(e),
                    Err(why) => library.unreadable.push((name, why)),
                },
                Err(why) => library.unreadable.push((name, why)),
            }
        }
        Ok(library)
    }

    /// An empty library whose certificates, added with `add_text`, are checked against `db`.
    pub fn new(db: Option<Arc<Database>>) -> Library {
        Library {
            entries: Vec::new(),
            db,
            unreadable: Vec::new(),
        }
    }

    /// Adds a certificate given as text (checked when first used, as a file is).
    pub fn add_text(&mut self, name: &str, text: String) -> Result<(), String> {
        let first = text.lines().next().unwrap_or("");
        let header: Header =
            serde_json::from_str(first).map_err(|e| format!("{name}: line 1: {e}"))?;
        let e = entry(name.to_string(), &header, Source::Text(text))?;
        self.entries.push(e);
        Ok(())
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entry `i`'s tree, checked on first use; why it is not believed otherwise.
    pub fn tree(&self, i: usize) -> Result<Arc<Tree>, String> {
        let e = &self.entries[i];
        e.tree.get_or_init(|| self.check(e)).clone()
    }

    fn check(&self, e: &Entry) -> Result<Arc<Tree>, String> {
        let tables = self.db.as_deref().map(Tables::Open);
        let mut input = e.source.open()?;
        verify_tables(&mut input, tables, &mut |_| {}, &mut |_, _| {})
            .map_err(|err| format!("it does not check: line {}: {}", err.line(), err.reason()))?;
        let mut input = e.source.open()?;
        let tree = Tree::read(Path::new(&e.name), &mut input).map_err(|err| err.to_string())?;
        if tree.header.partial {
            return Err("it is partial (open leaves)".to_string());
        }
        // The file may have changed since its header was read: it is what it said it was.
        if (tree.root, tree.attacker, tree.proven) != (e.root, e.attacker, e.proven) {
            return Err("it changed since the library was read: open it again".to_string());
        }
        Ok(Arc::new(tree))
    }

    /// The certificates that are strategies for `side` and whose root the game has reached,
    /// proofs first; with the game's line from the last time it stood at the root.
    pub fn reached(&self, game: &Game, side: Color) -> Vec<(usize, usize)> {
        let mut found: Vec<(usize, usize)> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.player() == side)
            .filter_map(|(i, e)| root_index(game, &e.root).map(|at| (i, at)))
            .collect();
        found.sort_by_key(|&(i, _)| !self.entries[i].proven);
        found
    }

    /// Whether a checked disproof of "`side` wins" holds the game's position: `side` cannot
    /// win from here.
    pub fn denies_win(&self, game: &Game, side: Color) -> bool {
        self.entries.iter().enumerate().any(|(i, e)| {
            !e.proven
                && e.attacker == side
                && root_index(game, &e.root).is_some_and(|at| {
                    self.tree(i).is_ok_and(|t| {
                        // Only where it holds the position itself: below a table leaf the
                        // opponent may have erred since, and the tables know.
                        matches!(standing(&t, game, at), Standing::At { .. })
                    })
                })
        })
    }
}

/// The last index of the game's positions that is `root`.
fn root_index(game: &Game, root: &Position) -> Option<usize> {
    game.positions().iter().rposition(|p| p == root)
}

/// Where the game, from its position `at` (the certificate's root) on, stands in `tree`.
pub fn standing(tree: &Tree, game: &Game, at: usize) -> Standing {
    let board = game.position().board();
    let line: Vec<String> = game.moves()[at..]
        .iter()
        .map(|m| m.notation(board))
        .collect();
    let followed = tree.follow(&line);
    let ending = tree.ending(followed.node);
    if followed.moves == line.len() {
        return Standing::At {
            node: followed.node,
            ending,
        };
    }
    match ending {
        // A table leaf: the tables value every position below it.
        Ending::Table(_) => Standing::BelowTableLeaf,
        _ => Standing::Left {
            index: followed.moves + 1,
        },
    }
}

fn entry(name: String, header: &Header, source: Source) -> Result<Entry, String> {
    let root: Position = header
        .position
        .parse()
        .map_err(|e| format!("the root position: {e}"))?;
    let attacker = header
        .attacker()
        .ok_or_else(|| format!("goal '{}'", header.goal))?;
    if header.partial {
        return Err("a partial certificate (open leaves)".to_string());
    }
    Ok(Entry {
        name,
        root,
        attacker,
        proven: header.claim == "proven",
        source,
        tree: OnceLock::new(),
    })
}

impl Source {
    fn open(&self) -> Result<Box<dyn BufRead + '_>, String> {
        match self {
            Source::File(p) => format::open(p, |_| {})
                .map(|b| b as Box<dyn BufRead>)
                .map_err(|e| format!("{}: {e}", p.display())),
            Source::Text(t) => Ok(Box::new(t.as_bytes())),
        }
    }
}

fn read_header(path: &Path) -> Result<Header, String> {
    let mut input = format::open(path, |_| {}).map_err(|e| e.to_string())?;
    let mut line = Vec::new();
    format::read_line_bounded(&mut input, &mut line).map_err(|e| e.to_string())?;
    serde_json::from_slice(line.trim_ascii_end()).map_err(|e| format!("line 1: {e}"))
}
