//! How records are written in the store: fixed-width big-endian keys (so range scans come
//! out in order) and values that start with a version byte.
//!
//! Nodes, curve points and rote entries are written field by field; session records, small
//! and read by people debugging a store, as JSON after the version byte.

use crate::position::{Color, Position};
use crate::search::CurvePoint;
use crate::search::Leaf;
use crate::search::pn::Node;
use crate::search::rote::{RoteEntry, RoteKey};
use crate::session::record::SessionRecord;
use crate::{Bitboard, Board};

/// The version byte of every value this build writes.
pub const VALUE_VERSION: u8 = 1;

/// First-level nodes per stored chunk: a checkpoint rewrites the chunks it changed.
pub const CHUNK: usize = 1024;

/// Bytes of one node in a chunk.
const NODE_BYTES: usize = 54;

#[derive(Debug, thiserror::Error)]
#[error("damaged {what} record: {why}")]
pub struct DecodeError {
    pub what: &'static str,
    pub why: String,
}

fn damaged(what: &'static str, why: impl Into<String>) -> DecodeError {
    DecodeError {
        what,
        why: why.into(),
    }
}

/// Reads fixed-width fields off a byte slice.
struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// A reader past the version byte, which must be ours.
    fn versioned(bytes: &'a [u8], what: &'static str) -> Result<Reader<'a>, DecodeError> {
        match bytes.first() {
            Some(&VALUE_VERSION) => Ok(Reader {
                bytes: &bytes[1..],
                what,
            }),
            Some(v) => Err(damaged(
                what,
                format!("value version {v} is not {VALUE_VERSION}"),
            )),
            None => Err(damaged(what, "empty value")),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.bytes.len() < n {
            return Err(damaged(self.what, "too short"));
        }
        let (a, b) = self.bytes.split_at(n);
        self.bytes = b;
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
}

fn color_byte(c: Color) -> u8 {
    match c {
        Color::White => 0,
        Color::Black => 1,
    }
}

fn color_of(b: u8, what: &'static str) -> Result<Color, DecodeError> {
    match b {
        0 => Ok(Color::White),
        1 => Ok(Color::Black),
        _ => Err(damaged(what, format!("side byte {b}"))),
    }
}

/// A position of `board` from its fields, refusing pieces off the board or on both sides.
fn position(
    board: Board,
    side: Color,
    white: Bitboard,
    black: Bitboard,
    what: &'static str,
) -> Result<Position, DecodeError> {
    let all = board.geometry().all;
    if white & black != 0 || (white | black) & !all != 0 {
        return Err(damaged(what, "pieces off the board or doubled"));
    }
    Ok(Position::from_parts(board, white, black, side))
}

// ---- sessions ----

pub fn session_key(id: u64) -> Vec<u8> {
    id.to_be_bytes().to_vec()
}

pub fn encode_session(r: &SessionRecord) -> Vec<u8> {
    let mut v = vec![VALUE_VERSION];
    v.extend(serde_json::to_vec(r).expect("a session record serialises"));
    v
}

pub fn decode_session(bytes: &[u8]) -> Result<SessionRecord, DecodeError> {
    let r = Reader::versioned(bytes, "session")?;
    serde_json::from_slice(r.bytes).map_err(|e| damaged("session", e.to_string()))
}

// ---- first-level nodes ----

/// The prefix of every chunk of one goal's tree of a session.
pub fn tree_prefix(id: u64, goal: u8) -> Vec<u8> {
    let mut k = id.to_be_bytes().to_vec();
    k.push(goal);
    k
}

pub fn chunk_key(id: u64, goal: u8, chunk: u32) -> Vec<u8> {
    let mut k = tree_prefix(id, goal);
    k.extend(chunk.to_be_bytes());
    k
}

