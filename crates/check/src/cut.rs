//! Cutting: the certificate of a position inside another, the subtree below a line of moves
//! written as a certificate of its own (the 5x9 start's "White wins?" disproof answers every
//! first move of White; cut at one, it is that move's certificate).
//!
//! A transform of the text, with the rules only to follow positions: the subtree's lines are
//! copied one level shallower per depth of the cut, renumbered. Where a shared leaf `s K`
//! names a node outside the subtree, or a repetition leaf `r K` a position that is not on
//! its new path (node K above the cut, or the leaf itself inside a subtree copied in), K's
//! whole subtree is copied in its place: K's strategy goes on from that position, whichever
//! way it was reached. A later leaf naming K names the copy; one back to a position of its
//! new path becomes a repetition leaf. Nothing here judges the result: the checker does, on
//! the written file.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

use crate::explore::{Tree, play_line};
use crate::format::{self, Tag};
use crate::stitch::StitchError;
use fanorona_rules::moves::Move;
use fanorona_rules::position::Position;

/// A cut fails as a stitch does: a file that cannot be read or written, a line that is not
/// one, or (`Mismatch`) moves that do not lead to a node of the certificate.
pub type CutError = StitchError;

/// What a cut wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cut {
    /// The new root, in the position text.
    pub position: String,
    /// Node lines written.
    pub nodes: u64,
    /// Shared subtrees from outside the cut copied in.
    pub copied: u64,
    /// Open leaves among the written lines (a cut of a partial certificate).
    pub open: u64,
    /// Bytes of the result (compressed, for `.gz`).
    pub bytes: u64,
}

/// A run of old lines being copied: from `next` up to `end`, each `shift` levels deeper
/// (negative: shallower) than it was; the first line takes the move `first_mv`.
struct Run {
    next: u64,
    end: u64,
    shift: i64,
    first: u64,
    first_mv: String,
}

/// Writes to `out` (gzip for `.gz`, renamed into place once whole) the certificate of the
/// position after `moves` (in the paper's notation, from the root of `cert`): the subtree
/// there, with the same goal and claim.
pub fn cut(cert: &Path, moves: &[String], out: &Path) -> Result<Cut, CutError> {
    let tree = Tree::open(cert)?;
    let (pos, node) = locate(&tree, cert, moves)?;
    let (body, made) = copy_subtree(&tree, cert, pos, node)?;
    write_cut(tree.header.clone(), cert, moves, out, &body, made)
}

/// The position after `moves` from the root of `tree` (read from `cert`), and the node that
/// stands for it (through shared and repetition leaves).
fn locate(tree: &Tree, cert: &Path, moves: &[String]) -> Result<(Position, u32), CutError> {
    let played = play_line(&tree.root, moves);
    let pos = *played.positions.last().expect("the root at least");
    if let Some(e) = played.error {
        return Err(CutError::Mismatch {
            path: cert.to_path_buf(),
            reason: format!("move {} '{}' in {pos}: {}", e.index, e.text, e.reason),
        });
    }
    // Through shared and repetition leaves: such a leaf stands for node K's subtree (the
    // same position).
    let at = tree.follow(&played.moves);
    if at.moves < moves.len() {
        let i = at.moves;
        let there: Vec<&str> = tree.children(at.node).map(|c| tree.mv(c)).collect();
        return Err(CutError::Mismatch {
            path: cert.to_path_buf(),
            reason: format!(
                "the certificate does not follow {} after {}: {}",
                played.moves[i],
                if i == 0 {
                    "its root".to_string()
                } else {
                    moves[..i].join(" ")
                },
                if there.is_empty() {
                    format!("that is a leaf ({})", tree.tag(at.node))
                } else {
                    format!("it has {}", there.join(", "))
                }
            ),
        });
    }
    Ok((pos, at.node))
}

