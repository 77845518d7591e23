//! `fanorona verify`, and the certificates that `solve --certificate` and `session
//! certificate` write (each verified right after it is written).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::anyhow;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value, json};

use crate::cli::output::human_bytes;
use crate::cli::output::{CliResult, Failure, counted, print_json};
use crate::out;
use std::io::Write;

use fanorona::certificate::report::{
    CertificateChecked, CertificateCut, CertificateRefused, CertificateStitched,
};
use fanorona::certificate::{self, Made, Solved, Summary, VerifyError, format};
use fanorona::config::Config;
use fanorona::session::SecondLevel;

/// One line for the human output.
pub fn line(m: &Made) -> String {
    line_of(&m.summary())
}

/// `line` from a certificate's summary (as the daemon answers it).
pub fn line_of(m: &Summary) -> String {
    let (nodes, resolved, search) = (m.nodes, m.resolved_nodes, m.resolve_search_nodes);
    let resolved = if resolved > 0 || search > 0 {
        format!(
            "; {resolved} of its nodes ({:.1}%) re-solved ({search} search nodes)",
            100.0 * resolved as f64 / nodes.max(1) as f64,
        )
    } else {
        String::new()
    };
    let open = m.open_leaves;
    let check = match (&m.verify_error, m.verify_seconds) {
        (None, Some(seconds)) if open > 0 => format!(
            "PARTIAL: {} (listed in {}), the rest verified in {seconds:.2} s",
            counted(open, "open leaf", "open leaves"),
            m.open_list.as_deref().unwrap_or("no list")
        ),
        (None, Some(seconds)) => format!("verified in {seconds:.2} s"),
        (Some(e), _) => format!("FAILED verification: {e}"),
        (None, None) => "FAILED verification".to_string(),
    };
    format!(
        "  certificate {}? {}: {}, {} ({}), {} written in {:.2} s{resolved}; {check}",
        m.goal,
        m.claim,
        m.path,
        counted(nodes, "node", "nodes"),
        counted(m.shared_leaves, "shared leaf", "shared leaves"),
        human_bytes(m.bytes),
        m.write_seconds,
    )
}

/// Copies the certificate of `goal` in `from` to `prefix`'s name for it: the whole name, or,
/// with `list` (its open leaves: a partial certificate), the partial name with the list
/// beside it. Returns where it went.
pub fn copy_certificate(
    from: &Path,
    list: Option<&Path>,
    prefix: &Path,
    goal: fanorona::search::Goal,
) -> Result<PathBuf, Failure> {
    use fanorona::certificate::{open_list_for, partial_path_for, path_for};
    let copy = |from: &Path, to: &Path| {
        std::fs::copy(from, to).map_err(|e| {
            Failure::other(anyhow!(
                "copying {} to {}: {e}",
                from.display(),
                to.display()
            ))
        })
    };
    let to = match list {
        None => path_for(prefix, goal),
        Some(list) => {
            copy(list, &open_list_for(prefix, goal))?;
            partial_path_for(prefix, goal)
        }
    };
    copy(from, &to)?;
    Ok(to)
}

/// Writes the certificate of `solved` under `prefix` and verifies it with the checker.
pub fn make(
    prefix: &Path,
    solved: Solved<'_, '_>,
    extra: serde_json::Map<String, Value>,
    db_dir: Option<&Path>,
) -> Result<Made, Failure> {
    let path = certificate::path_for(prefix, solved.goal);
    let mut progress =
        |w: &certificate::Written| eprintln!("  writing {}: {}", path.display(), w.progress_line());
    certificate::make(
        prefix,
        solved,
        extra,
        db_dir,
        certificate::Terms::default(),
        &mut progress,
    )
    .map_err(|e| Failure::other(anyhow!("{}: {e}", path.display())))
}

/// Refuses a certificate prefix whose directory does not exist, before any work is done.
pub fn check_prefix(prefix: &Path) -> Result<(), Failure> {
    crate::cli::output::check_output("--certificate", prefix)
}

