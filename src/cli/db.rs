//! The endgame database commands: `db build`, `db stats`, `db probe`, `db verify`,
//! `db checksums`.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use anyhow::anyhow;
use serde_json::json;

use crate::cli::output::{CliResult, Failure, counted, input, report_json};
use crate::cli::rules::resolve_position;
use crate::out;
use fanorona::Board;
use fanorona::egdb::file::{Kind, SliceFile, canonical_board};
use fanorona::egdb::manifest;
use fanorona::egdb::probe::{Census, SliceState, best_table_move};
use fanorona::egdb::scheme::Index;
use fanorona::egdb::stats::table3_counts;
use fanorona::egdb::verify::{verify_sample, verify_slice};
use fanorona::egdb::{
    BuildError, BuildOptions, Database, Material, Wdl, build, build_pair_and_needs, paper,
};

fn board(text: &str) -> Result<Board, Failure> {
    input(text.parse::<Board>())
}

/// What `db build` builds: every slice up to a piece count, or one pair and what it reads.
#[derive(Clone, Copy)]
pub enum BuildGoal {
    UpTo(usize),
    Pair(Material),
}

pub fn build_cmd(
    dir: &Path,
    board_text: &str,
    goal: BuildGoal,
    threads: usize,
    (distances, index, checkpoint_every): (
        bool,
        fanorona::egdb::scheme::Scheme,
        Option<std::time::Duration>,
    ),
    json: bool,
) -> CliResult {
    let board = board(board_text)?;
    // A path that is not a directory, or one that cannot be written, is refused before any
    // work (a missing one is made by the build).
    if dir.exists() {
        if !dir.is_dir() {
            return Err(Failure::input(anyhow!(
                "--db {}: not a directory",
                dir.display()
            )));
        }
        crate::cli::output::check_output("--db", &dir.join(".write-test"))?;
    }
    let terminal = std::io::stderr().is_terminal();
    // A terminal gets progress bars; a log file a line a minute.
    let options = BuildOptions {
        threads,
        progress: terminal,
        distances,
        report_every: (!terminal).then_some(std::time::Duration::from_secs(60)),
        index,
        checkpoint_every,
    };
    let start = Instant::now();
    let mut log = |line: &str| eprintln!("{line}");
    let (pieces, reports) = match goal {
        BuildGoal::UpTo(pieces) => (pieces, build(dir, board, pieces, &options, &mut log)),
        BuildGoal::Pair(m) => (
            m.pieces(),
            build_pair_and_needs(dir, board, m, &options, &mut log),
        ),
    };
    let reports = reports.map_err(|e| match e {
        BuildError::File(_) => Failure::other(e),
        _ => Failure::input(e),
    })?;
    let built = reports.iter().filter(|r| r.built).count();
    let seconds = start.elapsed().as_secs_f64();
    if json {
        out!(
            "{}",
            json!({
                "board": canonical_board(board).to_string(),
                "pieces": pieces,
                "pair": match goal {
                    BuildGoal::Pair(m) => Some(m.to_string()),
                    BuildGoal::UpTo(_) => None,
                },
                "db": dir,
                "slices": reports.len(),
                "built": built,
                "already_there": reports.len() - built,
                "seconds": seconds,
            })
        );
    } else {
        let what = match goal {
            BuildGoal::Pair(m) if m.a == m.b => format!("for {m}"),
            BuildGoal::Pair(m) => format!("for the pair {m} + {}", m.swapped()),
            BuildGoal::UpTo(_) => format!("with 2 to {pieces} pieces"),
        };
        out!(
            "{} slices of {} {what} under {}: {built} built, {} already there; {seconds:.1} s",
            reports.len(),
            canonical_board(board),
            dir.display(),
            reports.len() - built,
        );
    }
    Ok(())
}

/// A slice of the census: intact (with its file), or what is wrong with it.
type CensusRow<'d> = (Material, Result<(Index, &'d SliceFile), String>);

