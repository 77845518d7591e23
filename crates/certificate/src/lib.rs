//! Proof certificates (format 1 of `docs/CERTIFICATE.md`): a solution tree written as
//! text so that anyone can re-check a result with the rules and the tables alone.
//!
//! `write` turns a decided search into a certificate; `check` verifies one and shares no
//! code with the searches (only the rules and the table probe).

pub mod checked;
pub mod close;
pub mod decided;
pub mod write;

// The checker and the certificate format live in `fanorona-check`, which cannot reach the
// searches; they are named here too so that `certificate::check` reads as before.
pub use fanorona_check::{check, cut, explore, format, report, stitch};

use std::path::{Path, PathBuf};

use fanorona_search::Goal;

pub use check::{Report, Tables, VerifyError, verify, verify_tables, verify_with};
use serde_json::{Value, json};
pub use write::{Cancel, Partial, Solved, WriteError, Written};

/// `PREFIX.white-wins` followed by `ending`.
fn goal_file(prefix: &Path, goal: Goal, ending: &str) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(format!(".{}-wins{ending}", goal.attacker));
    PathBuf::from(name)
}

/// The file of `goal`'s certificate under `prefix`: `PREFIX.white-wins.cert.gz`.
pub fn path_for(prefix: &Path, goal: Goal) -> PathBuf {
    goal_file(prefix, goal, ".cert.gz")
}

/// A partial certificate's file under `prefix`: `PREFIX.white-wins.partial.cert.gz`.
pub fn partial_path_for(prefix: &Path, goal: Goal) -> PathBuf {
    goal_file(prefix, goal, ".partial.cert.gz")
}

/// The list of a partial certificate's open leaves under `prefix`:
/// `PREFIX.white-wins.open.jsonl`.
pub fn open_list_for(prefix: &Path, goal: Goal) -> PathBuf {
    goal_file(prefix, goal, ".open.jsonl")
}

/// Writes `solved`'s certificate to `path` (gzip for `.gz`): to a temporary name, renamed
/// once whole. `extra` goes into the header beside the format's keys; with `partial`, the
/// header says so and nodes not decided within its budget are open leaves.
pub fn write_file(
    path: &Path,
    solved: Solved<'_, '_>,
    extra: serde_json::Map<String, serde_json::Value>,
    partial: Option<Partial<'_>>,
    cancel: Option<&Cancel>,
    progress: &mut dyn FnMut(&Written),
) -> Result<Written, WriteError> {
    let mut header = write::header(&solved, extra);
    header.partial = partial.is_some();
    let mut out = format::Output::create(path)?;
    match write::write(out.writer(), &header, solved, partial, cancel, progress) {
        Ok(mut w) => {
            w.bytes = out.finish()?;
            Ok(w)
        }
        Err(e) => {
            out.abandon();
            Err(e)
        }
    }
}

/// Verifies the certificate in the file `path` (gzip for `.gz`); `bytes` sees the bytes read
/// from the file, `progress` the node count.
pub fn verify_file(
    path: &Path,
    tables: Option<Tables<'_>>,
    bytes: impl FnMut(usize) + 'static,
    progress: &mut dyn FnMut(u64),
    table_leaf: &mut dyn FnMut(&fanorona_rules::position::Position, fanorona_tables::Wdl),
) -> Result<Report, VerifyError> {
    let mut input = format::open(path, bytes).map_err(|e| VerifyError::Unreadable {
        line: 0,
        reason: format!("{}: {e}", path.display()),
    })?;
    verify_tables(&mut input, tables, progress, table_leaf)
}

/// The header keys a writer adds beside the format's: the search that decided the question
/// and this program's version.
pub fn header_extra(search: Value) -> serde_json::Map<String, Value> {
    let mut extra = serde_json::Map::new();
    extra.insert("search".to_string(), search);
    extra.insert(
        "program".to_string(),
        json!(fanorona_rules::version::producer()),
    );
    extra
}

/// A certificate written and then checked by the checker.
pub struct Made {
    pub goal: Goal,
    pub claim: &'static str,
    pub path: PathBuf,
    pub written: Written,
    pub check: Result<Report, VerifyError>,
    /// The list of open leaves, when the certificate is partial and has some.
    pub open_list: Option<PathBuf>,
}

impl Made {
    /// It passed the checker (a partial certificate passes for what it holds).
    pub fn verified(&self) -> bool {
        self.check.is_ok()
    }

    /// It passed the checker and has no open leaf: a certificate of the claim.
    pub fn whole(&self) -> bool {
        self.verified() && self.open_list.is_none() && self.written.open == 0
    }

