//! How records are written in the store: fixed-width big-endian keys (so range scans come
//! out in order) and values that start with a version byte.
//!
//! First-level nodes are rkyv archives of their records (checked by bytecheck when read);
//! curve points and rote entries are written field by field; session records, small and read
//! by people debugging a store, as JSON after the version byte.

use crate::record::SessionRecord;
use fanorona_rules::position::{Color, Position};
use fanorona_rules::{Bitboard, Board};
use fanorona_search::CurvePoint;
use fanorona_search::Leaf;
use fanorona_search::pn::Node;
use fanorona_search::rote::{RoteEntry, RoteKey};

/// The version byte of every value this build writes.
pub const VALUE_VERSION: u8 = 1;

/// First-level nodes per stored chunk: a checkpoint rewrites the chunks it changed.
pub const CHUNK: usize = 1024;

/// The version byte of node chunks this build writes: the checkpoint that wrote the chunk
/// (its stamp, u64 little-endian at bytes 8..16), then an rkyv archive of the chunk's
/// `NodeRecord`s. Version 2 (format 3 stores) is the same without a stamp (taken as 0);
/// version 1, the fixed-width layout of format 2 stores, is read only by the upgrade to
/// format 3.
pub const NODES_VERSION: u8 = 3;

/// Chunks of format 3 stores: no stamp.
const NODES_VERSION_UNSTAMPED: u8 = 2;

/// The version byte of node patches: an rkyv archive of `PatchRecord`s after 8 bytes.
pub const PATCH_VERSION: u8 = 1;

/// Bytes of one node in a version 1 chunk.
const NODE_BYTES: usize = 54;

/// A first-level node as stored: the position's fields, the numbers, the links, and the
/// flags (leaf kind in bits 0-1, expanded 2, repetition 3, rote 4).
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
struct NodeRecord {
    white: u64,
    black: u64,
    pn: u64,
    dn: u64,
    since: u64,
    parent: u32,
    first: u32,
    count: u32,
    side: u8,
    flags: u8,
}

fn node_flags(n: &Node) -> u8 {
    let leaf = match n.leaf {
        Leaf::Open => 0,
        Leaf::Proven => 1,
        Leaf::Disproven => 2,
    };
    leaf | (n.expanded as u8) << 2 | (n.repetition as u8) << 3 | (n.rote as u8) << 4
}

/// Sets `n`'s leaf kind and flags from `flags` (as `node_flags` wrote them), refusing an
/// unknown leaf kind.
#[inline]
fn set_flags(n: &mut Node, flags: u8, what: &'static str) -> Result<(), DecodeError> {
    n.leaf = match flags & 3 {
        0 => Leaf::Open,
        1 => Leaf::Proven,
        2 => Leaf::Disproven,
        _ => return Err(damaged(what, "leaf kind 3")),
    };
    n.expanded = flags & 4 != 0;
    n.repetition = flags & 8 != 0;
    n.rote = flags & 16 != 0;
    Ok(())
}

/// A node from its stored fields, refusing a position off the board and an unknown leaf kind.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn node_of(
    board: Board,
    side: u8,
    white: Bitboard,
    black: Bitboard,
    numbers: (u64, u64),
    links: (u32, u32, u32),
    flags: u8,
    since: u64,
) -> Result<Node, DecodeError> {
    const W: &str = "node chunk";
    let pos = position(board, color_of(side, W)?, white, black, W)?;
    let mut n = Node {
        pos,
        pn: numbers.0,
        dn: numbers.1,
        parent: links.0,
        first: links.1,
        count: links.2,
        expanded: false,
        leaf: Leaf::Open,
        repetition: false,
        rote: false,
        since,
    };
    set_flags(&mut n, flags, W)?;
    Ok(n)
}

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

