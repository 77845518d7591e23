//! `fanorona cluster bench`: the pipeline alone. The real master (`NatsDispatch`) keeps
//! jobs in flight to echo workers (`worker::run_echo`, answers at once, no search) through
//! one nats-server, so the server and the master are all that is measured: jobs a second
//! carried, and the processor time a job of the server, the master and the workers, read
//! from `/proc` before and after.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::ClusterError;
use super::dispatch::{NatsDispatch, Options};
use fanorona_rules::Board;
use fanorona_rules::position::{Color, Position};
use fanorona_search::Init;
use fanorona_search::jobs::{Dispatch, Job};

/// One line of the load test's table.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    /// Worker connections (echo workers), and the threads of each.
    pub connections: usize,
    pub threads: usize,
    /// Jobs kept in flight by the master.
    pub in_flight: usize,
    /// Jobs answered in the measured window, and its length.
    pub jobs: u64,
    pub seconds: f64,
    pub jobs_per_second: f64,
    /// Processor time a job, in microseconds: the server's (if its process was given), the
    /// master's (this process), the workers' (their process).
    pub server_us_per_job: Option<f64>,
    pub master_us_per_job: f64,
    pub workers_us_per_job: Option<f64>,
}

/// Processor seconds (user and system) process `pid` has used, from `/proc/PID/stat`.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: fields are counted after its ')'.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    Some((ticks(11)? + ticks(12)?) / CLOCK_TICKS)
}

/// Clock ticks a second (`getconf CLK_TCK`): 100 on every Linux this runs on.
const CLOCK_TICKS: f64 = 100.0;

/// Runs the master against workers already connected (process `workers`, if given) for
/// `warm_up` then `seconds`, keeping `in_flight` jobs out; `server` is the server's process
/// for its processor time.
pub fn measure(
    options: &Options,
    (connections, threads): (usize, usize),
    seconds: f64,
    server: Option<u32>,
    workers: Option<u32>,
) -> Result<BenchRow, ClusterError> {
    let run = format!("bench-{}-{connections}", std::process::id());
    let mut d = NatsDispatch::open(options, run, Color::White, Init::Material, None)
        .map_err(|e| ClusterError::Nats(format!("opening the run: {e}")))?;
    let board = Board::new(5, 9).expect("5x9 is a board");
    let job = |leaf| Job {
        leaf,
        position: Position::initial(board),
        history: Vec::new(),
        budget: 1,
    };
    let mut leaf = 0u32;
    let lost = |e: fanorona_search::jobs::DispatchError, answered: u64| {
        ClusterError::Nats(format!("after {answered} answers: {e}"))
    };
    let (mut sent, mut answered) = (0u64, 0u64);
    let mark = |answered: u64| {
        (
            Instant::now(),
            answered,
            server.and_then(cpu_seconds),
            cpu_seconds(std::process::id()).unwrap_or(0.0),
            workers.and_then(cpu_seconds),
        )
    };
    let warm_up = Duration::from_secs(1);
    let started = Instant::now();
    let mut first = None;
    loop {
        // Counted here: `view` copies every worker's line, as a status does, not a step.
        while sent - answered < options.width as u64 {
            leaf = leaf.wrapping_add(1);
            d.send(&job(leaf)).map_err(|e| lost(e, answered))?;
            sent += 1;
        }
        if d.receive().map_err(|e| lost(e, answered))?.is_some() {
            answered += 1;
        }
        if first.is_none() && started.elapsed() >= warm_up {
            first = Some(mark(answered));
        }
        if let Some(f) = &first
            && f.0.elapsed().as_secs_f64() >= seconds
        {
            break;
        }
    }
    let last = mark(answered);
    d.close();
    let f = first.expect("marked after the warm-up");
    let jobs = last.1 - f.1;
    let window = last.0.duration_since(f.0).as_secs_f64();
    let per_job = |a: Option<f64>, b: Option<f64>| Some((b? - a?) * 1e6 / jobs.max(1) as f64);
    Ok(BenchRow {
        connections,
        threads,
        in_flight: options.width,
        jobs,
        seconds: window,
        jobs_per_second: jobs as f64 / window,
        server_us_per_job: per_job(f.2, last.2),
        master_us_per_job: (last.3 - f.3) * 1e6 / jobs.max(1) as f64,
        workers_us_per_job: per_job(f.4, last.4),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_has_used_some_processor_time() {
        // A fifth of a second of work: at least a clock tick of it is counted.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(200) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
        let s = super::cpu_seconds(std::process::id()).expect("/proc/self/stat");
        assert!(s > 0.0 && s < 3600.0, "{s}");
    }
}
