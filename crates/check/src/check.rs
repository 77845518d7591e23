//! The certificate checker: reads a certificate as a stream, one line at a time, and checks
//! every point of `docs/CERTIFICATE.md` ("What a checker verifies") with nothing but
//! the rules (positions, legal moves, the end of the game) and the table probe. It shares
//! no code with the searches that write certificates.
//!
//! Memory: the path from the root (a frame per inner ancestor with its legal moves) and
//! 16 bytes per node for the positions that shared leaves may name.

use std::io::BufRead;
use std::path::Path;
use std::time::Instant;

use thiserror::Error;

use crate::format::{FORMAT_NAME, Header, Tag, VERSION, parse_node, wdl_letter};
use fanorona_rules::geometry::Board;
use fanorona_rules::movegen::Capture;
use fanorona_rules::movegen::is_lost;
use fanorona_rules::moves::Move;
use fanorona_rules::position::{Color, Position};
use fanorona_tables::{Database, Wdl};

/// Why a certificate was not accepted. `line` counts from 1 (the header).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VerifyError {
    /// The file cannot be read as a certificate (exit status 2).
    #[error("line {line}: {reason}")]
    Unreadable { line: u64, reason: String },
    /// The certificate is read but does not prove its claim (exit status 1).
    #[error("line {line}: {reason}")]
    Wrong { line: u64, reason: String },
}

impl VerifyError {
    pub fn line(&self) -> u64 {
        match self {
            VerifyError::Unreadable { line, .. } | VerifyError::Wrong { line, .. } => *line,
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            VerifyError::Unreadable { reason, .. } | VerifyError::Wrong { reason, .. } => reason,
        }
    }
}

/// What a certificate that passed holds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Report {
    pub position: String,
    pub goal: String,
    pub claim: String,
    pub nodes: u64,
    pub inner: u64,
    pub table_leaves: u64,
    pub terminal_leaves: u64,
    pub repetition_leaves: u64,
    pub shared_leaves: u64,
    /// `o` leaves: not decided within the file (a partial certificate only).
    pub open_leaves: u64,
    /// The header says the certificate is partial: its claim holds if its open leaves do.
    pub partial: bool,
    pub max_depth: u32,
    pub seconds: f64,
}

/// An inner node whose children are being read.
struct Frame {
    index: u64,
    line: u64,
    depth: u32,
    pos: Position,
    /// The legal moves, in generation order.
    moves: Vec<Move>,
    used: Vec<bool>,
    used_count: usize,
    /// Every legal move must be answered (the answering side is to move).
    answering: bool,
}

/// Most steps a written move can have (a capture chain visits each point at most once).
const MAX_WRITTEN_STEPS: usize = 45;

impl Frame {
    /// The legal move written `text`, if there is one. The text is read once into points
    /// and capture kinds and compared with each move's, so no notation is built.
    fn find(&self, board: Board, text: &str) -> Option<usize> {
        let mut parts = text.split('-');
        let from = board.parse_point(parts.next()?)?;
        let mut steps = [(0u8, None); MAX_WRITTEN_STEPS];
        let mut len = 0;
        for part in parts {
            let (point, kind) = match part.as_bytes().last()? {
                b'A' => (&part[..part.len() - 1], Some(Capture::Approach)),
                b'W' => (&part[..part.len() - 1], Some(Capture::Withdrawal)),
                _ => (part, None),
            };
            *steps.get_mut(len)? = (board.parse_point(point)?, kind);
            len += 1;
        }
        let steps = &steps[..len];
        self.moves.iter().position(|m| {
            m.from() == from
                && m.path().len() == len
                && steps
                    .iter()
                    .enumerate()
                    .all(|(i, &(p, kind))| m.path()[i] == p && m.capture_kind(i) == kind)
        })
    }
}

/// A position in 16 bytes (the board is the root's for the whole file).
fn pack(pos: &Position) -> (u64, u64) {
    let side = u64::from(pos.side_to_move() == Color::Black) << 63;
    (pos.white(), pos.black() | side)
}

