//! What every `bench` workload shares: a case to time, and the runner that repeats the
//! cases, takes their medians and prints one line each and a signature.

use std::time::Instant;

use serde::Serialize;

use crate::cli::output::{CliResult, counted, print_json};
use crate::out;

/// One case of a workload: a label for the text output, what it runs for the JSON output
/// (`F`, a workload's own type), and the work, which returns the nodes it counted.
pub struct Case<'a, F> {
    pub label: String,
    pub fields: F,
    pub run: Box<dyn Fn() -> u64 + 'a>,
}

/// `bench --json`: a workload's signature (the nodes it counts), the sum of the cases'
/// median times, and each case.
#[derive(Serialize)]
struct WorkloadTimed<F> {
    nodes: u64,
    seconds: f64,
    nodes_per_second: u64,
    threads: usize,
    repeat: usize,
    runs: Vec<CaseTimed<F>>,
}

/// A case of `bench --json`: what it ran, the nodes it counted and its median time.
#[derive(Serialize)]
struct CaseTimed<F> {
    #[serde(flatten)]
    case: F,
    nodes: u64,
    seconds: f64,
}

/// Runs `cases`; `unit` names what is counted ("leaves", "nodes"); `threads` is reported.
pub fn run<F: Serialize>(
    cases: Vec<Case<'_, F>>,
    repeat: usize,
    threads: usize,
    unit: &str,
    json: bool,
) -> CliResult {
    let mut rows = Vec::new();
    let (mut total, mut total_seconds) = (0u64, 0f64);
    for case in cases {
        let mut times = Vec::new();
        let mut nodes = 0;
        for _ in 0..repeat.max(1) {
            let t = Instant::now();
            nodes = (case.run)();
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        if !json {
            out!(
                "{}: {nodes:>11} {unit} {median:>7.3} s {:>7.2} M {unit}/s",
                case.label,
                nodes as f64 / median / 1e6
            );
        }
        rows.push(CaseTimed {
            case: case.fields,
            nodes,
            seconds: median,
        });
        total += nodes;
        total_seconds += median;
    }
    let rate = total as f64 / total_seconds;
    if json {
        return print_json(&WorkloadTimed {
            nodes: total,
            seconds: total_seconds,
            nodes_per_second: rate.round() as u64,
            threads,
            repeat,
            runs: rows,
        });
    }
    out!(
        "signature {total} {unit}; {total_seconds:.3} s (sum of medians of {repeat}): {:.2} M {unit}/s, {}",
        rate / 1e6,
        counted(threads, "thread", "threads")
    );
    Ok(())
}