/// Every slice of a board up to the largest piece count built, in order, each opened (header
/// and checksum checked): intact with its file, or "missing" or "damaged: why"; and the
/// census. No slice at all is bad input.
fn census_slices(db: &Database) -> Result<(Vec<CensusRow<'_>>, Census), Failure> {
    let census = db.census();
    if census.max_pieces == 0 {
        return Err(Failure::input(census.whole(db).expect_err("no slice")));
    }
    let mut rows = Vec::new();
    for (m, state) in &census.slices {
        let row = match (state, db.slice(*m)) {
            (SliceState::Intact, Ok(Some(f))) => Ok((f.slice, f)),
            (SliceState::Damaged(why), _) => Err(format!("DAMAGED: {why}")),
            _ => Err("MISSING".to_string()),
        };
        rows.push((*m, row));
    }
    Ok((rows, census))
}

pub fn convert(
    dir: &Path,
    board_text: &str,
    threads: usize,
    pieces: Option<usize>,
    json: bool,
) -> CliResult {
    let board = canonical_board(board(board_text)?);
    let db = Database::new(dir, board);
    let (slices, census) = census_slices(&db)?;
    drop(slices);
    let mut rows = Vec::new();
    let (mut before, mut after) = (0u64, 0u64);
    for (m, _) in &census.slices {
        if pieces.is_some_and(|p| m.pieces() != p) {
            continue;
        }
        let start = Instant::now();
        let converted = fanorona::egdb::build_symmetric::convert_slice(dir, board, *m, threads)
            .map_err(|e| match e {
                BuildError::File(_) => Failure::other(e),
                _ => Failure::input(e),
            })?;
        if let Some((old, new)) = converted {
            before += old;
            after += new;
            if !json {
                out!(
                    "{board} {m}: {old} bytes -> {new} bytes under the symmetric index, {:.1} s",
                    start.elapsed().as_secs_f64()
                );
            }
            rows.push(json!({"slice": m.to_string(), "bytes_before": old, "bytes_after": new}));
        }
    }
    if json {
        out!(
            "{}",
            json!({"board": board.to_string(), "converted": rows, "bytes_before": before, "bytes_after": after})
        );
    } else {
        out!(
            "{} converted under {}: {before} bytes -> {after} bytes",
            counted(rows.len(), "slice", "slices"),
            dir.display()
        );
    }
    census_failure(&db, &census)
}

pub fn forward_check(
    dir: &Path,
    board_text: &str,
    threads: usize,
    (pieces, samples, nodes): (usize, u64, u64),
    json: bool,
) -> CliResult {
    let board = canonical_board(board(board_text)?);
    let tables = Database::open_whole(dir, board).map_err(Failure::input)?;
    if tables.max_pieces() < pieces {
        return Err(Failure::input(anyhow!(
            "the tables of {board} under {} go up to {} pieces; there is no {pieces}-piece layer to check",
            dir.display(),
            tables.max_pieces()
        )));
    }
    let below = Database::capped(dir, board, pieces - 1);
    let start = Instant::now();
    let f = fanorona::search::table_check::forward_check(
        &tables, &below, pieces, samples, nodes, threads,
    );
    let seconds = start.elapsed().as_secs_f64();
    let questions = 2 * f.positions;
    if json {
        out!(
            "{}",
            json!({"board": board.to_string(), "pieces": pieces, "positions": f.positions,
                   "questions": questions, "decided": f.decided, "agreed": f.agreed,
                   "both_decided": f.both_decided, "nodes": f.nodes, "nodes_per_question": nodes,
                   "seconds": seconds, "disagreements": f.disagreements})
        );
    } else {
        out!(
            "{} quiet {pieces}-piece positions of {board}, df-pn over {} pieces with at most {} a question: {} of {questions} questions decided, {} agree with the tables; {} positions with both decided; {} in {seconds:.0} s",
            f.positions,
            pieces - 1,
            counted(nodes, "node", "nodes"),
            f.decided,
            f.agreed,
            f.both_decided,
            counted(f.nodes, "node", "nodes"),
        );
        for d in &f.disagreements {
            out!("  DISAGREES: {d}");
        }
    }
    if f.agreed < f.decided {
        return Err(Failure::other(anyhow!(
            "{} answers disagree with the tables",
            f.decided - f.agreed
        )));
    }
    Ok(())
}

