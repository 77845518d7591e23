//! `fanorona bench store`: what the session store costs. Resuming a large first-level tree,
//! the store's size per million nodes, the memory a rewrite of the whole tree costs in a fold's
//! batches and in one, and the solve rate with frequent checkpoints against the same solve
//! with none until the end.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli::output::{CliResult, Failure, print_json};
use crate::out;
use fanorona::search::Algorithm;
use fanorona::search::pn::Node;
use fanorona::search::{INFINITE, Init, Leaf};
use fanorona::session::codec::{self, CHUNK};
use fanorona::session::log::resident_bytes;
use fanorona::session::runner::{Control, FOLD_BATCH, run};
use fanorona::session::store::{SledStore, Store, Table, Write};
use fanorona::session::{SecondLevel, Sessions, Settings};
use fanorona::{Color, Position};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A first-level tree of `n` nodes shaped like a real one: each expanded node has 8 children.
fn synthetic_tree(n: usize) -> Vec<Node> {
    let pos = Position::initial("5x9".parse().expect("5x9 is supported"));
    (0..n)
        .map(|i| {
            let first = 1 + 8 * i;
            let expanded = first + 8 <= n;
            Node {
                pos,
                pn: (i as u64 * 7919) % 10_000 + 1,
                dn: if i % 97 == 0 {
                    INFINITE
                } else {
                    (i as u64 * 104_729) % 50_000 + 1
                },
                parent: if i == 0 {
                    u32::MAX
                } else {
                    ((i - 1) / 8) as u32
                },
                first: if expanded { first as u32 } else { 0 },
                count: if expanded { 8 } else { 0 },
                expanded,
                leaf: Leaf::Open,
                repetition: false,
                rote: false,
                since: i as u64,
            }
        })
        .collect()
}

/// A new PN² session on `root` without tables or proof checks; returns its id.
fn new_session(sessions: &Sessions, root: &Position, checkpoint_ms: u64) -> Result<u64, Failure> {
    let settings = Settings {
        algo: Algorithm::Pn2,
        db_dir: None,
        second_level: SecondLevel::TreeSize,
        init: Init::Mobility,
        weights: None,
        checkpoint_ms,
        verify: false,
        threads: 1,
        pairs: false,
    };
    Ok(sessions
        .create(root, None, settings)
        .map_err(Failure::other)?
        .id)
}

/// A solve of the 9x3 start (long without tables) for `seconds`; returns nodes per second.
/// Also returns the checkpoints written and the share of the time they took.
fn solve_rate(
    sessions: &Sessions,
    checkpoint_ms: u64,
    seconds: f64,
    logs: &std::path::Path,
) -> Result<(f64, u64, f64), Failure> {
    let root = Position::initial("9x3".parse().expect("9x3 is supported"));
    let id = new_session(sessions, &root, checkpoint_ms)?;
    let control = Control::default();
    let rec = std::thread::scope(|s| {
        let h = s.spawn(|| run(sessions, id, &control, logs));
        std::thread::sleep(Duration::from_secs_f64(seconds));
        control.request_stop();
        h.join().expect("the solve does not panic")
    })
    .map_err(Failure::other)?;
    let g = &rec.goals[0];
    let spent = *control.checkpoint_seconds.lock().expect("checkpoint time");
    Ok((
        g.nodes as f64 / g.seconds.max(1e-9),
        rec.checkpoints,
        spent / g.seconds.max(1e-9),
    ))
}