/// The subtree of node `node` (position `pos`) renumbered from 0, with the subtrees its
/// shared leaves stand for copied in where they fall outside it; its lines and counts.
fn copy_subtree(
    tree: &Tree,
    cert: &Path,
    pos: Position,
    node: u32,
) -> Result<(Vec<u8>, Cut), CutError> {
    let start = u64::from(node);
    let disproof = tree.header.claim == "disproven";
    let mut body: Vec<u8> = Vec::new();
    let mut made = Cut {
        position: pos.to_string(),
        ..Cut::default()
    };
    // Old node to the number of its first copy (always a finished subtree when a later
    // `s K` names it: a shared leaf names a node whose subtree ended before it).
    let mut copy_of: HashMap<u64, u64> = HashMap::new();
    // The new path: the position and new number of each ancestor of the line being written
    // (a repetition leaf is renumbered to the ancestor with its position).
    let mut path: Vec<(Position, u64)> = Vec::new();
    let mut runs = vec![Run {
        next: start,
        end: u64::from(tree.end(node)),
        shift: -i64::from(tree.depth(node)),
        first: start,
        first_mv: "-".to_string(),
    }];
    while let Some(run) = runs.last_mut() {
        if run.next == run.end {
            runs.pop();
            continue;
        }
        let i = run.next;
        run.next += 1;
        let depth = (i64::from(tree.depth(i as u32)) + run.shift) as u32;
        let mv = if i == run.first {
            run.first_mv.clone()
        } else {
            tree.mv(i as u32).to_string()
        };
        let tag = match tree.tag(i as u32) {
            Tag::Shared(k) | Tag::Repetition(k) => {
                let here = position_at(cert, &path, depth, &mv, &pos, i)?;
                let on_path = path[..depth as usize]
                    .iter()
                    .rev()
                    .find(|(p, _)| *p == here);
                match (on_path, copy_of.get(&k)) {
                    // Back to a position of the new path: a repetition (in a disproof; a
                    // proof's shared leaves never come back to their path).
                    (Some(&(_, new)), _) if disproof => Tag::Repetition(new),
                    // Off the path, every copy is finished.
                    (_, Some(&new)) => Tag::Shared(new),
                    // Node K's position reached another way (K outside the cut, or a
                    // repetition of a position not on the new path): K's strategy goes on
                    // from here, so its subtree is copied in.
                    _ => {
                        made.copied += 1;
                        runs.push(Run {
                            next: k,
                            end: u64::from(tree.end(k as u32)),
                            shift: i64::from(depth) - i64::from(tree.depth(k as u32)),
                            first: k,
                            first_mv: mv,
                        });
                        continue;
                    }
                }
            }
            Tag::Open => {
                made.open += 1;
                Tag::Open
            }
            t => t,
        };
        if tag == Tag::Inner {
            let here = position_at(cert, &path, depth, &mv, &pos, i)?;
            path.truncate(depth as usize);
            path.push((here, made.nodes));
        }
        copy_of.entry(i).or_insert(made.nodes);
        writeln!(body, "{depth} {mv} {tag}").expect("writing to memory");
        made.nodes += 1;
    }
    Ok((body, made))
}

/// Writes the cut certificate to `out` under a header saying where it was cut from.
fn write_cut(
    mut header: format::Header,
    cert: &Path,
    moves: &[String],
    out: &Path,
    body: &[u8],
    mut made: Cut,
) -> Result<Cut, CutError> {
    let root = std::mem::replace(&mut header.position, made.position.clone());
    header.partial = made.open > 0;
    header.extra = serde_json::Map::new();
    header.extra.insert(
        "cut".to_string(),
        serde_json::json!({
            "from": cert.file_name().map(|n| n.to_string_lossy().into_owned()),
            "root": root,
            "moves": moves,
        }),
    );
    header.extra.insert(
        "program".to_string(),
        serde_json::json!(fanorona_rules::version::producer()),
    );
    let io_out = |source| CutError::Io {
        path: out.to_path_buf(),
        source,
    };
    let mut file = format::Output::create(out).map_err(io_out)?;
    let written = (|| -> io::Result<()> {
        let w = file.writer();
        let json = serde_json::to_string(&header).map_err(io::Error::other)?;
        writeln!(w, "{json}")?;
        w.write_all(body)
    })();
    match written {
        Ok(()) => {
            made.bytes = file.finish().map_err(io_out)?;
            Ok(made)
        }
        Err(e) => {
            file.abandon();
            Err(io_out(e))
        }
    }
}

/// The position of a line at `depth` whose move is `mv`, below the new path (`root` at depth
/// 0); `i` is its old node number, for the message.
fn position_at(
    cert: &Path,
    path: &[(Position, u64)],
    depth: u32,
    mv: &str,
    root: &Position,
    i: u64,
) -> Result<Position, CutError> {
    if depth == 0 {
        return Ok(*root);
    }
    let parent = &path[depth as usize - 1].0;
    let m = Move::parse(parent, mv).map_err(|e| CutError::Bad {
        path: cert.to_path_buf(),
        line: i + 2,
        reason: format!("move {mv} in {parent}: {e}"),
    })?;
    Ok(m.apply(parent))
}
