//! The endgame database commands: `db build`, `db stats`, `db probe`, `db verify`,
//! `db checksums`.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use anyhow::anyhow;

use crate::cli::args::resolve_position;
use crate::cli::output::{CliResult, Failure, counted, input, print_json, report_json};
use crate::out;
use fanorona::Board;
use fanorona::egdb::audit::{self, AuditError, FileRow, FileState, SliceFiles};
use fanorona::egdb::file::{Kind, SliceFile, canonical_board};
use fanorona::egdb::manifest;
use fanorona::egdb::probe::{Census, SliceState, best_table_move};
use fanorona::egdb::report::{
    CheckedRow, CountsRow, MoveProbe, PositionProbe, SliceChecked, SliceConverted, SliceCounts,
    SlicesConverted, TableCounts, TablesBuilt, TablesChecked, UnreadableSlice,
};
use fanorona::egdb::scheme::Index;
use fanorona::egdb::stats::table3_counts;
use fanorona::egdb::verify::{verify_sample, verify_slice};
use fanorona::egdb::{
    BuildError, BuildOptions, Database, Material, Wdl, build, build_pair_and_needs, paper,
};
use fanorona::search::table_check::ForwardChecked;

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
        return print_json(&TablesBuilt {
            board: canonical_board(board),
            pieces,
            pair: match goal {
                BuildGoal::Pair(m) => Some(m),
                BuildGoal::UpTo(_) => None,
            },
            db: dir.to_path_buf(),
            slices: reports.len(),
            built,
            already_there: reports.len() - built,
            seconds,
        });
    }
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
        let converted = fanorona::egdb::build::symmetric::convert_slice(dir, board, *m, threads)
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
            rows.push(SliceConverted {
                slice: *m,
                bytes_before: old,
                bytes_after: new,
            });
        }
    }
    if json {
        print_json(&SlicesConverted {
            board,
            converted: rows,
            bytes_before: before,
            bytes_after: after,
        })?;
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
        print_json(&ForwardChecked {
            board,
            pieces,
            questions,
            nodes_per_question: nodes,
            seconds,
            found: f.clone(),
        })?;
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
                rows.push(CountsRow::Unreadable(UnreadableSlice {
                    slice: *material,
                    error: what.clone(),
                }));
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
        rows.push(CountsRow::Counted(SliceCounts {
            slice: slice.material(),
            counts: c,
            paper,
            matches_paper: agrees,
        }));
    }
    let result = census_failure(&db, &census);
    if json {
        let report = TableCounts {
            board,
            slices: rows,
            paper_mismatches: mismatches,
        };
        return report_json(&report, result);
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
        return print_json(&PositionProbe {
            position: pos,
            value,
            side_to_move: pos.side_to_move(),
            plies_to_conversion: distance,
            best_move: best,
            moves: values
                .into_iter()
                .map(|(mv, value, plies_after)| MoveProbe {
                    mv,
                    value,
                    plies_after,
                })
                .collect(),
        });
    }
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
                rows.push(CheckedRow::Unreadable(UnreadableSlice {
                    slice: *material,
                    error: what.clone(),
                }));
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
            rows.push(CheckedRow::Unreadable(UnreadableSlice {
                slice: *material,
                error: what,
            }));
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
        rows.push(CheckedRow::Checked(SliceChecked {
            slice: slice.material(),
            positions: check.positions,
            entries: slice.len(),
            index: slice.scheme(),
            sampled: check.positions < slice.len(),
            errors: check.mismatches,
        }));
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
        let report = TablesChecked {
            board,
            slices: rows,
            errors: total,
        };
        return report_json(&report, result);
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

/// Runs `work` with a progress callback over `total` bytes: a bar on a terminal, a line a
/// minute to stderr otherwise.
fn with_byte_progress<T: Send>(
    label: &str,
    total: u64,
    work: impl FnOnce(&(dyn Fn(u64) + Sync)) -> T + Send,
) -> T {
    use std::sync::atomic::{AtomicU64, Ordering};
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
    let done = AtomicU64::new(0);
    let start = Instant::now();
    let (finished, wait) = std::sync::mpsc::channel::<()>();
    let result = std::thread::scope(|s| {
        let (bar, done) = (&bar, &done);
        let worker = s.spawn(move || {
            let tick = |n| {
                bar.inc(n);
                done.fetch_add(n, Ordering::Relaxed);
            };
            let result = work(&tick);
            drop(finished);
            result
        });
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
        worker.join().expect("the hashing thread does not panic")
    });
    bar.finish_and_clear();
    result
}

/// "3 slice files (1-1.wdl, 2-1.wdl, 1-2.wdl)": how many, and which.
fn named(names: &[String]) -> String {
    format!(
        "{} ({})",
        counted(names.len(), "slice file", "slice files"),
        names.join(", ")
    )
}

/// An audit's failure as the command line says it: no tables is bad input, a file that
/// cannot be read the machine's.
fn audit_failure(e: AuditError) -> Failure {
    match e {
        AuditError::NoTables(e) => Failure::input(e),
        AuditError::File(e) => Failure::other(e),
    }
}