/// `fanorona verify CERT [--db DIR] [--json]`: exit 0 (holds), 1 (wrong), 2 (unreadable),
/// 4 (partial: all it holds is right, but open leaves remain, so the claim is not shown;
/// as the outside checker, whose 3 means its check could not be completed).
pub fn verify_cmd(
    path: &Path,
    db: Option<PathBuf>,
    leaves: Option<&Path>,
    json: bool,
    config: &Config,
) -> CliResult {
    if let Some(leaves) = leaves {
        crate::cli::output::check_output("--leaves", leaves)?;
    }
    let db_dir = db.unwrap_or_else(|| config.db_dir.clone());
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let bar = if std::io::stderr().is_terminal() && !json {
        let bar = ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .expect("a valid template"),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    // --leaves: every table leaf's position and value, one a line, for re-checks by search.
    let mut leaf_file = match leaves {
        Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p).map_err(
            |e| Failure::input(anyhow!("--leaves {}: {e}", p.display())),
        )?)),
        None => None,
    };
    let mut leaf_error = None;
    let read = Arc::new(AtomicU64::new(0));
    let counter = read.clone();
    let result = certificate::verify_file(
        path,
        Some(certificate::Tables::Dir(&db_dir)),
        move |n| {
            counter.fetch_add(n as u64, Ordering::Relaxed);
        },
        &mut |nodes| {
            bar.set_position(read.load(Ordering::Relaxed));
            bar.set_message(format!("{nodes} nodes"));
        },
        &mut |pos, v| {
            if let Some(f) = leaf_file.as_mut()
                && let Err(e) = writeln!(f, "{pos}\t{}", format::wdl_letter(v))
            {
                leaf_error.get_or_insert(e);
            }
        },
    );
    // A failed --leaves file is said after the verdict, which stands.
    let leaves_failed = leaf_error.or_else(|| leaf_file.as_mut().and_then(|f| f.flush().err()));
    bar.finish_and_clear();
    let name = path.display();
    match result {
        Ok(r) => {
            if json {
                print_json(&CertificateChecked::new(name.to_string(), size, r.clone()))?;
            } else {
                let verdict = if r.open_leaves > 0 {
                    format!(
                        "PARTIAL ({} open leaves: the claim holds if they do)",
                        r.open_leaves
                    )
                } else {
                    "OK".to_string()
                };
                out!(
                    "{name}: {verdict}, {} {} from {}: {} nodes ({} inner; leaves: {} table, {} terminal, {} repetition, {} shared), depth {}, {}, checked in {:.2} s ({:.2} M nodes/s)",
                    r.goal,
                    r.claim,
                    r.position,
                    r.nodes,
                    r.inner,
                    r.table_leaves,
                    r.terminal_leaves,
                    r.repetition_leaves,
                    r.shared_leaves,
                    r.max_depth,
                    human_bytes(size),
                    r.seconds,
                    r.nodes as f64 / r.seconds.max(1e-9) / 1e6
                );
            }
            if let Some(e) = leaves_failed {
                eprintln!("error: writing the leaves: {e}");
                return Err(Failure::Reported(2));
            }
            if r.open_leaves > 0 {
                return Err(Failure::Reported(4));
            }
            Ok(())
        }
        Err(e) => {
            let code = match e {
                VerifyError::Unreadable { .. } => 2,
                VerifyError::Wrong { .. } => 1,
            };
            let kind = if code == 1 { "WRONG" } else { "UNREADABLE" };
            if json {
                print_json(&CertificateRefused::new(name.to_string(), &e))?;
            } else if e.line() == 0 {
                out!("{name}: {kind}: {}", e.reason());
            } else {
                out!("{name}: {kind}: line {}: {}", e.line(), e.reason());
            }
            Err(Failure::Reported(code))
        }
    }
}

/// The checker's report on the certificate in `path`, its table leaves read from `db_dir`.
fn verify_against(
    path: &Path,
    db_dir: &Path,
) -> Result<certificate::Report, certificate::VerifyError> {
    certificate::verify_file(
        path,
        Some(certificate::Tables::Dir(db_dir)),
        |_| {},
        &mut |_| {},
        &mut |_, _| {},
    )
}

/// The exit of a command that wrote a certificate and checked it: 1 if it is wrong, 4 if it
/// is partial (as `verify` exits).
fn exit_of(check: &Result<certificate::Report, certificate::VerifyError>) -> CliResult {
    match check {
        Err(_) => Err(Failure::Reported(1)),
        Ok(r) if r.open_leaves > 0 => Err(Failure::Reported(4)),
        Ok(_) => Ok(()),
    }
}

/// `stitch`'s files.
pub struct StitchPaths<'a> {
    pub partial: &'a Path,
    pub open: Option<&'a Path>,
    pub leaves: &'a Path,
    pub out: &'a Path,
}