/// Where the checker reads table leaves: a directory it opens, or tables already open.
#[derive(Clone, Copy)]
pub enum Tables<'a> {
    Dir(&'a Path),
    Open(&'a Database),
}

/// The tables a checker holds.
enum Held<'a> {
    Owned(Database),
    Borrowed(&'a Database),
}

impl Held<'_> {
    fn get(&self) -> &Database {
        match self {
            Held::Owned(d) => d,
            Held::Borrowed(d) => d,
        }
    }
}

struct Checker<'a> {
    board: Board,
    /// The side whose win the goal asks about.
    attacker: Color,
    proves: bool,
    /// The tables and the largest piece count the header names.
    tables: Option<(Held<'a>, u32)>,
    /// Whether the header names tables (`null` allows no table leaf).
    tables_named: bool,
    /// Why the tables the header names are not at hand, if they are not.
    unavailable: Option<String>,
    positions: Vec<(u64, u64)>,
    stack: Vec<Frame>,
    /// Frames to reuse, so inner nodes allocate nothing once warm.
    pool: Vec<Frame>,
    report: Report,
}

fn wrong(line: u64, reason: impl Into<String>) -> VerifyError {
    VerifyError::Wrong {
        line,
        reason: reason.into(),
    }
}

fn unreadable(line: u64, reason: impl Into<String>) -> VerifyError {
    VerifyError::Unreadable {
        line,
        reason: reason.into(),
    }
}

/// Reads the next line into `buf` without its newline; `None` at the end of the file.
fn next_line(
    input: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    line_no: &mut u64,
) -> Result<Option<u64>, VerifyError> {
    buf.clear();
    *line_no += 1;
    let n = crate::format::read_line_bounded(input, buf)
        .map_err(|e| unreadable(*line_no, format!("reading the file: {e}")))?;
    if n == 0 {
        return Ok(None);
    }
    if buf.pop() != Some(b'\n') {
        return Err(unreadable(
            *line_no,
            "the file ends in the middle of this line (is it cut short?)",
        ));
    }
    Ok(Some(*line_no))
}

/// Checks the certificate read from `input`. `db_dir` holds the tables for `d` leaves.
/// `progress` sees the node count now and then.
pub fn verify(
    input: &mut dyn BufRead,
    db_dir: Option<&Path>,
    progress: &mut dyn FnMut(u64),
) -> Result<Report, VerifyError> {
    verify_with(input, db_dir, progress, &mut |_, _| {})
}

/// `verify`, also showing `table_leaf` every table leaf's position and value once checked.
pub fn verify_with(
    input: &mut dyn BufRead,
    db_dir: Option<&Path>,
    progress: &mut dyn FnMut(u64),
    table_leaf: &mut dyn FnMut(&Position, Wdl),
) -> Result<Report, VerifyError> {
    verify_tables(input, db_dir.map(Tables::Dir), progress, table_leaf)
}

