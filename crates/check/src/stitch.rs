//! Stitching: a partial certificate's open leaves replaced by certificates of their own, each
//! rooted at the open leaf's position with the same goal and claim, into one certificate.
//!
//! A text transform, streamed: a leaf certificate's lines go where the `o` line stood, one
//! level deeper per depth of that line, and every node number an `r K` or `s K` names is
//! moved to where node K now is. Nothing here judges the result: the checker does, on the
//! stitched file. (A leaf certificate has no past, so a disproof that needed to repeat a
//! position before the leaf is not one; such a leaf is not found decided that way and stays
//! open. A leaf proof reaching a position on the path above the leaf would be a draw in play;
//! proofs are stitched only where the checker then accepts them.)

use std::collections::BTreeMap;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::format::{self, Header, NodeLine, Tag};

#[derive(Debug, Error)]
pub enum StitchError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}: line {line}: {reason}")]
    Bad {
        path: PathBuf,
        line: u64,
        reason: String,
    },
    #[error("{path}: {reason}")]
    Mismatch { path: PathBuf, reason: String },
}

/// What a stitch did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stitched {
    /// Open leaves replaced by their certificates.
    pub closed: u64,
    /// Open leaves left open (no certificate given for them).
    pub open: u64,
    /// Node lines of the result.
    pub nodes: u64,
    /// Bytes of the result (compressed, for `.gz`).
    pub bytes: u64,
    /// The open leaves left: (number in the partial certificate, number in the result).
    pub still_open: Vec<(u64, u64)>,
}

/// The open leaf `node` (its number in the partial certificate) closed by the certificate
/// in `path`, whose root must be `position`.
#[derive(Clone, Debug)]
pub struct Leaf {
    pub node: u64,
    pub position: String,
    pub path: PathBuf,
}

pub fn io_at(path: &Path) -> impl Fn(io::Error) -> StitchError + '_ {
    move |source| StitchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The header of the certificate in `path`.
pub fn read_header(path: &Path) -> Result<Header, StitchError> {
    let mut input = format::open(path, |_| {}).map_err(io_at(path))?;
    header_of(path, &mut input)
}

/// Reads a certificate's header line.
pub(crate) fn header_of(path: &Path, input: &mut dyn BufRead) -> Result<Header, StitchError> {
    let mut bytes = Vec::new();
    format::read_line_bounded(input, &mut bytes).map_err(io_at(path))?;
    let line = String::from_utf8_lossy(&bytes);
    serde_json::from_str(line.trim_end()).map_err(|e| StitchError::Bad {
        path: path.to_path_buf(),
        line: 1,
        reason: format!("not a certificate header: {e}"),
    })
}

