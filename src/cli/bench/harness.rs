//! What every `bench` workload shares: a case to time, and the runner that repeats the
//! cases, takes their medians and prints one line each and a signature.

use std::time::Instant;

use serde_json::{Value, json};

use crate::cli::output::counted;
use crate::out;

/// One case of a workload: a label for the text output, its fields for the JSON output, and
/// the work, which returns the nodes it counted.
pub struct Case<'a> {
    pub label: String,
    pub fields: Value,
    pub run: Box<dyn Fn() -> u64 + 'a>,
}

/// Runs `cases`; `unit` names what is counted ("leaves", "nodes"); `threads` is reported.
pub fn run(cases: Vec<Case<'_>>, repeat: usize, threads: usize, unit: &str, json: bool) {
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
        let mut row = case.fields;
        row["nodes"] = json!(nodes);
        row["seconds"] = json!(median);
        rows.push(row);
        total += nodes;
        total_seconds += median;
    }
    let rate = total as f64 / total_seconds;
    if json {
        out!(
            "{}",
            json!({"nodes": total, "seconds": total_seconds, "nodes_per_second": rate.round() as u64,
                   "threads": threads, "repeat": repeat, "runs": rows})
        );
    } else {
        out!(
            "signature {total} {unit}; {total_seconds:.3} s (sum of medians of {repeat}): {:.2} M {unit}/s, {}",
            rate / 1e6,
            counted(threads, "thread", "threads")
        );
    }
}