/// `stitch --solve`: the search each open leaf gets.
pub struct LeafSolve {
    pub nodes: u64,
    pub threads: usize,
    /// PN²'s second-level bound (`second_level` of the config).
    pub second_level: SecondLevel,
    /// How new leaves get their first numbers (`init` of the config).
    pub init: fanorona::search::Init,
    /// With `init` learned: weights not the built-in ones (`weights` of the config).
    pub weights: Option<PathBuf>,
}

/// `fanorona stitch PARTIAL --leaves DIR --out FILE`: the open leaves of PARTIAL that have a
/// certificate in DIR (`node-K.GOAL-wins.cert.gz`) replaced by it, and the result checked;
/// with `solve`, the leaves without one are solved first.
pub fn stitch_cmd(
    paths: &StitchPaths<'_>,
    db: Option<PathBuf>,
    solve: Option<LeafSolve>,
    json: bool,
    config: &Config,
) -> CliResult {
    use fanorona::certificate::stitch;
    let StitchPaths {
        partial,
        open,
        leaves,
        out,
    } = *paths;
    crate::cli::output::check_output("--out", out)?;
    let name = partial.to_string_lossy();
    let Some(stem) = name.strip_suffix(".partial.cert.gz") else {
        return Err(Failure::input(anyhow!(
            "{name}: a partial certificate's name ends in .GOAL-wins.partial.cert.gz"
        )));
    };
    let goal_part = stem.rsplit('.').next().unwrap_or_default();
    let list = open.map_or_else(
        || PathBuf::from(format!("{stem}.open.jsonl")),
        Path::to_path_buf,
    );
    // Each open leaf's entry, kept as read for the list of a result still partial.
    let read = fanorona::certificate::close::read_open_list(&list)
        .map_err(|e| Failure::input(anyhow!(e)))?;
    let listed: Vec<stitch::Leaf> = read
        .iter()
        .map(|l| stitch::Leaf {
            node: l.node,
            position: l.position.clone(),
            path: fanorona::certificate::close::leaf_path(leaves, l.node, goal_part),
        })
        .collect();
    let mut entries: std::collections::HashMap<u64, Value> =
        read.into_iter().map(|l| (l.node, l.entry)).collect();
    let db_dir = db.unwrap_or_else(|| config.db_dir.clone());
    if let Some(solve) = solve {
        std::fs::create_dir_all(leaves)
            .map_err(|e| Failure::input(anyhow!("{}: {e}", leaves.display())))?;
        let header = stitch::read_header(partial).map_err(|e| Failure::input(anyhow!(e)))?;
        let missing: Vec<&stitch::Leaf> = listed.iter().filter(|l| !l.path.is_file()).collect();
        solve_leaves(&header, &missing, &db_dir, &solve)?;
    }
    let found: Vec<stitch::Leaf> = listed
        .iter()
        .filter(|l| l.path.is_file())
        .cloned()
        .collect();
    let done = stitch::stitch(partial, &found, out).map_err(|e| Failure::other(anyhow!(e)))?;
    // A result still partial gets its own list: the leaves left, renumbered.
    let out_name = out.to_string_lossy();
    if let Some(out_stem) = out_name.strip_suffix(".partial.cert.gz") {
        let mut lines = String::new();
        for (old, new) in &done.still_open {
            let mut v = entries.remove(old).unwrap_or_else(|| json!({}));
            v["node"] = json!(new);
            lines.push_str(&format!("{v}\n"));
        }
        let list_out = PathBuf::from(format!("{out_stem}.open.jsonl"));
        std::fs::write(&list_out, lines)
            .map_err(|e| Failure::other(anyhow!("{}: {e}", list_out.display())))?;
    }
    let check = verify_against(out, &db_dir);
    let size = human_bytes(done.bytes);
    let verdict = match &check {
        Ok(r) if r.open_leaves == 0 => format!("verified in {:.2} s", r.seconds),
        Ok(r) => format!(
            "PARTIAL: {} open leaves left, the rest verified in {:.2} s",
            r.open_leaves, r.seconds
        ),
        Err(e) => format!("FAILED verification: {e}"),
    };
    if json {
        print_json(&CertificateStitched {
            certificate: out.display().to_string(),
            closed: done.closed,
            open: done.open,
            nodes: done.nodes,
            bytes: done.bytes,
            verified: check.is_ok(),
            partial: done.open > 0,
            verify_error: check.as_ref().err().map(|e| e.to_string()),
        })?;
    } else {
        out!(
            "{}: {} open leaves closed, {} left; {} nodes, {size}; {verdict}",
            out.display(),
            done.closed,
            done.open,
            done.nodes
        );
    }
    exit_of(&check)
}