/// The scratch stores of earlier `bench store` runs that were interrupted (their process is
/// gone, so nothing removed them): a gigabyte each. Only directories of this user's: a run
/// of another user's (or in another process namespace) may look gone from here.
#[cfg(target_os = "linux")]
fn remove_abandoned_stores(tmp: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    let (Ok(dir), Ok(me)) = (std::fs::read_dir(tmp), std::fs::metadata("/proc/self")) else {
        return;
    };
    for entry in dir.flatten() {
        let ours = std::fs::symlink_metadata(entry.path())
            .is_ok_and(|m| m.is_dir() && m.uid() == me.uid());
        if !ours {
            continue;
        }
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("fanorona-bench-store-"))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && !std::path::Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// `bench store --json`: a synthetic tree written, resumed and written again, the store's
/// size, and what checkpoints cost a search.
#[derive(serde::Serialize)]
struct StoreTimed {
    tree_nodes: usize,
    write_seconds: f64,
    resume_seconds: f64,
    store_bytes: u64,
    store_bytes_per_million_nodes: f64,
    rewrite_batched_seconds: f64,
    rewrite_batched_memory_growth: u64,
    rewrite_one_batch_seconds: f64,
    rewrite_one_batch_memory_growth: u64,
    nodes_per_second_checkpoint_every_second: f64,
    nodes_per_second_no_checkpoint: f64,
    /// The share of the speed lost to checkpoints every second.
    checkpoint_cost: f64,
    /// The share of the time spent writing them.
    checkpoint_time_share: f64,
    repeat: usize,
}

/// `bench store --from DIR --json`: the store opened (and upgraded), and each session's
/// first-level trees resumed and written whole.
#[derive(serde::Serialize)]
struct StoreOpenedTimed {
    open_seconds: f64,
    trees: Vec<TreeTimed>,
    repeat: usize,
}

/// One first-level tree of `bench store --from`: its nodes, and the median times.
#[derive(serde::Serialize)]
struct TreeTimed {
    session: u64,
    goal: Color,
    nodes: usize,
    resume_seconds: f64,
    write_seconds: f64,
}

pub fn bench(tree_nodes: usize, repeat: usize, seconds: f64, json: bool) -> CliResult {
    #[cfg(target_os = "linux")]
    remove_abandoned_stores(&std::env::temp_dir());
    let tmp = std::env::temp_dir().join(format!("fanorona-bench-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let result = (|| -> Result<StoreTimed, Failure> {
        let store: Arc<dyn Store> =
            Arc::new(SledStore::open(&tmp.join("store"), 256 << 20).map_err(Failure::other)?);
        let sessions = Sessions::open(store.clone(), false).map_err(Failure::other)?;
        let logs = tmp.join("logs");

        // A large first-level tree, written as checkpoints write it (whole chunks).
        let nodes = synthetic_tree(tree_nodes);
        let root = nodes[0].pos;
        let id = new_session(&sessions, &root, 300_000)?;
        let t = Instant::now();
        for (batch_no, batch) in nodes.chunks(CHUNK * 256).enumerate() {
            let writes: Vec<Write> = batch
                .chunks(CHUNK)
                .enumerate()
                .map(|(j, c)| {
                    let chunk = (batch_no * 256 + j) as u32;
                    Write::put(
                        Table::Nodes,
                        codec::chunk_key(id, 0, chunk),
                        codec::encode_chunk(c, 0),
                    )
                })
                .collect();
            store.apply(&writes).map_err(Failure::other)?;
        }
        let write_s = t.elapsed().as_secs_f64();
        let bytes = store.size_on_disk();

        let mut resume = Vec::new();
        for _ in 0..repeat {
            let t = Instant::now();
            let back = sessions
                .load_tree(id, 0, root.board(), nodes.len() as u64)
                .map_err(Failure::other)?;
            resume.push(t.elapsed().as_secs_f64());
            if back.len() != nodes.len() {
                return Err(Failure::other(anyhow::anyhow!(
                    "read {} nodes of {}",
                    back.len(),
                    nodes.len()
                )));
            }
        }
        let resume_s = median(resume);
        if !json {
            out!(
                "tree of {tree_nodes} nodes: written in {write_s:.2} s, resumed in {resume_s:.2} s (median of {repeat}); store {:.1} MB, {:.1} MB per million nodes",
                bytes as f64 / 1e6,
                bytes as f64 / 1e6 / (tree_nodes as f64 / 1e6)
            );
        }

        // The whole tree written again in the fold's batches (`FOLD_BATCH` chunks), then in
        // one batch (as a format 3 checkpoint that touched every chunk did): the time and the
        // growth of resident memory of each.
        let rewrite = |per_batch: usize| -> Result<(f64, u64), Failure> {
            let before = resident_bytes();
            let t = Instant::now();
            let chunks: Vec<&[Node]> = nodes.chunks(CHUNK).collect();
            for (b, batch) in chunks.chunks(per_batch).enumerate() {
                let writes: Vec<Write> = batch
                    .iter()
                    .enumerate()
                    .map(|(j, c)| {
                        let chunk = (b * per_batch + j) as u32;
                        Write::put(
                            Table::Nodes,
                            codec::chunk_key(id, 0, chunk),
                            codec::encode_chunk(c, 1),
                        )
                    })
                    .collect();
                store.commit(&writes).map_err(Failure::other)?;
            }
            store.sync().map_err(Failure::other)?;
            Ok((
                t.elapsed().as_secs_f64(),
                resident_bytes().saturating_sub(before),
            ))
        };
        let (batched_s, batched_growth) = rewrite(FOLD_BATCH)?;
        let (whole_s, whole_growth) = rewrite(usize::MAX)?;
        if !json {
            out!(
                "the tree written again: in batches of {FOLD_BATCH} chunks (a fold) {batched_s:.2} s, resident memory +{:.0} MB; in one batch {whole_s:.2} s, +{:.0} MB",
                batched_growth as f64 / 1e6,
                whole_growth as f64 / 1e6
            );
        }

        // Checkpoint cost: every second against only at the end.
        let (mut often, mut never, mut share, mut count) = (Vec::new(), Vec::new(), Vec::new(), 0);
        for _ in 0..repeat {
            let (r, c, f) = solve_rate(&sessions, 1000, seconds, &logs)?;
            often.push(r);
            share.push(f);
            count = c;
            never.push(solve_rate(&sessions, 3_600_000, seconds, &logs)?.0);
        }
        let (often, never, share) = (median(often), median(never), median(share));
        let cost = 1.0 - often / never;
        if !json {
            out!(
                "9x3 PN² for {seconds} s: {:.2} M nodes/s checkpointing every second ({count} checkpoints, {:.2}% of the time spent writing them), {:.2} M nodes/s without; rate difference {:.1}% (median of {repeat})",
                often / 1e6,
                share * 100.0,
                never / 1e6,
                cost * 100.0
            );
        }
        Ok(StoreTimed {
            tree_nodes,
            write_seconds: write_s,
            resume_seconds: resume_s,
            store_bytes: bytes,
            store_bytes_per_million_nodes: bytes as f64 / (tree_nodes as f64 / 1e6),
            rewrite_batched_seconds: batched_s,
            rewrite_batched_memory_growth: batched_growth,
            rewrite_one_batch_seconds: whole_s,
            rewrite_one_batch_memory_growth: whole_growth,
            nodes_per_second_checkpoint_every_second: often,
            nodes_per_second_no_checkpoint: never,
            checkpoint_cost: cost,
            checkpoint_time_share: share,
            repeat,
        })
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    let timed = result?;
    if json {
        print_json(&timed)?;
    }
    Ok(())
}

/// `bench store --from DIR`: opens the store of `dir` (upgrading an older format, timed),
/// then for every session's first-level trees: resuming them (median of `repeat`), and
/// writing them whole, as a checkpoint that changed every chunk would.
pub fn resume_from(dir: &std::path::Path, repeat: usize, json: bool) -> CliResult {
    let t = Instant::now();
    let store: Arc<dyn Store> =
        Arc::new(SledStore::open(&dir.join("store"), 256 << 20).map_err(Failure::other)?);
    let sessions = Sessions::open(store.clone(), true).map_err(Failure::other)?;
    let open_s = t.elapsed().as_secs_f64();
    let mut rows = Vec::new();
    for rec in sessions.list().map_err(Failure::other)? {
        let root: Position = rec
            .root
            .parse()
            .map_err(|e| Failure::other(anyhow::anyhow!("session {}: {e}", rec.id)))?;
        for (g, goal) in rec.goals.iter().enumerate() {
            if goal.first_level <= 1 {
                continue;
            }
            let mut times = Vec::new();
            let (mut nodes, mut seq) = (Vec::new(), 0);
            for _ in 0..repeat {
                let t = Instant::now();
                let saved = sessions
                    .load_saved(rec.id, g as u8, root.board(), goal.first_level)
                    .map_err(Failure::other)?;
                times.push(t.elapsed().as_secs_f64());
                (nodes, seq) = (saved.nodes, saved.seq);
            }
            let mut writes_s = Vec::new();
            for _ in 0..repeat {
                let t = Instant::now();
                let writes: Vec<Write> = nodes
                    .chunks(CHUNK)
                    .enumerate()
                    .map(|(c, chunk)| {
                        Write::put(
                            Table::Nodes,
                            codec::chunk_key(rec.id, g as u8, c as u32),
                            codec::encode_chunk(chunk, seq),
                        )
                    })
                    .collect();
                store.apply(&writes).map_err(Failure::other)?;
                writes_s.push(t.elapsed().as_secs_f64());
            }
            let (resume, write) = (median(times), median(writes_s));
            if !json {
                out!(
                    "session {} ({}) {} wins?: {} first-level nodes resumed in {resume:.3} s, written whole in {write:.3} s (median of {repeat})",
                    rec.id,
                    rec.name,
                    goal.attacker,
                    nodes.len()
                );
            }
            rows.push(TreeTimed {
                session: rec.id,
                goal: goal.attacker,
                nodes: nodes.len(),
                resume_seconds: resume,
                write_seconds: write,
            });
        }
    }
    if json {
        print_json(&StoreOpenedTimed {
            open_seconds: open_s,
            trees: rows,
            repeat,
        })?;
    } else {
        out!("store opened (and upgraded if older) in {open_s:.3} s");
    }
    Ok(())
}
