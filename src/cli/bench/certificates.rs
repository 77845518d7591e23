//! `fanorona bench certificates`: what certificates cost. For each board, the questions
//! `solve` asks are searched by PN (which keeps its whole tree, so writing re-solves
//! nothing), then each decided question's certificate is written (gzip) and checked. It
//! reports the writing time as a share of the search's, and the checker's nodes a second.

use std::path::Path;
use std::time::Instant;

use anyhow::anyhow;

use crate::cli::output::{CliResult, Failure, print_json};
use crate::out;
use fanorona::certificate::{self, Solved};
use fanorona::egdb::file::board_dir;
use fanorona::search::Algorithm;
use fanorona::search::pn;
use fanorona::search::{Goal, LeafEval, Limits, Outcome};
use fanorona::{Board, Position};

/// One run of a board: seconds searching, writing and checking, and certificate nodes.
#[derive(Clone, Copy, Default)]
struct Run {
    solve: f64,
    write: f64,
    verify: f64,
    nodes: u64,
    bytes: u64,
}

fn run_board(board: Board, db_dir: Option<&Path>, out_dir: &Path) -> Result<Run, Failure> {
    let root = Position::initial(board);
    let db = db_dir
        .map(|d| crate::cli::args::open_tables(d, board))
        .transpose()?;
    let leaf = LeafEval::new(db.as_ref());
    let mut run = Run::default();
    let mover = root.side_to_move();
    for attacker in [mover, mover.opponent()] {
        let goal = Goal { attacker };
        let t = Instant::now();
        let (tree, _) = pn::search(&root, goal, leaf, Algorithm::Pn, Limits::none(), |_| {});
        run.solve += t.elapsed().as_secs_f64();
        let proves = tree.outcome() == Outcome::Proven;
        let solved = Solved {
            root,
            goal,
            proves,
            db: db.as_ref(),
            tree: Some(&tree),
            dfpn: None,
        };
        let path = certificate::path_for(&out_dir.join(board.to_string()), goal);
        let t = Instant::now();
        let written =
            certificate::write_file(&path, solved, Default::default(), None, None, &mut |_| {})
                .map_err(|e| Failure::other(anyhow!("{}: {e}", path.display())))?;
        run.write += t.elapsed().as_secs_f64();
        // The tables stay open from the search: their files' checksums were read then, so
        // this measures the checker's own work.
        let t = Instant::now();
        let tables = db.as_ref().map(certificate::Tables::Open);
        certificate::verify_file(&path, tables, |_| {}, &mut |_| {}, &mut |_, _| {})
            .map_err(|e| Failure::other(anyhow!("{}: {e}", path.display())))?;
        run.verify += t.elapsed().as_secs_f64();
        run.nodes += written.nodes;
        run.bytes += written.bytes;
        // A proof for the side to move decides the value: `solve` asks no more.
        if proves {
            break;
        }
    }
    Ok(run)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// `bench certificates --json`: the certificates' nodes (a signature), the sum of the
/// checker's median times, and each board.
#[derive(serde::Serialize)]
struct CertificatesTimed {
    certificate_nodes: u64,
    verify_seconds: f64,
    verify_nodes_per_second: u64,
    repeat: usize,
    runs: Vec<BoardTimed>,
}

/// One board of `bench certificates`: the search, and its certificates written and checked
/// (median times).
#[derive(serde::Serialize)]
struct BoardTimed {
    board: Board,
    tables: bool,
    search_seconds: f64,
    write_seconds: f64,
    /// Writing's time as a share of the search's.
    write_share: f64,
    verify_seconds: f64,
    certificate_nodes: u64,
    certificate_bytes: u64,
}

/// 3x7 and 7x3 without tables; with `db`, 5x7 over its tables too.
pub fn bench(repeat: usize, db: Option<&Path>, json: bool) -> CliResult {
    let mut boards: Vec<(Board, Option<&Path>)> = ["3x7", "7x3"]
        .iter()
        .map(|b| (b.parse().expect("a supported board"), None))
        .collect();
    if let Some(dir) = db {
        let b: Board = "5x7".parse().expect("a supported board");
        if !board_dir(dir, b).is_dir() {
            return Err(Failure::input(anyhow!(
                "no tables of 5x7 under {}: build them with `fanorona db build --board 5x7 --pieces 7 --db {}`",
                dir.display(),
                dir.display()
            )));
        }
        boards.push((b, Some(dir)));
    }
    let tmp = std::env::temp_dir().join(format!("fanorona-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| Failure::other(anyhow!("{}: {e}", tmp.display())))?;
    let mut rows = Vec::new();
    let (mut total_nodes, mut total_verify) = (0u64, 0f64);
    for (board, dir) in boards {
        let runs = (0..repeat.max(1))
            .map(|_| run_board(board, dir, &tmp))
            .collect::<Result<Vec<_>, _>>()?;
        let solve = median(runs.iter().map(|r| r.solve).collect());
        let write = median(runs.iter().map(|r| r.write).collect());
        let verify = median(runs.iter().map(|r| r.verify).collect());
        let (nodes, bytes) = (runs[0].nodes, runs[0].bytes);
        total_nodes += nodes;
        total_verify += verify;
        if !json {
            out!(
                "{board} pn{}: search {solve:.3} s; certificates {nodes} nodes, {bytes} bytes, written in {write:.3} s ({:.1}% of the search), checked in {verify:.3} s ({:.2} M nodes/s)",
                if dir.is_some() { " over tables" } else { "" },
                100.0 * write / solve.max(1e-9),
                nodes as f64 / verify.max(1e-9) / 1e6
            );
        }
        rows.push(BoardTimed {
            board,
            tables: dir.is_some(),
            search_seconds: solve,
            write_seconds: write,
            write_share: write / solve.max(1e-9),
            verify_seconds: verify,
            certificate_nodes: nodes,
            certificate_bytes: bytes,
        });
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let rate = total_nodes as f64 / total_verify.max(1e-9);
    if json {
        print_json(&CertificatesTimed {
            certificate_nodes: total_nodes,
            verify_seconds: total_verify,
            verify_nodes_per_second: rate.round() as u64,
            repeat,
            runs: rows,
        })?;
    } else {
        out!(
            "signature {total_nodes} certificate nodes; checked in {total_verify:.3} s (sum of medians of {repeat}): {:.2} M nodes/s",
            rate / 1e6
        );
    }
    Ok(())
}