pub fn encode_chunk(nodes: &[Node]) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + nodes.len() * NODE_BYTES);
    v.push(VALUE_VERSION);
    for n in nodes {
        v.push(color_byte(n.pos.side_to_move()));
        v.extend(n.pos.white().to_be_bytes());
        v.extend(n.pos.black().to_be_bytes());
        v.extend(n.pn.to_be_bytes());
        v.extend(n.dn.to_be_bytes());
        v.extend(n.parent.to_be_bytes());
        v.extend(n.first.to_be_bytes());
        v.extend(n.count.to_be_bytes());
        let leaf = match n.leaf {
            Leaf::Open => 0,
            Leaf::Proven => 1,
            Leaf::Disproven => 2,
        };
        v.push(leaf | (n.expanded as u8) << 2 | (n.repetition as u8) << 3 | (n.rote as u8) << 4);
        v.extend(n.since.to_be_bytes());
    }
    v
}

/// Appends the nodes of a chunk of `board` to `out`.
pub fn decode_chunk(bytes: &[u8], board: Board, out: &mut Vec<Node>) -> Result<(), DecodeError> {
    const W: &str = "node chunk";
    let mut r = Reader::versioned(bytes, W)?;
    if r.bytes.len() % NODE_BYTES != 0 {
        return Err(damaged(W, format!("{} bytes of nodes", r.bytes.len())));
    }
    while !r.bytes.is_empty() {
        let side = color_of(r.u8()?, W)?;
        let (white, black) = (r.u64()?, r.u64()?);
        let pos = position(board, side, white, black, W)?;
        let (pn, dn) = (r.u64()?, r.u64()?);
        let (parent, first, count) = (r.u32()?, r.u32()?, r.u32()?);
        let flags = r.u8()?;
        let leaf = match flags & 3 {
            0 => Leaf::Open,
            1 => Leaf::Proven,
            2 => Leaf::Disproven,
            _ => return Err(damaged(W, "leaf kind 3")),
        };
        out.push(Node {
            pos,
            pn,
            dn,
            parent,
            first,
            count,
            expanded: flags & 4 != 0,
            leaf,
            repetition: flags & 8 != 0,
            rote: flags & 16 != 0,
            since: r.u64()?,
        });
    }
    Ok(())
}

// ---- the curve ----

pub fn curve_key(id: u64, goal: u8, iteration: u64) -> Vec<u8> {
    let mut k = tree_prefix(id, goal);
    k.extend(iteration.to_be_bytes());
    k
}

pub fn encode_point(p: &CurvePoint) -> Vec<u8> {
    let mut v = vec![VALUE_VERSION];
    v.extend(p.nodes.to_be_bytes());
    v.extend(p.seconds.to_bits().to_be_bytes());
    v.extend(p.pn.to_be_bytes());
    v.extend(p.dn.to_be_bytes());
    v
}

pub fn decode_point(key: &[u8], bytes: &[u8]) -> Result<CurvePoint, DecodeError> {
    let mut r = Reader::versioned(bytes, "curve point")?;
    let iteration = key
        .get(9..17)
        .map(|b| u64::from_be_bytes(b.try_into().expect("8 bytes")))
        .ok_or_else(|| damaged("curve point", "short key"))?;
    Ok(CurvePoint {
        iteration,
        nodes: r.u64()?,
        seconds: f64::from_bits(r.u64()?),
        pn: r.u64()?,
        dn: r.u64()?,
    })
}

// ---- the rote table ----

/// Every rote key of `board` starts with this.
pub fn rote_prefix(board: Board) -> Vec<u8> {
    vec![board.rows() as u8, board.cols() as u8]
}

pub fn rote_key(k: &RoteKey) -> Vec<u8> {
    let mut v = rote_prefix(k.pos.board());
    v.push(color_byte(k.pos.side_to_move()));
    v.extend(k.pos.white().to_be_bytes());
    v.extend(k.pos.black().to_be_bytes());
    v.extend(k.history.to_be_bytes());
    v.push(color_byte(k.attacker));
    v
}