/// `fanorona cut CERT --play MOVES --out FILE`: the certificate of the position after MOVES,
/// cut from CERT, written and checked.
pub fn cut_cmd(
    cert: &Path,
    play: &[String],
    out: &Path,
    db: Option<PathBuf>,
    json: bool,
    config: &Config,
) -> CliResult {
    use fanorona::certificate::cut::{self, CutError};
    crate::cli::output::check_output("--out", out)?;
    let moves: Vec<String> = play
        .iter()
        .flat_map(|p| p.split_whitespace())
        .map(str::to_string)
        .collect();
    let done = cut::cut(cert, &moves, out).map_err(|e| match e {
        CutError::Io { .. } if !cert.is_file() => Failure::input(anyhow!(e)),
        CutError::Io { .. } => Failure::other(anyhow!(e)),
        e => Failure::input(anyhow!(e)),
    })?;
    let db_dir = db.unwrap_or_else(|| config.db_dir.clone());
    let check = verify_against(out, &db_dir);
    if json {
        print_json(&CertificateCut {
            certificate: out.display().to_string(),
            position: done.position.clone(),
            nodes: done.nodes,
            copied_subtrees: done.copied,
            bytes: done.bytes,
            open_leaves: done.open,
            verified: check.is_ok(),
            verify_error: check.as_ref().err().map(|e| e.to_string()),
        })?;
    } else {
        let verdict = match &check {
            Ok(r) if r.open_leaves == 0 => {
                format!("verified in {:.2} s: \"{}\" {}", r.seconds, r.goal, r.claim)
            }
            Ok(r) => format!(
                "PARTIAL: {} open leaves, the rest verified in {:.2} s",
                r.open_leaves, r.seconds
            ),
            Err(e) => format!("FAILED verification: {e}"),
        };
        out!(
            "{}: {} nodes ({} shared subtrees copied in), {}; {verdict}",
            out.display(),
            done.nodes,
            done.copied,
            human_bytes(done.bytes)
        );
    }
    exit_of(&check)
}

/// Solves each of `leaves` on its own (`certificate::close`, PN² with df-pn at the second
/// level, as a session searches) within `solve.nodes`, on `solve.threads` threads, writing
/// the certificate of each decided as `header` claims.
fn solve_leaves(
    header: &format::Header,
    leaves: &[&fanorona::certificate::stitch::Leaf],
    db_dir: &Path,
    solve: &LeafSolve,
) -> Result<(), Failure> {
    use fanorona::certificate::close::{self, CloseOptions};
    let root: fanorona::Position = header
        .position
        .parse()
        .map_err(|e| Failure::input(anyhow!("the root '{}': {e}", header.position)))?;
    let attacker = header
        .attacker()
        .ok_or_else(|| Failure::input(anyhow!("the goal '{}' is not a side's win", header.goal)))?;
    let db = header
        .tables
        .as_ref()
        .map(|_| fanorona::egdb::Database::open_whole(db_dir, root.board()))
        .transpose()
        .map_err(|e| Failure::input(anyhow!(e)))?;
    // The config's own weights for learned first numbers, else the built-in ones (refused
    // on a board that has none, before any leaf is searched).
    let model = crate::cli::args::own_model(solve.init, solve.weights.as_deref(), root.board())?;
    eprintln!(
        "  solving {} open leaves, {} at once, at most {} nodes each",
        leaves.len(),
        solve.threads,
        solve.nodes
    );
    let opts = CloseOptions {
        nodes: solve.nodes,
        threads: solve.threads,
        second_level: solve.second_level,
        init: solve.init,
        model: model.as_ref(),
    };
    let done = close::solve_leaves(
        fanorona::search::Goal { attacker },
        header.claim == "proven",
        leaves,
        db.as_ref(),
        Some(db_dir),
        &opts,
        None,
        &|line| eprintln!("  {line}"),
    );
    eprintln!("  {} of {} open leaves closed", done.closed, leaves.len());
    Ok(())
}