/// What a slice's entries are: positions under the paper's index, classes of positions under
/// the symmetric one.
fn entries_word(slice: &Index) -> &'static str {
    match slice.scheme() {
        fanorona::egdb::scheme::Scheme::Paper => "positions",
        fanorona::egdb::scheme::Scheme::Symmetric => "entries (classes of positions)",
    }
}

/// After a report: the census's missing or damaged slices as the command's failure.
fn census_failure(db: &Database, census: &Census) -> CliResult {
    census.whole(db).map_err(|e| {
        if e.is_missing() {
            Failure::input(e)
        } else {
            Failure::other(e)
        }
    })
}

pub fn stats(dir: &Path, board_text: &str, threads: usize, json: bool) -> CliResult {
    let board = canonical_board(board(board_text)?);
    let db = Database::new(dir, board);
    let (slices, census) = census_slices(&db)?;
    let mut rows = Vec::new();
    if !json {
        out!(
            "{:>6} {:>12} {:>12} {:>12}   paper (Table 3)",
            "slice",
            "win",
            "draw",
            "loss"
        );
    }
    let mut mismatches = 0;
    for (material, row) in &slices {
        let (slice, file) = match row {
            Ok(sf) => sf,
            Err(what) => {
                if !json {
                    out!("{:>6} {what}", material.to_string());
                }
                rows.push(json!({"slice": material.to_string(), "error": what}));
                continue;
            }
        };
        let c = table3_counts(slice, file.payload(), threads).ok_or_else(|| {
            Failure::other(anyhow!(
                "{}: mirror images have different values; run `fanorona db verify --board {board}`",
                file.path.display()
            ))
        })?;
        let paper = if board == Board::STANDARD {
            paper::table3(slice.material())
        } else {
            None
        };
        let agrees = paper.map(|p| p == c);
        if agrees == Some(false) {
            mismatches += 1;
        }
        if !json {
            let note = match paper {
                Some(p) if p == c => "same".to_string(),
                Some(p) => format!("MISMATCH: {} {} {}", p.win, p.draw, p.loss),
                None => "-".to_string(),
            };
            out!(
                "{:>6} {:>12} {:>12} {:>12}   {note}",
                slice.material().to_string(),
                c.win,
                c.draw,
                c.loss
            );
        }
        let mut row = json!({"slice": slice.material().to_string(), "win": c.win, "draw": c.draw, "loss": c.loss});
        if let Some(p) = paper {
            row["paper"] = json!({"win": p.win, "draw": p.draw, "loss": p.loss});
            row["matches_paper"] = json!(p == c);
        }
        rows.push(row);
    }
    let result = census_failure(&db, &census);
    if json {
        let report =
            json!({"board": board.to_string(), "slices": rows, "paper_mismatches": mismatches});
        return report_json(report, result);
    }
    result
}

/// The value of `pos` for its side to move that `db probe` reports: the rules first (a side
/// to move without a move has lost, as `show` and `solve` say, whatever the tables'
/// shortcut for a side without pieces says of a position with neither, which no game
/// reaches), then the tables.
fn value_of(
    db: &Database,
    pos: &fanorona::Position,
) -> Result<Wdl, fanorona::egdb::probe::Unavailable> {
    if fanorona::movegen::is_lost(pos) {
        return Ok(Wdl::Loss);
    }
    db.lookup(pos)
}