/// A value's version byte, one of `known` (the first the current one, named when it is not).
fn version(bytes: &[u8], known: &[u8], what: &'static str) -> Result<u8, DecodeError> {
    match bytes.first() {
        Some(v) if known.contains(v) => Ok(*v),
        Some(v) => Err(damaged(
            what,
            format!("value version {v} is not {}", known[0]),
        )),
        None => Err(damaged(what, "empty value")),
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
        version(bytes, &[VALUE_VERSION], what)?;
        Ok(Reader {
            bytes: &bytes[1..],
            what,
        })
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

fn color_of(b: u8, what: &'static str) -> Result<Color, DecodeError> {
    Color::from_byte(b).ok_or_else(|| damaged(what, format!("side byte {b}")))
}

/// A position of `board` from its fields, refusing pieces off the board or on both sides.
fn position(
    board: Board,
    side: Color,
    white: Bitboard,
    black: Bitboard,
    what: &'static str,
) -> Result<Position, DecodeError> {
    Position::checked_parts(board, white, black, side)
        .ok_or_else(|| damaged(what, "pieces off the board or doubled"))
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

/// The session a key of a session's tree or curve (`tree_prefix`) belongs to.
pub fn session_of_key(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.get(..8)?.try_into().ok()?))
}

pub fn chunk_key(id: u64, goal: u8, chunk: u32) -> Vec<u8> {
    let mut k = tree_prefix(id, goal);
    k.extend(chunk.to_be_bytes());
    k
}

/// The key of the patch checkpoint `seq` wrote to goal `goal`'s tree of session `id` (in the
/// patches table).
pub fn patch_key(id: u64, goal: u8, seq: u64) -> Vec<u8> {
    let mut k = tree_prefix(id, goal);
    k.extend(seq.to_be_bytes());
    k
}

/// The checkpoint that wrote a patch, from its key.
pub fn patch_seq(key: &[u8]) -> Result<u64, DecodeError> {
    after_tree(key, "node patch")
}

/// The u64 after a key's tree prefix (session and goal): a curve point's iteration, a
/// patch's checkpoint.
fn after_tree(key: &[u8], what: &'static str) -> Result<u64, DecodeError> {
    key.get(9..17)
        .map(|b| u64::from_be_bytes(b.try_into().expect("8 bytes")))
        .ok_or_else(|| damaged(what, "short key"))
}

/// The chunk of `nodes` as written by checkpoint `stamp`.
pub fn encode_chunk(nodes: &[Node], stamp: u64) -> Vec<u8> {
    let records: Vec<NodeRecord> = nodes
        .iter()
        .map(|n| NodeRecord {
            white: n.pos.white(),
            black: n.pos.black(),
            pn: n.pn,
            dn: n.dn,
            since: n.since,
            parent: n.parent,
            first: n.first,
            count: n.count,
            side: n.pos.side_to_move().byte(),
            flags: node_flags(n),
        })
        .collect();
    let archive =
        rkyv::to_bytes::<rkyv::rancor::Error>(&records).expect("node records always serialise");
    framed(NODES_VERSION, Some(stamp), &archive)
}

/// A value of `version`: the version byte, zeros to 8 bytes, the stamp if any, the archive
/// (8-byte aligned within the value).
fn framed(version: u8, stamp: Option<u64>, archive: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(ARCHIVE_AT + archive.len());
    v.push(version);
    v.resize(STAMP_AT, 0);
    if let Some(stamp) = stamp {
        v.extend(stamp.to_le_bytes());
    }
    v.extend_from_slice(archive);
    v
}

/// Where a stamped chunk's stamp starts, after the version byte and padding.
const STAMP_AT: usize = 8;

/// Where an archive starts: 8-byte aligned, so that a value the store hands out aligned is
/// read in place.
const ARCHIVE_AT: usize = 16;

/// Where the archive of an unstamped (version 2) chunk or of a patch starts.
const ARCHIVE_AT_SHORT: usize = 8;

/// Appends the nodes of a chunk of `board` to `out`, the archive checked first; returns the
/// chunk's stamp (0 for a chunk of a format 3 store).
pub fn decode_chunk(bytes: &[u8], board: Board, out: &mut Vec<Node>) -> Result<u64, DecodeError> {
    const W: &str = "node chunk";
    let (stamp, archive) = match version(bytes, &[NODES_VERSION, NODES_VERSION_UNSTAMPED], W)? {
        NODES_VERSION => {
            let stamp = bytes
                .get(STAMP_AT..ARCHIVE_AT)
                .ok_or_else(|| damaged(W, "too short"))?;
            (
                u64::from_le_bytes(stamp.try_into().expect("8 bytes")),
                &bytes[ARCHIVE_AT..],
            )
        }
        _ => (
            0,
            bytes
                .get(ARCHIVE_AT_SHORT..)
                .ok_or_else(|| damaged(W, "too short"))?,
        ),
    };
    aligned(archive, |a| decode_archive(a, board, out))?;
    Ok(stamp)
}

/// Runs `read` on `archive` in place when the store's bytes are aligned for the records, else
/// on an aligned copy.
pub fn aligned<T>(archive: &[u8], read: impl FnOnce(&[u8]) -> T) -> T {
    thread_local! {
        static ALIGNED: std::cell::RefCell<rkyv::util::AlignedVec<16>> =
            std::cell::RefCell::new(rkyv::util::AlignedVec::new());
    }
    if (archive.as_ptr() as usize).is_multiple_of(16) {
        return read(archive);
    }
    ALIGNED.with_borrow_mut(|copy| {
        copy.clear();
        copy.extend_from_slice(archive);
        read(copy)
    })
}

/// What a checkpoint changed in a node stored before it: positions, parents and the
/// since-capture hash never change once a node exists, so a patch carries the rest.
#[derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
struct PatchRecord {
    pn: u64,
    dn: u64,
    index: u32,
    first: u32,
    count: u32,
    flags: u8,
}

/// Bytes a node takes in a chunk, about (for deciding when to fold patches into chunks).
pub const NODE_BYTES_STORED: u64 = 56;

/// The patch of `nodes[i]` for every `i` in `changed`.
pub fn encode_patch(nodes: &[Node], changed: &[u32]) -> Vec<u8> {
    let records: Vec<PatchRecord> = changed
        .iter()
        .map(|&i| {
            let n = &nodes[i as usize];
            PatchRecord {
                pn: n.pn,
                dn: n.dn,
                index: i,
                first: n.first,
                count: n.count,
                flags: node_flags(n),
            }
        })
        .collect();
    let archive =
        rkyv::to_bytes::<rkyv::rancor::Error>(&records).expect("patch records always serialise");
    framed(PATCH_VERSION, None, &archive)
}

/// Applies the patch in `bytes` to `nodes`, except to nodes whose chunk was written by
/// checkpoint `seq` or later (`stamp(chunk)`: a chunk written since holds them newer);
/// adds the chunks it changed to `patched`.
pub fn apply_patch(
    bytes: &[u8],
    seq: u64,
    nodes: &mut [Node],
    stamp: impl Fn(usize) -> u64,
    patched: &mut std::collections::BTreeSet<u32>,
) -> Result<(), DecodeError> {
    const W: &str = "node patch";
    version(bytes, &[PATCH_VERSION], W)?;
    let archive = bytes
        .get(ARCHIVE_AT_SHORT..)
        .ok_or_else(|| damaged(W, "too short"))?;
    aligned(archive, |a| {
        let records = rkyv::access::<rkyv::Archived<Vec<PatchRecord>>, rkyv::rancor::Error>(a)
            .map_err(|e| damaged(W, format!("not a patch archive: {e}")))?;
        for r in records.iter() {
            let i = r.index.to_native() as usize;
            let Some(n) = nodes.get_mut(i) else {
                return Err(damaged(W, format!("node {i} is beyond the tree")));
            };
            if stamp(i / CHUNK) >= seq {
                continue;
            }
            patched.insert((i / CHUNK) as u32);
            set_flags(n, r.flags, W)?;
            n.pn = r.pn.to_native();
            n.dn = r.dn.to_native();
            n.first = r.first.to_native();
            n.count = r.count.to_native();
        }
        Ok(())
    })
}

/// The records of a chunk archive (aligned), checked, appended to `out` as nodes.
fn decode_archive(archive: &[u8], board: Board, out: &mut Vec<Node>) -> Result<(), DecodeError> {
    const W: &str = "node chunk";
    let records = rkyv::access::<rkyv::Archived<Vec<NodeRecord>>, rkyv::rancor::Error>(archive)
        .map_err(|e| damaged(W, format!("not a chunk archive: {e}")))?;
    out.reserve(records.len());
    for r in records.iter() {
        out.push(node_of(
            board,
            r.side,
            r.white.to_native(),
            r.black.to_native(),
            (r.pn.to_native(), r.dn.to_native()),
            (
                r.parent.to_native(),
                r.first.to_native(),
                r.count.to_native(),
            ),
            r.flags,
            r.since.to_native(),
        )?);
    }
    Ok(())
}

/// Appends the nodes of a version 1 chunk (fixed-width fields: side u8, white, black, pn, dn
/// u64, parent, first, count u32, flags u8, since u64, big-endian) to `out`: format 2 stores,
/// read by the upgrade to format 3.
pub fn decode_chunk_v1(bytes: &[u8], board: Board, out: &mut Vec<Node>) -> Result<(), DecodeError> {
    const W: &str = "node chunk";
    let mut r = Reader::versioned(bytes, W)?;
    if r.bytes.len() % NODE_BYTES != 0 {
        return Err(damaged(W, format!("{} bytes of nodes", r.bytes.len())));
    }
    while !r.bytes.is_empty() {
        let side = r.u8()?;
        let (white, black) = (r.u64()?, r.u64()?);
        let numbers = (r.u64()?, r.u64()?);
        let links = (r.u32()?, r.u32()?, r.u32()?);
        let flags = r.u8()?;
        out.push(node_of(
            board,
            side,
            white,
            black,
            numbers,
            links,
            flags,
            r.u64()?,
        )?);
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
    let iteration = after_tree(key, "curve point")?;
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
    v.push(k.pos.side_to_move().byte());
    v.extend(k.pos.white().to_be_bytes());
    v.extend(k.pos.black().to_be_bytes());
    v.extend(k.history.to_be_bytes());
    v.push(k.attacker.byte());
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
        Some(
            fanorona_rules::moves::Move::parse(&pos, text)
                .map_err(|e| damaged(W, e.to_string()))?,
        )
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
    use fanorona_search::Algorithm;
    use fanorona_search::Limits;
    use fanorona_search::pn::search;
    use fanorona_search::{Goal, LeafEval};

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
            Algorithm::Pn,
            Limits::none(),
            |_| {},
        );
        let bytes = encode_chunk(&tree.nodes, 7);
        let mut back = Vec::new();
        assert_eq!(decode_chunk(&bytes, pos.board(), &mut back).unwrap(), 7);
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
        // A patch changes the numbers, links and flags of the nodes it names, unless their
        // chunk was written by its checkpoint or later; a node beyond the tree is damage.
        let mut changed = tree.nodes.clone();
        changed[1].pn = 123;
        changed[1].rote = true;
        changed[2].first = 77;
        let patch = encode_patch(&changed, &[1, 2]);
        let mut patched = std::collections::BTreeSet::new();
        apply_patch(&patch, 9, &mut back, |_| 9, &mut patched).unwrap();
        assert_eq!(
            (back[1].pn, back[2].first),
            (tree.nodes[1].pn, tree.nodes[2].first)
        );
        assert!(patched.is_empty());
        apply_patch(&patch, 9, &mut back, |_| 8, &mut patched).unwrap();
        assert_eq!((back[1].pn, back[1].rote, back[2].first), (123, true, 77));
        assert_eq!(back[1].pos, tree.nodes[1].pos);
        assert_eq!(patched.into_iter().collect::<Vec<_>>(), vec![0]);
        let err = apply_patch(&patch, 9, &mut back[..2], |_| 0, &mut Default::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("node 2 is beyond"), "{err}");
        assert_eq!(patch_seq(&patch_key(3, 1, 42)).unwrap(), 42);
        // A chunk of a format 3 store (version 2, no stamp) reads as stamped 0.
        let mut old = vec![2u8; 1];
        old.resize(8, 0);
        old.extend_from_slice(&bytes[16..]);
        let mut back2 = Vec::new();
        assert_eq!(decode_chunk(&old, pos.board(), &mut back2).unwrap(), 0);
        assert_eq!(back2.len(), tree.nodes.len());

        let p = curve.last().unwrap();
        assert_eq!(
            decode_point(&curve_key(7, 1, p.iteration), &encode_point(p)).unwrap(),
            *p
        );

        let m = fanorona_rules::legal_moves(&pos)[0];
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
        // A garbled archive (its length beyond its bytes) is refused by the check, not read.
        let mut garbled = bytes.clone();
        let n = garbled.len();
        garbled[n - 1] ^= 0x7f;
        let err = decode_chunk(&garbled, pos.board(), &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a chunk archive"), "{err}");
        let mut bad = rote_key(&key);
        bad[0] = 11;
        assert!(decode_rote(&bad, &encode_rote(&e, pos.board())).is_err());
    }

    #[test]
    fn a_tree_read_back_from_the_store_adopts_what_the_rote_store_learned_elsewhere() {
        use fanorona_rules::{Color, Position};
        use fanorona_search::Leaf;
        use fanorona_search::pn::{NO_PARENT, PnTree};
        use fanorona_search::rote::{Rote, RoteEntry, RoteTable};
        let root = Position::initial("3x5".parse().unwrap());
        let goal = Goal {
            attacker: Color::White,
        };
        let leaf = LeafEval::rules_only();
        // Another search solved it: what it decided below the root, as the store keeps it.
        let (done, _) = search(&root, goal, leaf, Algorithm::Pn, Limits::none(), |_| {});
        assert!(done.root().proven());
        let mut table = RoteTable::new();
        for i in 1..done.nodes.len() {
            let n = &done.nodes[i];
            if (n.proven() || n.disproven()) && !n.repetition && n.leaf == Leaf::Open {
                let entry = RoteEntry {
                    proven: n.proven(),
                    best_move: None,
                };
                table.insert(done.rote_key(i), entry);
            }
        }
        // This one searched a little before the store knew anything.
        let mut tree = PnTree::new(root, goal, leaf, Vec::new());
        for _ in 0..6 {
            let m = tree.select_most_proving();
            tree.expand(m);
            tree.update_ancestors(m);
        }
        let before = tree.nodes.len();
        let (nodes, stats) = (tree.nodes.clone(), tree.stats);
        let was_expanded: Vec<bool> = nodes.iter().map(|n| n.expanded).collect();
        // Through the store's encoding, as a resumed session has it.
        let bytes = encode_chunk(&nodes, 0);
        let mut nodes = Vec::new();
        decode_chunk(&bytes, root.board(), &mut nodes).unwrap();
        let mut tree = PnTree::from_parts(goal, leaf, Vec::new(), nodes, stats, Some(&table));
        let changed = tree.adopt_rote();
        assert!(changed.contains(&0), "{changed:?}");
        let adopted: Vec<usize> = (0..tree.nodes.len())
            .filter(|&i| tree.nodes[i].rote)
            .collect();
        assert!(!adopted.is_empty());
        assert!(
            adopted.iter().any(|&i| was_expanded[i]),
            "an expanded node adopted, its subtree dropped"
        );
        for &i in &adopted {
            let n = &tree.nodes[i];
            assert!(!n.expanded && (n.proven() || n.disproven()));
            assert_eq!(Some(n.proven()), table.lookup(&tree.rote_key(i)));
            // Never below a decided node.
            let mut a = n.parent;
            while a != NO_PARENT {
                let p = &tree.nodes[a as usize];
                assert!(!p.rote && (p.expanded || a == 0));
                a = p.parent;
            }
        }
        assert!(tree.adopt_rote().is_empty(), "nothing more to take");
        // It goes on to the same answer, its proof checked, with the adopted leaves as given.
        while !tree.decided() {
            let m = tree.select_most_proving();
            tree.expand(m);
            tree.update_ancestors(m);
        }
        assert!(tree.root().proven());
        assert!(tree.nodes.len() >= before);
        // The kept tree takes the adopted leaves as given; the whole proof re-solves them.
        let kept = fanorona_search::solution::extract_kept(&tree, leaf).expect("a kept tree");
        assert!(fanorona_search::proof::check(&kept, None).is_ok());
        let proof = fanorona_search::solution::extract(&tree, leaf).expect("a solution tree");
        assert!(fanorona_search::proof::check(&proof, None).is_ok());
    }
}
