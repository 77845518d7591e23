//! The certificate's text: the header line and the node lines of format 1
//! (`docs/CERTIFICATE.md`), with gzip when a file's name ends in `.gz`.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};

use fanorona_rules::position::Color;
use fanorona_tables::Wdl;

/// The `format` field of every certificate.
pub const FORMAT_NAME: &str = "fanorona-certificate";
/// The format version this program writes and reads.
pub const VERSION: u32 = 1;

/// Line 1 of a certificate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    /// The root, in the position text.
    pub position: String,
    /// "white wins" or "black wins".
    pub goal: String,
    /// "proven" or "disproven".
    pub claim: String,
    /// The tables the `d` leaves were read from; `None` when there are no `d` leaves.
    pub tables: Option<Tables>,
    /// `true` in a partial certificate: its `o` leaves are open (see `Tag::Open`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// What the writer adds (the search's work, the program); checkers ignore it.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Header {
    /// The side whose win `goal` asks about; `None` unless it is "white wins" or "black wins".
    pub fn attacker(&self) -> Option<Color> {
        self.goal.strip_suffix(" wins").and_then(Color::from_name)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tables {
    /// The tables' board (the root's board or its transpose).
    pub board: String,
    /// The largest piece count they hold.
    pub pieces: u32,
}

/// What a node line says about its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// `i`: its children follow.
    Inner,
    /// `d V`: a table leaf with the tables' value for the side to move.
    Table(Wdl),
    /// `t`: the side to move has no piece or no legal move.
    Terminal,
    /// `r K`: the position of ancestor K again.
    Repetition(u64),
    /// `s K`: the position of earlier node K, whose subtree stands for this one.
    Shared(u64),
    /// `o`: an open leaf, allowed only in a certificate whose header says `"partial": true`
    /// (this project's extension): the writer's search did not decide it again within its
    /// budget, so the claim holds only if it does. A format-1 checker refuses the tag.
    Open,
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tag::Inner => f.write_str("i"),
            Tag::Table(v) => write!(f, "d {}", wdl_letter(*v)),
            Tag::Terminal => f.write_str("t"),
            Tag::Repetition(k) => write!(f, "r {k}"),
            Tag::Shared(k) => write!(f, "s {k}"),
            Tag::Open => f.write_str("o"),
        }
    }
}

pub fn wdl_letter(v: Wdl) -> char {
    match v {
        Wdl::Win => 'w',
        Wdl::Draw => 'd',
        Wdl::Loss => 'l',
    }
}

/// A node line, borrowed from the text it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeLine<'a> {
    pub depth: u32,
    /// The move in notation; `-` at the root.
    pub mv: &'a str,
    pub tag: Tag,
}

/// Parses `DEPTH MOVE TAG [ARG]` (fields separated by one space).
pub fn parse_node(line: &str) -> Result<NodeLine<'_>, String> {
    let mut fields = line.split(' ');
    let mut next = |what: &str| {
        fields
            .next()
            .filter(|f| !f.is_empty())
            .ok_or_else(|| format!("no {what} field"))
    };
    let depth_text = next("depth")?;
    let depth =
        plain_number(depth_text).ok_or_else(|| format!("depth '{depth_text}' is not a number"))?;
    let depth = u32::try_from(depth).map_err(|_| format!("depth {depth} is too large"))?;
    let mv = next("move")?;
    let tag_text = next("tag")?;
    let mut arg = || next("argument");
    let tag = match tag_text {
        "i" => Tag::Inner,
        "t" => Tag::Terminal,
        "o" => Tag::Open,
        "d" => Tag::Table(match arg()? {
            "w" => Wdl::Win,
            "d" => Wdl::Draw,
            "l" => Wdl::Loss,
            v => return Err(format!("table value '{v}' is not w, d or l")),
        }),
        "r" | "s" => {
            let k = arg()?;
            let k = plain_number(k).ok_or_else(|| format!("node number '{k}' is not a number"))?;
            if tag_text == "r" {
                Tag::Repetition(k)
            } else {
                Tag::Shared(k)
            }
        }
        t => return Err(format!("unknown tag '{t}'")),
    };
    if fields.next().is_some() {
        return Err("more fields than the tag takes".to_string());
    }
    Ok(NodeLine { depth, mv, tag })
}