pub fn probe(dir: &Path, position: &str, json: bool) -> CliResult {
    let pos = resolve_position(Some(position), None)?;
    let db = Database::new(dir, pos.board());
    // A damaged or missing table is named instead of answering nothing.
    let value = value_of(&db, &pos).map_err(|e| match e {
        fanorona::egdb::probe::Unavailable::Damaged(_) => Failure::other(e),
        _ => Failure::input(e),
    })?;
    // Each move's value for the mover, and where there are distances, the plies it leaves.
    let distance = db.distance(&pos);
    let moves = db.table_moves(&pos);
    let best = best_table_move(&moves, value).map(|m| m.mv.notation(pos.board()));
    let values: Vec<_> = moves
        .iter()
        .map(|m| (m.mv.notation(pos.board()), m.value, m.plies_after))
        .collect();
    if json {
        let moves: Vec<_> = values
            .iter()
            .map(|(m, v, d)| json!({"move": m, "value": v.map(|v| v.name()), "plies_after": d}))
            .collect();
        out!(
            "{}",
            json!({"position": pos.to_string(), "value": value.name(),
                   "side_to_move": pos.side_to_move().name(), "plies_to_conversion": distance,
                   "best_move": best, "moves": moves})
        );
    } else {
        out!(
            "{pos}: {value} for {} (the side to move)",
            pos.side_to_move()
        );
        if let Some(d) = distance {
            out!(
                "{} to a capture or the end, with best play",
                counted(d, "ply", "plies")
            );
        }
        if let Some(b) = &best {
            out!("best move: {b}");
        }
        for (m, v, d) in &values {
            let plies = d
                .map(|d| format!(", {} after", counted(d, "ply", "plies")))
                .unwrap_or_default();
            out!("  {m}: {}{plies}", v.map_or("?", |v| v.name()));
        }
    }
    Ok(())
}

pub fn verify(
    dir: &Path,
    board_text: &str,
    threads: usize,
    (pieces, sample): (Option<usize>, Option<u64>),
    json: bool,
) -> CliResult {
    let board = canonical_board(board(board_text)?);
    let db = Database::new(dir, board);
    // Opening each file checks its header and checksum; a missing or damaged slice is
    // reported in its place, by name, and fails the command at the end.
    let (slices, census) = census_slices(&db)?;
    let mut total = 0;
    let mut rows = Vec::new();
    let mut checked = 0;
    for (material, row) in &slices {
        if pieces.is_some_and(|p| material.pieces() != p) {
            continue;
        }
        checked += 1;
        let (slice, file) = match row {
            Ok(sf) => sf,
            Err(what) => {
                if !json {
                    out!("{board} {material}: {what}");
                }
                rows.push(json!({"slice": material.to_string(), "error": what}));
                continue;
            }
        };
        // Its successors (the opponent to move, with as many or fewer pieces after a
        // capture) must be readable for the check to mean anything.
        let broken = (1..=material.b)
            .map(|b| Material {
                a: b,
                b: material.a,
            })
            .find(|m| slices.iter().any(|(s, r)| s == m && r.is_err()));
        if let Some(m) = broken {
            let what = format!("not checked: its successors in slice {m} cannot be read");
            if !json {
                out!("{board} {material}: {what}");
            }
            rows.push(json!({"slice": material.to_string(), "error": what}));
            continue;
        }
        let distances =
            SliceFile::open(dir, board, *material, Kind::Distance).map_err(Failure::other)?;
        let check = match sample {
            Some(n) => verify_sample(&db, slice, file.payload(), n, threads),
            None => verify_slice(
                &db,
                slice,
                file.payload(),
                distances.as_ref().map(|d| d.payload()),
                threads,
            ),
        };
        total += check.mismatches;
        // What was checked: every entry, or a sample of how many out of how many.
        let what = if check.positions < slice.len() {
            format!(
                "{} of {} entries drawn at random",
                check.positions,
                slice.len()
            )
        } else {
            format!("{} {}", check.positions, entries_word(slice))
        };
        if !json {
            if check.mismatches == 0 {
                out!("{} {}: {what}, no errors", board, slice.material());
            } else {
                out!(
                    "{} {}: {what}, {} ERRORS; first:",
                    board,
                    slice.material(),
                    check.mismatches
                );
                for m in &check.first {
                    out!(
                        "  index {} {}: stored {}, successors say {}",
                        m.index,
                        m.position,
                        m.stored,
                        m.derived
                    );
                }
            }
        }
        rows.push(
            json!({"slice": slice.material().to_string(), "positions": check.positions,
                   "entries": slice.len(), "index": slice.scheme().name(),
                   "sampled": check.positions < slice.len(), "errors": check.mismatches}),
        );
    }
    if !json && total == 0 && census.whole(&db).is_ok() {
        out!("no errors in {}", counted(checked, "slice", "slices"));
    }
    let result = census_failure(&db, &census).and_then(|()| {
        if total > 0 {
            return Err(Failure::other(anyhow!(
                "{total} entries disagree with their successors"
            )));
        }
        Ok(())
    });
    if json {
        let report = json!({"board": board.to_string(), "slices": rows, "errors": total});
        return report_json(report, result);
    }
    result
}