/// `db checksums`: every slice file of a board opened (header and checksum checked) and
/// hashed, and the manifest written anew from them.
pub fn checksums(dir: &Path, board_text: &str, threads: usize, json: bool) -> CliResult {
    let board = canonical_board(board(board_text)?);
    let files = SliceFiles::list(dir, board, None).map_err(audit_failure)?;
    let label = format!("{board} sha256");
    let report = with_byte_progress(&label, files.total_bytes(), |tick| {
        audit::write_checksums(dir, &files, threads, tick)
    })
    .map_err(audit_failure)?;
    let keep: Vec<String> = report.damaged.iter().map(|d| d.file.clone()).collect();
    if !json {
        for d in &report.damaged {
            out!("{board} {}: DAMAGED, not listed: {}", d.file, d.error);
        }
        let mut line = format!(
            "{board}: {} ({}) hashed in {:.1} s -> {}",
            counted(report.files, "slice file", "slice files"),
            crate::cli::output::human_bytes(report.bytes),
            report.seconds,
            report.manifest.display()
        );
        if let Some(e) = &report.unreadable {
            line += &format!("; the manifest there could not be read ({e}): replaced");
        }
        if !report.changed.is_empty() {
            line += &format!(
                "; {} listed before with another SHA-256",
                named(&report.changed)
            );
        }
        if !report.dropped.is_empty() {
            line += &format!(
                "; {} listed before, no longer there",
                named(&report.dropped)
            );
        }
        out!("{line}");
    }
    let result = if keep.is_empty() {
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
        return report_json(&report, result);
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
    let files = SliceFiles::list(dir, board, pieces).map_err(audit_failure)?;
    let label = format!("{board} sha256");
    let report = with_byte_progress(&label, files.total_bytes(), |tick| {
        audit::verify_quick(dir, &files, threads, tick)
    })
    .map_err(audit_failure)?;
    let manifest_path = &report.manifest;
    if !json {
        for row in &report.files {
            let text = match row {
                FileRow::Read {
                    state: FileState::Damaged,
                    error,
                    ..
                } => format!("DAMAGED: {}", error.as_deref().unwrap_or_default()),
                FileRow::Read {
                    state: FileState::Unlisted,
                    ..
                } => format!("header and checksum whole, not in {}", manifest::NAME),
                FileRow::Read {
                    state: FileState::Mismatch,
                    sha256,
                    listed,
                    ..
                } => format!(
                    "MISMATCH: SHA-256 {}, {} says {}",
                    sha256.as_deref().unwrap_or_default(),
                    manifest::NAME,
                    listed.as_deref().unwrap_or_default()
                ),
                FileRow::Read { .. } => "SHA-256 matches".to_string(),
                FileRow::Gone {
                    state: FileState::Absent,
                    ..
                } => format!("listed in {}, ABSENT", manifest::NAME),
                FileRow::Gone { .. } => "MISSING".to_string(),
            };
            out!("{board} {}: {text}", row.file());
        }
    }
    let checksums = format!(
        "`fanorona db checksums --board {board} --db {}`",
        dir.display()
    );
    if !json {
        let mut line = match report.manifest_found {
            true => format!(
                "{board}: {} match {}",
                counted(report.whole, "slice file", "slice files"),
                manifest_path.display()
            ),
            false => format!(
                "{board}: no {} (tables built before manifests were kept have none): write one with {checksums}",
                manifest_path.display()
            ),
        };
        if !report.unlisted.is_empty() {
            line += &match report.manifest_found {
                true => format!(
                    "; {} not in it (header and checksum whole): list them with {checksums}",
                    named(&report.unlisted)
                ),
                false => format!(
                    "; {} whole by header and checksum",
                    counted(report.unlisted.len(), "slice file", "slice files")
                ),
            };
        }
        if !report.mismatching.is_empty() {
            line += &format!("; {} MISMATCHING", named(&report.mismatching));
        }
        if !report.damaged.is_empty() {
            line += &format!("; {} DAMAGED", named(&report.damaged));
        }
        if !report.absent.is_empty() {
            line += &format!("; {} listed but ABSENT", named(&report.absent));
        }
        if !report.missing.is_empty() {
            line += &format!("; {} MISSING", named(&report.missing));
        }
        out!("{line}");
    }
    let rebuild = format!(
        "`fanorona db build --board {board} --pieces {} --db {}`",
        report.max_pieces.max(2),
        dir.display()
    );
    let result = if !report.mismatching.is_empty() || !report.damaged.is_empty() {
        let bad: Vec<String> = report
            .mismatching
            .iter()
            .chain(&report.damaged)
            .cloned()
            .collect();
        Err(Failure::other(anyhow!(
            "{board} under {}: {} damaged or not as {} says: delete them and rebuild them with {rebuild}, or fetch them again",
            dir.display(),
            named(&bad),
            manifest::NAME
        )))
    } else if !report.absent.is_empty() || !report.missing.is_empty() {
        let gone: Vec<String> = report
            .absent
            .iter()
            .chain(&report.missing)
            .cloned()
            .collect();
        Err(Failure::input(anyhow!(
            "{board} under {}: {} missing: build them with {rebuild}",
            dir.display(),
            named(&gone)
        )))
    } else {
        Ok(())
    };
    if json {
        return report_json(&report, result);
    }
    result
}
