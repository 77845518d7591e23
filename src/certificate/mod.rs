//! Proof certificates (format 1 of `../shared/CERTIFICATE.md`): a solution tree written as
//! text so that anyone can re-check a result with the rules and the tables alone.
//!
//! `write` turns a decided search into a certificate; `check` verifies one and shares no
//! code with the searches (only the rules and the table probe).

pub mod check;
pub mod close;
pub mod cut;
pub mod format;
pub mod stitch;
pub mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crate::search::Goal;

pub use check::{Report, Tables, VerifyError, verify, verify_tables, verify_with};
use serde_json::{Value, json};
pub use write::{Partial, Solved, WriteError, Written};

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
    progress: &mut dyn FnMut(&Written),
) -> Result<Written, WriteError> {
    let mut header = write::header(&solved, extra);
    header.partial = partial.is_some();
    let mut out = format::Output::create(path)?;
    match write::write(out.writer(), &header, solved, partial, progress) {
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
    table_leaf: &mut dyn FnMut(&crate::position::Position, crate::egdb::Wdl),
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
        json!(format!("fanorona {}", env!("CARGO_PKG_VERSION"))),
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
    pub fn verified(&self) -> bool {
        self.check.is_ok()
    }

    pub fn json(&self) -> Value {
        let w = &self.written;
        json!({
            "goal": self.goal.to_string(),
            "claim": self.claim,
            "path": self.path.display().to_string(),
            "nodes": w.nodes,
            "shared_leaves": w.shared,
            "bytes": w.bytes,
            "resolved_nodes": w.resolved,
            "resolve_search_nodes": w.resolve_search_nodes,
            "write_seconds": w.seconds,
            "verified": self.verified(),
            "open_leaves": w.open,
            "open_list": self.open_list.as_ref().map(|p| p.display().to_string()),
            "verify_seconds": self.check.as_ref().map(|r| r.seconds).ok(),
            "verify_error": self.check.as_ref().err().map(|e| e.to_string()),
        })
    }
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
    pub close: Option<close::CloseOptions>,
    /// Set from outside to give up (`WriteError::Cancelled`): seen between nodes and
    /// between a leaf's steps, so within one `leaf_budget` of re-solving.
    pub cancel: Option<&'c AtomicBool>,
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
    let db = solved.db;
    let goal = solved.goal;
    let proves = solved.proves;
    let claim = if proves { "proven" } else { "disproven" };
    let (mut written, mut path, mut open_list) = match terms.leaf_budget {
        None => (
            write_file(&full, solved, extra, None, progress)?,
            full.clone(),
            None,
        ),
        Some(leaf_budget) => {
            let path = partial_path_for(prefix, goal);
            let list_path = open_list_for(prefix, goal);
            let mut list = std::io::BufWriter::new(std::fs::File::create(&list_path)?);
            let partial = Partial {
                leaf_budget,
                list: &mut list,
                cancel: terms.cancel,
            };
            let written = match write_file(&path, solved, extra, Some(partial), progress) {
                Ok(w) => w,
                Err(e) => {
                    drop(list);
                    let _ = std::fs::remove_file(&list_path);
                    return Err(e);
                }
            };
            list.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            if written.open == 0 {
                std::fs::remove_file(&list_path)?;
                std::fs::rename(&path, &full)?;
                (written, full.clone(), None)
            } else {
                (written, path, Some(list_path))
            }
        }
    };
    if let (Some(opts), Some(list)) = (terms.close, open_list.as_deref()) {
        let start = std::time::Instant::now();
        let report = terms.report.unwrap_or(&|_| {});
        let leaves_dir = goal_file(prefix, goal, ".leaves");
        std::fs::create_dir_all(&leaves_dir)?;
        let goal_part = format!("{}-wins", goal.attacker);
        let leaves: Vec<stitch::Leaf> = close::read_open_list(list)?
            .into_iter()
            .map(|l| stitch::Leaf {
                path: close::leaf_path(&leaves_dir, l.node, &goal_part),
                node: l.node,
                position: l.position,
            })
            .collect();
        let missing: Vec<&stitch::Leaf> = leaves.iter().filter(|l| !l.path.is_file()).collect();
        report(&format!(
            "{} open leaves: solving {} on their own, at most {} nodes each",
            leaves.len(),
            missing.len(),
            opts.nodes
        ));
        let solving = close::solve_leaves(
            goal,
            proves,
            &missing,
            db,
            db_dir,
            &opts,
            terms.cancel,
            report,
        );
        written.resolve_search_nodes += solving.search_nodes;
        if solving.cancelled {
            return Err(WriteError::Cancelled);
        }
        let open = leaves.iter().filter(|l| !l.path.is_file()).count() as u64;
        if open == 0 {
            let done = stitch::stitch(&path, &leaves, &full)?;
            std::fs::remove_file(&path)?;
            std::fs::remove_file(list)?;
            std::fs::remove_dir_all(&leaves_dir)?;
            written.nodes = done.nodes;
            written.bytes = done.bytes;
            written.open = 0;
            (path, open_list) = (full, None);
        } else {
            report(&format!(
                "{open} of {} open leaves still open; their certificates so far are in {}",
                leaves.len(),
                leaves_dir.display()
            ));
        }
        written.seconds += start.elapsed().as_secs_f64();
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