/// `db probe --batch`: positions on stdin, one a line; on stdout one value a line (`w`, `d`,
/// `l` for the side to move, or `-` where the tables do not answer, with the reason on
/// stderr). Lines that do not parse get `-` too, and make the exit status 2 at the end.
pub fn probe_batch(dir: &Path) -> CliResult {
    use std::io::{BufRead, BufWriter, Write};
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut err = std::io::stderr().lock();
    // One set of tables per board seen (a board and its transpose share one), with the
    // largest piece count they hold.
    let mut tables: Vec<(Database, usize)> = Vec::new();
    let (mut unparsed, mut line_no) = (0u64, 0u64);
    let write_failed = |e: std::io::Error| Failure::other(anyhow!("writing the values: {e}"));
    let mut stdin = stdin;
    let mut buf = Vec::with_capacity(128);
    loop {
        buf.clear();
        let n = stdin
            .read_until(b'\n', &mut buf)
            .map_err(|e| Failure::input(anyhow!("line {}: {e}", line_no + 1)))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let line = std::str::from_utf8(&buf)
            .map_err(|_| Failure::input(anyhow!("line {line_no}: not UTF-8 text")))?
            .trim_end_matches(['\n', '\r']);
        let answer = match line.parse::<fanorona::Position>() {
            Err(e) => {
                unparsed += 1;
                Err(format!("not a position: {e}"))
            }
            Ok(pos) => {
                let board = canonical_board(pos.board());
                let (db, max) = match tables.iter().position(|(d, _)| d.board() == board) {
                    Some(i) => &tables[i],
                    None => {
                        let db = Database::new(dir, board);
                        let max = db.max_pieces();
                        tables.push((db, max));
                        tables.last().expect("just pushed")
                    }
                };
                let pieces = pos.piece_count() as usize;
                value_of(db, &pos).map_err(|e| match e {
                    // Beyond what was built at all: say so rather than name one slice.
                    fanorona::egdb::probe::Unavailable::NotBuilt { .. } if *max == 0 => {
                        format!(
                            "no tables of {board} under {}: build them with `fanorona db build --board {board} --pieces N --db {}`",
                            dir.display(),
                            dir.display()
                        )
                    }
                    fanorona::egdb::probe::Unavailable::NotBuilt { .. } if pieces > *max => {
                        format!(
                            "{pieces} pieces: the tables of {board} under {} hold at most {max}",
                            dir.display()
                        )
                    }
                    e => e.to_string(),
                })
            }
        };
        let letter = match answer {
            Ok(v) => fanorona::certificate::format::wdl_letter(v),
            Err(reason) => {
                let _ = writeln!(err, "line {line_no}: {reason}");
                '-'
            }
        };
        writeln!(out, "{letter}").map_err(write_failed)?;
    }
    out.flush().map_err(write_failed)?;
    if unparsed > 0 {
        return Err(Failure::input(anyhow!(
            "{unparsed} of {line_no} lines were not positions (answered '-')"
        )));
    }
    Ok(())
}

/// A slice file opened (header and checksum checked) and hashed.
struct Hashed {
    name: String,
    bytes: u64,
    /// Its SHA-256, or why it could not be opened.
    sha256: Result<String, String>,
}