/// Calls `each` with every node line of `input` (after its header) and its number.
pub(crate) fn node_lines(
    path: &Path,
    input: &mut dyn BufRead,
    mut each: impl FnMut(u64, NodeLine<'_>) -> Result<(), StitchError>,
) -> Result<(), StitchError> {
    let mut bytes = Vec::new();
    let mut index = 0u64;
    loop {
        bytes.clear();
        if format::read_line_bounded(input, &mut bytes).map_err(io_at(path))? == 0 {
            return Ok(());
        }
        let text = std::str::from_utf8(&bytes).map_err(|_| StitchError::Bad {
            path: path.to_path_buf(),
            line: index + 2,
            reason: "not UTF-8 text".to_string(),
        })?;
        let line = text.strip_suffix('\n').ok_or_else(|| StitchError::Bad {
            path: path.to_path_buf(),
            line: index + 2,
            reason: "the file ends in the middle of this line".to_string(),
        })?;
        let node = format::parse_node(line).map_err(|reason| StitchError::Bad {
            path: path.to_path_buf(),
            line: index + 2,
            reason,
        })?;
        each(index, node)?;
        index += 1;
    }
}

/// New number of the partial certificate's node `k`: `k` plus the lines the closed leaves
/// before it added (`added`: each closed leaf's node and the lines added up to it, in order).
/// `r K` and `s K` name earlier nodes, so the leaves they need are always written already.
fn moved(added: &[(u64, u64)], k: u64) -> u64 {
    let i = added.partition_point(|&(node, _)| node < k);
    k + if i == 0 { 0 } else { added[i - 1].1 }
}

/// `tag` with its node number (if it names one) moved by `map`.
fn renumbered(tag: Tag, map: impl Fn(u64) -> u64) -> Tag {
    match tag {
        Tag::Repetition(k) => Tag::Repetition(map(k)),
        Tag::Shared(k) => Tag::Shared(map(k)),
        t => t,
    }
}

/// Writes `partial` with each of `leaves` in place of its open leaf to `out` (gzip for
/// `.gz`, renamed into place once whole). The result is partial only if open leaves remain.
pub fn stitch(partial: &Path, leaves: &[Leaf], out: &Path) -> Result<Stitched, StitchError> {
    // A first pass finds the open leaves, so the header can say whether any stay open.
    let mut input = format::open(partial, |_| {}).map_err(io_at(partial))?;
    let mut header = header_of(partial, &mut input)?;
    let mut opens = std::collections::BTreeSet::new();
    node_lines(partial, &mut input, |index, n| {
        if n.tag == Tag::Open {
            opens.insert(index);
        }
        Ok(())
    })?;
    let mut input = format::open(partial, |_| {}).map_err(io_at(partial))?;
    header_of(partial, &mut input)?;
    // Each leaf's header must ask the same question with the same claim, and its tables
    // (if any) must be those of the partial certificate or fit in them.
    let mut closing: BTreeMap<u64, &Leaf> = BTreeMap::new();
    for leaf in leaves {
        let mut li = format::open(&leaf.path, |_| {}).map_err(io_at(&leaf.path))?;
        let h = header_of(&leaf.path, &mut li)?;
        let mismatch = |reason: String| StitchError::Mismatch {
            path: leaf.path.clone(),
            reason,
        };
        if h.goal != header.goal || h.claim != header.claim {
            return Err(mismatch(format!(
                "\"{}\" {}, not \"{}\" {} as the partial certificate",
                h.goal, h.claim, header.goal, header.claim
            )));
        }
        if h.position != leaf.position {
            return Err(mismatch(format!(
                "rooted at {}, not at open leaf {}'s {}",
                h.position, leaf.node, leaf.position
            )));
        }
        if h.partial {
            return Err(mismatch("itself partial".to_string()));
        }
        if !opens.contains(&leaf.node) {
            return Err(mismatch(format!(
                "node {} of {} is not an open leaf",
                leaf.node,
                partial.display()
            )));
        }
        match (&h.tables, &mut header.tables) {
            (None, _) => {}
            (Some(t), slot @ None) => *slot = Some(t.clone()),
            (Some(t), Some(m)) if t.board == m.board => m.pieces = m.pieces.max(t.pieces),
            (Some(t), Some(m)) => {
                return Err(mismatch(format!(
                    "tables of {}, the partial certificate's are of {}",
                    t.board, m.board
                )));
            }
        }
        closing.insert(leaf.node, leaf);
    }

    let mut stitched = Stitched {
        open: (opens.len() - closing.len()) as u64,
        ..Stitched::default()
    };
    header.partial = stitched.open > 0;
    let mut file = format::Output::create(out).map_err(io_at(out))?;
    let result = (|| -> Result<(), StitchError> {
        let body = file.writer();
        let json = serde_json::to_string(&header).map_err(|e| io_at(out)(io::Error::other(e)))?;
        writeln!(body, "{json}").map_err(io_at(out))?;
        let mut added: Vec<(u64, u64)> = Vec::new();
        node_lines(partial, &mut input, |index, n| {
            let base = moved(&added, index);
            let Some(&leaf) = closing.get(&index) else {
                if n.tag == Tag::Open {
                    stitched.still_open.push((index, base));
                }
                let tag = renumbered(n.tag, |k| moved(&added, k));
                stitched.nodes += 1;
                return writeln!(body, "{} {} {tag}", n.depth, n.mv).map_err(io_at(out));
            };
            let mut li = format::open(&leaf.path, |_| {}).map_err(io_at(&leaf.path))?;
            header_of(&leaf.path, &mut li)?;
            let mut lines = 0u64;
            node_lines(&leaf.path, &mut li, |j, m| {
                let mv = if j == 0 { n.mv } else { m.mv };
                let tag = renumbered(m.tag, |k| k + base);
                lines += 1;
                writeln!(body, "{} {mv} {tag}", m.depth + n.depth).map_err(io_at(out))
            })?;
            if lines == 0 {
                return Err(StitchError::Bad {
                    path: leaf.path.clone(),
                    line: 2,
                    reason: "no node lines after the header".to_string(),
                });
            }
            stitched.nodes += lines;
            let before = added.last().map_or(0, |&(_, total)| total);
            added.push((index, before + lines - 1));
            stitched.closed += 1;
            Ok(())
        })?;
        Ok(())
    })();
    match result {
        Ok(()) => {
            stitched.bytes = file.finish().map_err(io_at(out))?;
            Ok(stitched)
        }
        Err(e) => {
            file.abandon();
            Err(e)
        }
    }
}