/// A number in plain decimal: digits only, no sign, no leading zero.
fn plain_number(s: &str) -> Option<u64> {
    let plain = s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    if plain { s.parse().ok() } else { None }
}

/// The longest line a certificate may have, newline included: a header or a node line is far
/// shorter; a file that says otherwise is refused before it can fill the memory. The
/// daemon's socket reads its request lines under the same bound.
pub const MAX_LINE: usize = 64 * 1024;

/// Reads a line into `buf` (newline included, as `read_until`), refusing one longer than
/// `MAX_LINE` bytes. Returns the bytes read: 0 at the end of the input.
pub fn read_line_bounded(input: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<usize> {
    let n = input.take(MAX_LINE as u64).read_until(b'\n', buf)?;
    if n == MAX_LINE && buf.last() != Some(&b'\n') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a line longer than {MAX_LINE} bytes: not a certificate"),
        ));
    }
    Ok(n)
}

/// Whether `path` names a gzip file.
pub fn is_gzip(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// Opens a certificate for reading, through gzip when its name ends in `.gz`. `counter`
/// sees the bytes read from the file itself (for a progress bar).
pub fn open(path: &Path, counter: impl FnMut(usize) + 'static) -> io::Result<Box<dyn BufRead>> {
    let file = Counting {
        inner: File::open(path)?,
        seen: Box::new(counter),
    };
    let raw = BufReader::with_capacity(1 << 20, file);
    Ok(if is_gzip(path) {
        Box::new(BufReader::with_capacity(1 << 20, MultiGzDecoder::new(raw)))
    } else {
        Box::new(raw)
    })
}

struct Counting<R> {
    inner: R,
    seen: Box<dyn FnMut(usize)>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        (self.seen)(n);
        Ok(n)
    }
}

/// A certificate being written: to `NAME.tmp`, renamed to `NAME` once whole and synced, so
/// a file under its final name is always complete.
pub struct Output {
    sink: Sink,
    tmp: PathBuf,
    path: PathBuf,
}

enum Sink {
    Plain(BufWriter<File>),
    Gzip(BufWriter<GzEncoder<File>>),
}

impl Output {
    pub fn create(path: &Path) -> io::Result<Output> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let file = File::create(&tmp)?;
        let sink = if is_gzip(path) {
            // Level 1: the text is repetitive, so fast compression already shrinks it many
            // times over, and writing must stay cheap beside the search.
            Sink::Gzip(BufWriter::with_capacity(
                1 << 20,
                GzEncoder::new(file, Compression::new(1)),
            ))
        } else {
            Sink::Plain(BufWriter::with_capacity(1 << 20, file))
        };
        Ok(Output {
            sink,
            tmp,
            path: path.to_path_buf(),
        })
    }

    pub fn writer(&mut self) -> &mut dyn Write {
        match &mut self.sink {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w,
        }
    }

    /// Completes the file (the gzip trailer), syncs it and gives it its final name; returns
    /// its size in bytes.
    pub fn finish(self) -> io::Result<u64> {
        let file = match self.sink {
            Sink::Plain(w) => w.into_inner().map_err(|e| e.into_error())?,
            Sink::Gzip(w) => w.into_inner().map_err(|e| e.into_error())?.finish()?,
        };
        file.sync_all()?;
        let bytes = file.metadata()?.len();
        drop(file);
        std::fs::rename(&self.tmp, &self.path)?;
        Ok(bytes)
    }

    /// Removes the unfinished file.
    pub fn abandon(self) {
        let tmp = self.tmp.clone();
        drop(self);
        let _ = std::fs::remove_file(tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_lines_parse_and_print_back() {
        for text in [
            "0 - i",
            "3 b2-c2A-c3A d w",
            "1 a1-b2A t",
            "7 e3-e4 r 2",
            "2 c1-b2A s 10",
        ] {
            let n = parse_node(text).unwrap();
            assert_eq!(format!("{} {} {}", n.depth, n.mv, n.tag), text);
        }
    }

    #[test]
    fn malformed_node_lines_are_refused() {
        for text in [
            "",
            "0",
            "0 -",
            "x - i",
            "01 - i",
            "-1 - i",
            "0 - q",
            "0 - d x",
            "0 - d",
            "0 - r",
            "0 - s k",
            "0 - i extra",
            "0  - i",
            "0 - s 007",
        ] {
            assert!(parse_node(text).is_err(), "{text:?} parsed");
        }
    }
}