/// Opens and hashes `files` of `board` under `dir` on `threads` threads: a bar of bytes on a
/// terminal, a line a minute to stderr otherwise.
fn hash_files(
    dir: &Path,
    board: Board,
    files: &[(Material, Kind)],
    threads: usize,
    label: &str,
) -> Vec<Hashed> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    let board_dir = fanorona::egdb::file::board_dir(dir, board);
    let sizes: Vec<u64> = files
        .iter()
        .map(|&(m, k)| {
            std::fs::metadata(board_dir.join(manifest::file_name(m, k))).map_or(0, |f| f.len())
        })
        .collect();
    let total: u64 = sizes.iter().sum();
    let bar = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(total),
            indicatif::ProgressDrawTarget::stderr(),
        );
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} [{bar:30}] {percent:>3}% {binary_bytes_per_sec:>12} eta {eta}",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        bar.set_message(label.to_string());
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let (next, done) = (AtomicUsize::new(0), AtomicU64::new(0));
    let results: Vec<Mutex<Option<Hashed>>> = files.iter().map(|_| Mutex::new(None)).collect();
    let start = Instant::now();
    let (finished, wait) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, files.len().max(1)) {
            let finished = finished.clone();
            let (next, done, results, bar, sizes) = (&next, &done, &results, &bar, &sizes);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(m, kind)) = files.get(i) else {
                        break;
                    };
                    let tick = |n| {
                        bar.inc(n);
                        done.fetch_add(n, Ordering::Relaxed);
                    };
                    let sha256 = match SliceFile::open(dir, board, m, kind) {
                        Ok(Some(f)) => Ok(manifest::sha256(f.bytes(), &tick)),
                        Ok(None) => Err("vanished while it was checked".to_string()),
                        Err(e) => Err(e.to_string()),
                    };
                    if sha256.is_err() {
                        tick(sizes[i]);
                    }
                    *results[i].lock().expect("no thread panics holding it") = Some(Hashed {
                        name: manifest::file_name(m, kind),
                        bytes: sizes[i],
                        sha256,
                    });
                }
                drop(finished);
            });
        }
        drop(finished);
        let every = std::time::Duration::from_secs(60);
        while wait.recv_timeout(every) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            if bar.is_hidden() {
                let d = done.load(Ordering::Relaxed);
                eprintln!(
                    "{label}: {:.1}% ({d} of {total} bytes) in {:.0} s",
                    100.0 * d as f64 / total.max(1) as f64,
                    start.elapsed().as_secs_f64()
                );
            }
        }
    });
    bar.finish_and_clear();
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .expect("no thread panics holding it")
                .expect("every file was taken")
        })
        .collect()
}

/// "3 slice files (1-1.wdl, 2-1.wdl, 1-2.wdl)": how many, and which.
fn named(names: &[String]) -> String {
    format!(
        "{} ({})",
        counted(names.len(), "slice file", "slice files"),
        names.join(", ")
    )
}

/// The slice files of `board` under `dir` (with `pieces`, only those), and the manifest's
/// directory; no file and no manifest is bad input.
fn files_of(
    dir: &Path,
    board: Board,
    pieces: Option<usize>,
) -> Result<(Vec<(Material, Kind)>, std::path::PathBuf), Failure> {
    let files = manifest::slice_files(dir, board)
        .map_err(Failure::other)?
        .unwrap_or_default();
    let board_dir = fanorona::egdb::file::board_dir(dir, board);
    if files.is_empty() && !manifest::path(&board_dir).exists() {
        let db = Database::new(dir, board);
        return Err(Failure::input(
            db.census().whole(&db).expect_err("no slice"),
        ));
    }
    let files = files
        .into_iter()
        .filter(|(m, _)| pieces.is_none_or(|p| m.pieces() == p))
        .collect();
    Ok((files, board_dir))
}