    /// What it is in a few numbers: how `solve --json`, the daemon and `session certificate`
    /// report it.
    pub fn summary(&self) -> Summary {
        let w = &self.written;
        Summary {
            goal: self.goal.to_string(),
            claim: self.claim.to_string(),
            path: self.path.display().to_string(),
            nodes: w.nodes,
            shared_leaves: w.shared,
            bytes: w.bytes,
            resolved_nodes: w.resolved,
            resolve_search_nodes: w.resolve_search_nodes,
            write_seconds: w.seconds,
            verified: self.verified(),
            open_leaves: w.open,
            closed_leaves: w.closed,
            open_list: self.open_list.as_ref().map(|p| p.display().to_string()),
            verify_seconds: self.check.as_ref().map(|r| r.seconds).ok(),
            verify_error: self.check.as_ref().err().map(|e| e.to_string()),
        }
    }
}

/// A certificate written and checked, as reported (`Made::summary`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// The question: "white wins" or "black wins".
    pub goal: String,
    /// "proven" or "disproven".
    pub claim: String,
    pub path: String,
    /// Node lines, and the shared leaves among them.
    pub nodes: u64,
    pub shared_leaves: u64,
    pub bytes: u64,
    /// Node lines the search had not kept, re-solved, and the search nodes that took.
    pub resolved_nodes: u64,
    pub resolve_search_nodes: u64,
    pub write_seconds: f64,
    /// It passed the checker (a partial one for what it holds).
    pub verified: bool,
    /// Leaves left open (a partial certificate), and open leaves closed since.
    pub open_leaves: u64,
    pub closed_leaves: u64,
    /// Where the open leaves are listed.
    pub open_list: Option<String>,
    pub verify_seconds: Option<f64>,
    pub verify_error: Option<String>,
}

/// How `make` writes a certificate.
#[derive(Clone, Copy, Default)]
pub struct Terms<'c> {
    /// Re-deciding a node may take at most this many search nodes: what exceeds it is left
    /// open, in a partial certificate (`partial_path_for`) whose open leaves are listed
    /// (`open_list_for`). Unbounded when `None`.
    pub leaf_budget: Option<u64>,
    /// Then solve each open leaf on its own and stitch it in (`close`), so the certificate
    /// comes out whole unless a leaf resists this search too.
    pub close: Option<close::CloseOptions<'c>>,
    /// Set from outside to give up (`WriteError::Cancelled`): seen between nodes, by the
    /// re-solving search, and between a leaf's steps of 10 M nodes.
    pub cancel: Option<&'c Cancel>,
    /// A line now and then while the open leaves are solved.
    pub report: Option<&'c (dyn Fn(&str) + Sync)>,
}

/// Writes the certificate of `solved` under `prefix` (`path_for`) and verifies it, on
/// `terms`. A partial certificate that ends with no leaf open (at once, or once its leaves
/// are closed) is whole and takes the certificate's own name.
pub fn make(
    prefix: &Path,
    solved: Solved<'_, '_>,
    extra: serde_json::Map<String, Value>,
    db_dir: Option<&Path>,
    terms: Terms<'_>,
    progress: &mut dyn FnMut(&Written),
) -> Result<Made, WriteError> {
    let full = path_for(prefix, solved.goal);
    let (db, goal, proves) = (solved.db, solved.goal, solved.proves);
    let claim = if proves { "proven" } else { "disproven" };
    let (mut written, mut path, mut open_list) = match terms.leaf_budget {
        None => (
            write_file(&full, solved, extra, None, terms.cancel, progress)?,
            full.clone(),
            None,
        ),
        Some(leaf_budget) => write_partial(prefix, solved, extra, leaf_budget, terms, progress)?,
    };
    if let (Some(opts), Some(list)) = (terms.close, open_list.clone()) {
        let closing = Closing {
            prefix,
            goal,
            proves,
            db,
            db_dir,
        };
        if closing.close(&path, &list, &opts, terms, &mut written)? {
            (path, open_list) = (full, None);
        }
    }
    // The search's tables are open already (their files checked when first read).
    let tables = db.map(Tables::Open).or(db_dir.map(Tables::Dir));
    let check = verify_file(&path, tables, |_| {}, &mut |_| {}, &mut |_, _| {});
    Ok(Made {
        goal,
        claim,
        path,
        written,
        check,
        open_list,
    })
}