pub fn encode_rote(e: &RoteEntry, board: Board) -> Vec<u8> {
    let mut v = vec![VALUE_VERSION, e.proven as u8];
    let text = e.best_move.map(|m| m.notation(board)).unwrap_or_default();
    v.push(text.len().min(255) as u8);
    v.extend(&text.as_bytes()[..text.len().min(255)]);
    v
}

pub fn decode_rote(key: &[u8], bytes: &[u8]) -> Result<(RoteKey, RoteEntry), DecodeError> {
    const W: &str = "rote";
    if key.len() != 28 {
        return Err(damaged(W, format!("key of {} bytes", key.len())));
    }
    let board =
        Board::new(key[0] as usize, key[1] as usize).map_err(|e| damaged(W, e.to_string()))?;
    let mut k = Reader {
        bytes: &key[2..],
        what: W,
    };
    let side = color_of(k.u8()?, W)?;
    let (white, black) = (k.u64()?, k.u64()?);
    let pos = position(board, side, white, black, W)?;
    let history = k.u64()?;
    let attacker = color_of(k.u8()?, W)?;
    let mut r = Reader::versioned(bytes, W)?;
    let proven = r.u8()? != 0;
    let len = r.u8()? as usize;
    let text = std::str::from_utf8(r.take(len)?).map_err(|e| damaged(W, e.to_string()))?;
    let best_move = if text.is_empty() {
        None
    } else {
        Some(crate::moves::Move::parse(&pos, text).map_err(|e| damaged(W, e.to_string()))?)
    };
    Ok((
        RoteKey {
            pos,
            history,
            attacker,
        },
        RoteEntry { proven, best_move },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Limits;
    use crate::search::pn::{Level, search};
    use crate::search::{Goal, LeafEval};

    #[test]
    fn records_round_trip_and_damage_is_named() {
        let pos = Position::initial("3x5".parse().unwrap());
        let goal = Goal {
            attacker: Color::White,
        };
        let (tree, curve) = search(
            &pos,
            goal,
            LeafEval::rules_only(),
            Level::Pn,
            Limits::none(),
            |_| {},
        );
        let bytes = encode_chunk(&tree.nodes);
        let mut back = Vec::new();
        decode_chunk(&bytes, pos.board(), &mut back).unwrap();
        assert_eq!(back.len(), tree.nodes.len());
        for (a, b) in back.iter().zip(&tree.nodes) {
            assert_eq!(
                (
                    a.pos,
                    a.pn,
                    a.dn,
                    a.parent,
                    a.first,
                    a.count,
                    a.expanded,
                    a.leaf,
                    a.repetition,
                    a.since
                ),
                (
                    b.pos,
                    b.pn,
                    b.dn,
                    b.parent,
                    b.first,
                    b.count,
                    b.expanded,
                    b.leaf,
                    b.repetition,
                    b.since
                )
            );
        }
        let p = curve.last().unwrap();
        assert_eq!(
            decode_point(&curve_key(7, 1, p.iteration), &encode_point(p)).unwrap(),
            *p
        );

        let m = crate::legal_moves(&pos)[0];
        let key = RoteKey {
            pos,
            history: 42,
            attacker: Color::Black,
        };
        let e = RoteEntry {
            proven: true,
            best_move: Some(m),
        };
        let (k2, e2) = decode_rote(&rote_key(&key), &encode_rote(&e, pos.board())).unwrap();
        assert_eq!((k2, e2), (key, e));

        // A newer value version, a cut record, a foreign board.
        let mut newer = bytes.clone();
        newer[0] = 9;
        let err = decode_chunk(&newer, pos.board(), &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("version 9"), "{err}");
        assert!(decode_chunk(&bytes[..bytes.len() - 3], pos.board(), &mut Vec::new()).is_err());
        let mut bad = rote_key(&key);
        bad[0] = 11;
        assert!(decode_rote(&bad, &encode_rote(&e, pos.board())).is_err());
    }
}