/// `db checksums`: every slice file of a board opened (header and checksum checked) and
/// hashed, and the manifest written anew from them.
pub fn checksums(dir: &Path, board_text: &str, threads: usize, json: bool) -> CliResult {
    let board = canonical_board(board(board_text)?);
    let (files, board_dir) = files_of(dir, board, None)?;
    let unreadable = manifest::read(&board_dir).err();
    let start = Instant::now();
    let hashed = hash_files(dir, board, &files, threads, &format!("{board} sha256"));
    let mut fresh = manifest::Entries::new();
    let mut damaged = Vec::new();
    let mut bytes = 0;
    for h in &hashed {
        match &h.sha256 {
            Ok(sha) => {
                fresh.insert(h.name.clone(), sha.clone());
                bytes += h.bytes;
            }
            Err(why) => {
                if !json {
                    out!("{board} {}: DAMAGED, not listed: {why}", h.name);
                }
                damaged.push((h.name.clone(), why.clone()));
            }
        }
    }
    let keep: Vec<String> = damaged.iter().map(|(n, _)| n.clone()).collect();
    let old = manifest::replace(&board_dir, &fresh, &keep)
        .map_err(Failure::other)?
        .unwrap_or_default();
    let seconds = start.elapsed().as_secs_f64();
    // Lines that said otherwise before, and lines of files no longer there.
    let changed: Vec<String> = fresh
        .iter()
        .filter(|(n, sha)| old.get(*n).is_some_and(|o| o != *sha))
        .map(|(n, _)| n.clone())
        .collect();
    let dropped: Vec<String> = old
        .keys()
        .filter(|n| !fresh.contains_key(*n) && !keep.contains(n))
        .cloned()
        .collect();
    let path = manifest::path(&board_dir);
    if !json {
        let mut line = format!(
            "{board}: {} ({}) hashed in {seconds:.1} s -> {}",
            counted(fresh.len(), "slice file", "slice files"),
            crate::cli::certificate::human_bytes(bytes),
            path.display()
        );
        if let Some(e) = &unreadable {
            line += &format!("; the manifest there could not be read ({e}): replaced");
        }
        if !changed.is_empty() {
            line += &format!("; {} listed before with another SHA-256", named(&changed));
        }
        if !dropped.is_empty() {
            line += &format!("; {} listed before, no longer there", named(&dropped));
        }
        out!("{line}");
    }
    let result = if damaged.is_empty() {
        Ok(())
    } else {
        Err(Failure::other(anyhow!(
            "{board} under {}: {} damaged, not listed: delete them and rebuild them with `fanorona db build --board {board} --pieces {} --db {}`",
            dir.display(),
            named(&keep),
            Database::new(dir, board).max_pieces().max(2),
            dir.display()
        )))
    };
    if json {
        let damaged: Vec<_> = damaged
            .iter()
            .map(|(n, why)| json!({"file": n, "error": why}))
            .collect();
        let report = json!({"board": board.to_string(), "manifest": path, "files": fresh.len(),
                            "bytes": bytes, "seconds": seconds, "damaged": damaged,
                            "changed": changed, "dropped": dropped,
                            "replaced_unreadable": unreadable.is_some()});
        return report_json(report, result);
    }
    result
}