/// `verify_with`, with the tables as a directory or already open (whose files were then
/// checked when first read, as any `Database` checks them).
pub fn verify_tables(
    input: &mut dyn BufRead,
    tables: Option<Tables<'_>>,
    progress: &mut dyn FnMut(u64),
    table_leaf: &mut dyn FnMut(&Position, Wdl),
) -> Result<Report, VerifyError> {
    let start = Instant::now();
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    if next_line(input, &mut buf, &mut line_no)?.is_none() {
        return Err(unreadable(1, "the file is empty"));
    }
    let mut checker = Checker::from_header(&buf, tables)?;
    let mut run = || -> Result<(), VerifyError> {
        while let Some(line) = next_line(input, &mut buf, &mut line_no)? {
            let text = std::str::from_utf8(&buf).map_err(|_| unreadable(line, "not UTF-8 text"))?;
            if let Some((pos, v)) = checker.node(line, text)? {
                table_leaf(&pos, v);
            }
            if checker.report.nodes.is_multiple_of(1 << 20) {
                progress(checker.report.nodes);
            }
        }
        checker.finish(line_no)
    };
    if let Err(e) = run() {
        // A damaged gzip stream can decode to plausible text before its checksum fails at
        // the end: read on, so that damage is reported as damage, not as a wrong proof.
        if let VerifyError::Wrong { line, reason } = &e
            && let Err(io) = std::io::copy(input, &mut std::io::sink())
        {
            return Err(unreadable(
                *line,
                format!("the file is damaged ({io}); before that was found: {reason}"),
            ));
        }
        return Err(e);
    }
    let mut report = checker.report;
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

impl<'a> Checker<'a> {
    fn from_header(text: &[u8], tables: Option<Tables<'a>>) -> Result<Checker<'a>, VerifyError> {
        let bad = |reason: String| unreadable(1, reason);
        let header: Header = serde_json::from_slice(text)
            .map_err(|e| bad(format!("the header is not a certificate header: {e}")))?;
        if header.format != FORMAT_NAME {
            return Err(bad(format!(
                "format '{}', not '{FORMAT_NAME}'",
                header.format
            )));
        }
        if header.version != VERSION {
            return Err(bad(format!(
                "format version {}: this program reads version {VERSION}",
                header.version
            )));
        }
        let root: Position = header
            .position
            .parse()
            .map_err(|e| bad(format!("the root position '{}': {e}", header.position)))?;
        let Some(attacker) = header.attacker() else {
            return Err(bad(format!(
                "goal '{}' is not \"white wins\" or \"black wins\"",
                header.goal
            )));
        };
        let proves = match header.claim.as_str() {
            "proven" => true,
            "disproven" => false,
            c => {
                return Err(bad(format!(
                    "claim '{c}' is not \"proven\" or \"disproven\""
                )));
            }
        };
        let board = root.board();
        // Tables named but not at hand only matter at the first table leaf: say why then.
        let mut unavailable = None;
        let tables = match (&header.tables, tables) {
            (None, _) => None,
            (Some(t), dir) => {
                let tb: Board = t
                    .board
                    .parse()
                    .map_err(|e| bad(format!("the tables' board '{}': {e}", t.board)))?;
                if tb != board && tb != board.transposed() {
                    return Err(bad(format!(
                        "the header names tables of {tb}, but the root is a {board} position"
                    )));
                }
                match dir {
                    Some(Tables::Open(db)) => {
                        if db.board() != fanorona_tables::file::canonical_board(board) {
                            return Err(bad(format!(
                                "the certificate uses tables of {tb}, the tables given are of {}",
                                db.board()
                            )));
                        }
                        Some((Held::Borrowed(db), t.pieces))
                    }
                    Some(Tables::Dir(dir)) => {
                        if fanorona_tables::file::board_dir(dir, board).is_dir() {
                            Some((Held::Owned(Database::new(dir, board)), t.pieces))
                        } else {
                            unavailable = Some(format!(
                                "a table leaf, and there are no tables of {tb} under {}: build them with `fanorona db build --board {tb} --pieces {} --db {}`",
                                dir.display(),
                                t.pieces,
                                dir.display()
                            ));
                            None
                        }
                    }
                    None => {
                        unavailable = Some(
                            "a table leaf: give the tables with --db DIR (the header's \"tables\" names them)"
                                .to_string(),
                        );
                        None
                    }
                }
            }
        };
        let report = Report {
            position: root.to_string(),
            goal: header.goal.clone(),
            claim: header.claim.clone(),
            partial: header.partial,
            ..Report::default()
        };
        let mut checker = Checker {
            board,
            attacker,
            proves,
            tables,
            tables_named: header.tables.is_some(),
            unavailable,
            positions: Vec::new(),
            stack: Vec::new(),
            pool: Vec::new(),
            report,
        };
        // The root's position, for the first node line to take.
        checker.positions.push(pack(&root));
        Ok(checker)
    }

    fn choosing(&self) -> Color {
        if self.proves {
            self.attacker
        } else {
            self.attacker.opponent()
        }
    }

    /// The claim in words.
    fn claim_text(&self) -> String {
        format!(
            "the claim that {} {} win",
            self.attacker,
            if self.proves { "does" } else { "does not" }
        )
    }

    /// Checks one node line; a table leaf is returned with its value.
    fn node(&mut self, line: u64, text: &str) -> Result<Option<(Position, Wdl)>, VerifyError> {
        let n = parse_node(text).map_err(|e| unreadable(line, format!("'{text}': {e}")))?;
        let index = self.report.nodes;
        let pos = if index == 0 {
            if n.depth != 0 || n.mv != "-" {
                return Err(wrong(line, "the root's line must be '0 - TAG'"));
            }
            let (white, black) = self.positions[0];
            self.unpack(white, black)
        } else {
            if n.depth == 0 {
                return Err(wrong(line, "a second root (depth 0)"));
            }
            while self.stack.last().is_some_and(|f| f.depth >= n.depth) {
                self.close()?;
            }
            let Some(parent) = self.stack.last_mut() else {
                return Err(wrong(
                    line,
                    "a node after the root's subtree ended (or below a leaf)",
                ));
            };
            if parent.depth + 1 != n.depth {
                return Err(wrong(
                    line,
                    format!(
                        "depth {} below a node of depth {} (line {}): a leaf has no children and a child is one deeper than its parent",
                        n.depth, parent.depth, parent.line
                    ),
                ));
            }
            let Some(i) = parent.find(self.board, n.mv) else {
                return Err(wrong(
                    line,
                    format!("'{}' is not a legal move in {}", n.mv, parent.pos),
                ));
            };
            if parent.used[i] {
                return Err(wrong(
                    line,
                    format!("'{}' appears twice below node {}", n.mv, parent.index),
                ));
            }
            parent.used[i] = true;
            parent.used_count += 1;
            let child = parent.moves[i].apply(&parent.pos);
            self.positions.push(pack(&child));
            child
        };
        self.report.nodes += 1;
        self.report.max_depth = self.report.max_depth.max(n.depth);
        let attacker_to_move = pos.side_to_move() == self.attacker;
        match n.tag {
            Tag::Inner => {
                self.report.inner += 1;
                self.open(index, line, n.depth, pos)?;
            }
            Tag::Terminal => {
                self.report.terminal_leaves += 1;
                if !is_lost(&pos) {
                    return Err(wrong(
                        line,
                        format!(
                            "a terminal leaf, but {} to move has pieces and a legal move in {pos}",
                            pos.side_to_move()
                        ),
                    ));
                }
                // The side to move has lost: the attacker wins if it is the other side.
                if attacker_to_move == self.proves {
                    return Err(wrong(
                        line,
                        format!(
                            "a terminal leaf where {} has lost, against {}",
                            pos.side_to_move(),
                            self.claim_text()
                        ),
                    ));
                }
            }
            Tag::Table(v) => {
                self.report.table_leaves += 1;
                self.table_leaf(line, &pos, v)?;
                let attacker_wins =
                    matches!((v, attacker_to_move), (Wdl::Win, true) | (Wdl::Loss, false));
                if attacker_wins != self.proves {
                    return Err(wrong(
                        line,
                        format!(
                            "a table leaf '{}' for {} to move, against {}",
                            wdl_letter(v),
                            pos.side_to_move(),
                            self.claim_text()
                        ),
                    ));
                }
                return Ok(Some((pos, v)));
            }
            Tag::Repetition(k) => {
                self.report.repetition_leaves += 1;
                if self.proves {
                    return Err(wrong(
                        line,
                        "a repetition leaf in a proof (a repetition is a draw)",
                    ));
                }
                if !self.stack.iter().any(|f| f.index == k) {
                    return Err(wrong(
                        line,
                        format!("r {k}: node {k} is not an ancestor of this node"),
                    ));
                }
                self.same_position(line, k, &pos, "r")?;
            }
            Tag::Shared(k) => {
                self.report.shared_leaves += 1;
                if k >= index {
                    return Err(wrong(
                        line,
                        format!(
                            "s {k}: a shared leaf must name an earlier node (this is node {index})"
                        ),
                    ));
                }
                if self.stack.iter().any(|f| f.index == k) {
                    return Err(wrong(
                        line,
                        format!("s {k}: node {k} is an ancestor, its subtree has not ended"),
                    ));
                }
                self.same_position(line, k, &pos, "s")?;
            }
            Tag::Open => {
                self.report.open_leaves += 1;
                if !self.report.partial {
                    return Err(wrong(
                        line,
                        "an open leaf 'o' in a certificate whose header does not say \"partial\": true",
                    ));
                }
            }
        }
        Ok(None)
    }

    fn unpack(&self, white: u64, black: u64) -> Position {
        let side = if black >> 63 == 1 {
            Color::Black
        } else {
            Color::White
        };
        Position::from_parts(self.board, white, black & !(1 << 63), side)
    }

    fn same_position(
        &self,
        line: u64,
        k: u64,
        pos: &Position,
        tag: &str,
    ) -> Result<(), VerifyError> {
        if self.positions[k as usize] != pack(pos) {
            let (w, b) = self.positions[k as usize];
            return Err(wrong(
                line,
                format!(
                    "{tag} {k}: node {k} is {}, this node is {pos}",
                    self.unpack(w, b)
                ),
            ));
        }
        Ok(())
    }

    /// Checks a table leaf's value against the tables.
    fn table_leaf(&self, line: u64, pos: &Position, v: Wdl) -> Result<(), VerifyError> {
        if !self.tables_named {
            return Err(wrong(
                line,
                "a table leaf, but the header's \"tables\" is null",
            ));
        }
        let Some((db, pieces)) = &self.tables else {
            let why = self.unavailable.clone().unwrap_or_default();
            return Err(unreadable(line, why));
        };
        if pos.piece_count() > *pieces {
            return Err(wrong(
                line,
                format!(
                    "a table leaf with {} pieces, but the header's tables hold at most {pieces}",
                    pos.piece_count()
                ),
            ));
        }
        let actual = db
            .get()
            .lookup(pos)
            .map_err(|e| unreadable(line, e.to_string()))?;
        if actual != v {
            return Err(wrong(
                line,
                format!(
                    "a table leaf '{}', but the tables hold '{}' for {pos}",
                    wdl_letter(v),
                    wdl_letter(actual)
                ),
            ));
        }
        Ok(())
    }

    /// Starts reading the children of inner node `index`.
    fn open(
        &mut self,
        index: u64,
        line: u64,
        depth: u32,
        pos: Position,
    ) -> Result<(), VerifyError> {
        let mut f = self.pool.pop().unwrap_or_else(|| Frame {
            index,
            line,
            depth,
            pos,
            moves: Vec::new(),
            used: Vec::new(),
            used_count: 0,
            answering: false,
        });
        f.moves.clear();
        f.used.clear();
        fanorona_rules::movegen::for_each_move(&pos, |m| {
            f.moves.push(Move::from_ref(m));
            f.used.push(false);
        });
        if f.moves.is_empty() {
            return Err(wrong(
                line,
                format!(
                    "an inner node, but {} to move has lost: a position with no legal move is a 't' leaf",
                    pos.side_to_move()
                ),
            ));
        }
        f.index = index;
        f.line = line;
        f.depth = depth;
        f.pos = pos;
        f.used_count = 0;
        f.answering = pos.side_to_move() != self.choosing();
        self.stack.push(f);
        Ok(())
    }

    /// Ends the innermost open node: its children must be complete.
    fn close(&mut self) -> Result<(), VerifyError> {
        let f = self.stack.pop().expect("a node is open");
        if f.answering && f.used_count != f.moves.len() {
            let missing = (0..f.moves.len())
                .find(|&i| !f.used[i])
                .expect("one is missing");
            return Err(wrong(
                f.line,
                format!(
                    "node {} ({} to move answers): the legal move '{}' is not answered",
                    f.index,
                    f.pos.side_to_move(),
                    f.moves[missing].notation(self.board)
                ),
            ));
        }
        if !f.answering && f.used_count == 0 {
            return Err(wrong(
                f.line,
                format!(
                    "node {} ({} to move chooses): no move given",
                    f.index,
                    f.pos.side_to_move()
                ),
            ));
        }
        self.pool.push(f);
        Ok(())
    }

    /// At the end of the file: every open node must be complete.
    fn finish(&mut self, end: u64) -> Result<(), VerifyError> {
        if self.report.nodes == 0 {
            return Err(unreadable(end, "no node lines after the header"));
        }
        while !self.stack.is_empty() {
            self.close()?;
        }
        Ok(())
    }
}