/// `make` within a leaf budget: the partial certificate and its list of open leaves (the list
/// is renamed into place only once both are whole), or the whole certificate under its own
/// name when nothing was left open. Returns what was written, its file and its list.
fn write_partial(
    prefix: &Path,
    solved: Solved<'_, '_>,
    extra: serde_json::Map<String, Value>,
    leaf_budget: u64,
    terms: Terms<'_>,
    progress: &mut dyn FnMut(&Written),
) -> Result<(Written, PathBuf, Option<PathBuf>), WriteError> {
    let goal = solved.goal;
    let path = partial_path_for(prefix, goal);
    let list_path = open_list_for(prefix, goal);
    let tmp = goal_file(prefix, goal, ".open.jsonl.tmp");
    let mut list = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    let partial = Partial {
        leaf_budget,
        list: &mut list,
    };
    let written = match write_file(&path, solved, extra, Some(partial), terms.cancel, progress) {
        Ok(w) => w,
        Err(e) => {
            drop(list);
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    list.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    if written.open == 0 {
        std::fs::remove_file(&tmp)?;
        let full = path_for(prefix, goal);
        // Its header says "partial": copied through the stitch (nothing to close), whose
        // header says it only when leaves stay open.
        let done = stitch::stitch(&path, &[], &full)?;
        std::fs::remove_file(&path)?;
        let written = Written {
            bytes: done.bytes,
            ..written
        };
        // An earlier try's list names nodes of a file that is gone now.
        let _ = std::fs::remove_file(&list_path);
        Ok((written, full, None))
    } else {
        std::fs::rename(&tmp, &list_path)?;
        Ok((written, path, Some(list_path)))
    }
}

/// Closing a partial certificate that `make` just wrote.
struct Closing<'p, 'a> {
    prefix: &'p Path,
    goal: Goal,
    proves: bool,
    db: Option<&'a fanorona_tables::Database>,
    db_dir: Option<&'p Path>,
}

impl Closing<'_, '_> {
    /// Solves each open leaf listed in `list` on its own (`close::solve_leaves`) into
    /// `PREFIX.GOAL-wins.leaves/`, and once every one is closed stitches them into the whole
    /// certificate, removing the partial file, its list and the leaves. Returns whether the
    /// certificate is whole now; `written` takes the leaves' lines and search.
    fn close(
        &self,
        partial: &Path,
        list: &Path,
        opts: &close::CloseOptions<'_>,
        terms: Terms<'_>,
        written: &mut Written,
    ) -> Result<bool, WriteError> {
        let start = std::time::Instant::now();
        let report = terms.report.unwrap_or(&|_| {});
        let leaves_dir = goal_file(self.prefix, self.goal, ".leaves");
        // Leaves of an earlier partial certificate are numbered by its nodes: stale now.
        if leaves_dir.exists() {
            std::fs::remove_dir_all(&leaves_dir)?;
        }
        std::fs::create_dir_all(&leaves_dir)?;
        let goal_part = format!("{}-wins", self.goal.attacker);
        let leaves: Vec<stitch::Leaf> = close::read_open_list(list)?
            .into_iter()
            .map(|l| stitch::Leaf {
                path: close::leaf_path(&leaves_dir, l.node, &goal_part),
                node: l.node,
                position: l.position,
            })
            .collect();
        report(&format!(
            "{} open leaves: solving each on its own, at most {} nodes each",
            leaves.len(),
            opts.nodes
        ));
        let each: Vec<&stitch::Leaf> = leaves.iter().collect();
        let solving = close::solve_leaves(
            self.goal,
            self.proves,
            &each,
            self.db,
            self.db_dir,
            opts,
            terms.cancel,
            report,
        );
        written.resolve_search_nodes += solving.search_nodes;
        written.closed = solving.closed;
        written.seconds += start.elapsed().as_secs_f64();
        if solving.cancelled {
            return Err(WriteError::Cancelled);
        }
        if solving.closed < leaves.len() as u64 {
            report(&format!(
                "{} of {} open leaves still open: the partial certificate stays, its leaves' certificates so far in {}",
                leaves.len() as u64 - solving.closed,
                leaves.len(),
                leaves_dir.display()
            ));
            return Ok(false);
        }
        let done = stitch::stitch(partial, &leaves, &path_for(self.prefix, self.goal))?;
        std::fs::remove_file(partial)?;
        std::fs::remove_file(list)?;
        std::fs::remove_dir_all(&leaves_dir)?;
        // Each leaf's certificate took its open line's place, and all of it was re-solved.
        written.resolved += done.nodes - written.nodes;
        written.nodes = done.nodes;
        written.bytes = done.bytes;
        written.open = 0;
        Ok(true)
    }
}