/// `db verify --quick`: every slice file of a board opened (header and checksum checked) and
/// its SHA-256 compared with the board's manifest; the files the manifest lists that are not
/// there, and the slices missing among those built, named.
pub fn verify_quick(
    dir: &Path,
    board_text: &str,
    threads: usize,
    pieces: Option<usize>,
    json: bool,
) -> CliResult {
    let board = canonical_board(board(board_text)?);
    let (files, board_dir) = files_of(dir, board, pieces)?;
    let listed = manifest::read(&board_dir).map_err(Failure::other)?;
    let manifest_path = manifest::path(&board_dir);
    let hashed = hash_files(dir, board, &files, threads, &format!("{board} sha256"));
    let in_scope = |name: &str| {
        pieces.is_none_or(|p| manifest::parse_file_name(name).is_some_and(|(m, _)| m.pieces() == p))
    };
    let (mut whole, mut unlisted, mut mismatching, mut damaged) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut rows = Vec::new();
    for h in &hashed {
        let line = listed.as_ref().and_then(|l| l.get(&h.name));
        let (state, text) = match (&h.sha256, line) {
            (Err(why), _) => {
                damaged.push(h.name.clone());
                ("damaged", format!("DAMAGED: {why}"))
            }
            (Ok(_), None) => {
                unlisted.push(h.name.clone());
                (
                    "unlisted",
                    format!("header and checksum whole, not in {}", manifest::NAME),
                )
            }
            (Ok(sha), Some(l)) if sha == l => {
                whole.push(h.name.clone());
                ("whole", "SHA-256 matches".to_string())
            }
            (Ok(sha), Some(l)) => {
                mismatching.push(h.name.clone());
                (
                    "mismatch",
                    format!("MISMATCH: SHA-256 {sha}, {} says {l}", manifest::NAME),
                )
            }
        };
        if !json {
            out!("{board} {}: {text}", h.name);
        }
        rows.push(json!({"file": h.name, "state": state, "bytes": h.bytes,
                         "sha256": h.sha256.as_ref().ok(), "listed": line,
                         "error": h.sha256.as_ref().err()}));
    }
    // Listed, and not there.
    let absent: Vec<String> = listed
        .iter()
        .flat_map(|l| l.keys())
        .filter(|n| in_scope(n) && !board_dir.join(n).is_file())
        .cloned()
        .collect();
    // Not listed, not there, and below the largest piece count built: missing all the same.
    let max = Database::new(dir, board).max_pieces();
    let missing: Vec<String> = (2..=max)
        .filter(|&n| pieces.is_none_or(|p| p == n))
        .flat_map(Material::with_pieces)
        .map(|m| manifest::file_name(m, Kind::Wdl))
        .filter(|n| !board_dir.join(n).is_file() && !absent.contains(n))
        .collect();
    for n in &absent {
        if !json {
            out!("{board} {n}: listed in {}, ABSENT", manifest::NAME);
        }
        rows.push(json!({"file": n, "state": "absent"}));
    }
    for n in &missing {
        if !json {
            out!("{board} {n}: MISSING");
        }
        rows.push(json!({"file": n, "state": "missing"}));
    }
    let checksums = format!(
        "`fanorona db checksums --board {board} --db {}`",
        dir.display()
    );
    if !json {
        let mut line = match &listed {
            Some(_) => format!(
                "{board}: {} match {}",
                counted(whole.len(), "slice file", "slice files"),
                manifest_path.display()
            ),
            None => format!(
                "{board}: no {} (tables built before manifests were kept have none): write one with {checksums}",
                manifest_path.display()
            ),
        };
        if !unlisted.is_empty() {
            line += &match listed {
                Some(_) => format!(
                    "; {} not in it (header and checksum whole): list them with {checksums}",
                    named(&unlisted)
                ),
                None => format!(
                    "; {} whole by header and checksum",
                    counted(unlisted.len(), "slice file", "slice files")
                ),
            };
        }
        if !mismatching.is_empty() {
            line += &format!("; {} MISMATCHING", named(&mismatching));
        }
        if !damaged.is_empty() {
            line += &format!("; {} DAMAGED", named(&damaged));
        }
        if !absent.is_empty() {
            line += &format!("; {} listed but ABSENT", named(&absent));
        }
        if !missing.is_empty() {
            line += &format!("; {} MISSING", named(&missing));
        }
        out!("{line}");
    }
    let rebuild = format!(
        "`fanorona db build --board {board} --pieces {} --db {}`",
        max.max(2),
        dir.display()
    );
    let result = if !mismatching.is_empty() || !damaged.is_empty() {
        let bad: Vec<String> = mismatching.iter().chain(&damaged).cloned().collect();
        Err(Failure::other(anyhow!(
            "{board} under {}: {} damaged or not as {} says: delete them and rebuild them with {rebuild}, or fetch them again",
            dir.display(),
            named(&bad),
            manifest::NAME
        )))
    } else if !absent.is_empty() || !missing.is_empty() {
        let gone: Vec<String> = absent.iter().chain(&missing).cloned().collect();
        Err(Failure::input(anyhow!(
            "{board} under {}: {} missing: build them with {rebuild}",
            dir.display(),
            named(&gone)
        )))
    } else {
        Ok(())
    };
    if json {
        let report = json!({"board": board.to_string(), "manifest": manifest_path,
                            "manifest_found": listed.is_some(), "files": rows,
                            "whole": whole.len(), "unlisted": unlisted,
                            "mismatching": mismatching, "damaged": damaged,
                            "absent": absent, "missing": missing});
        return report_json(report, result);
    }
    result
}
