//! The cluster in virtual time: the real master code (`search::jobs::solve_by_dispatch`,
//! the wire's encoding and decoding) deciding a question with W simulated one-thread workers,
//! each job's answer and duration replayed from a trace (`cluster::trace`), or run here once
//! and added to it when the trace does not hold it.
//!
//! The clock: the master is one thread; the time it spends between two calls of its
//! dispatch (choosing leaves, taking answers into the tree), and encoding each job and
//! decoding each answer, is measured and moves the clock. A job sent at time t reaches a free
//! worker at t + latency/2 (there is one for every job in flight: the width is W), runs for
//! its recorded seconds and its answer is back at the master a half latency later. When the
//! master has nothing to do it waits for the earliest answer. Job-level search on a grid was
//! modelled this way by Wu, Lin et al. (Connect6); Čížek, Balko and Schmid measured 33%
//! efficiency on 1024 cores for the same master-worker PN search of Sprouts.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::{Duration, Instant};

use super::trace::{Trace, TraceError};
use super::wire::{self, AnswerMsg, JobMsg, Signature};
use fanorona_rules::position::Color;
use fanorona_search::Init;
use fanorona_search::jobs::{
    Answer, Dispatch, DispatchError, Job, JobsView, Virtual, solve_by_dispatch,
};
use fanorona_search::pn::PnTree;

/// One simulated run: a question decided with `workers` workers.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Run {
    /// How the master worked: its leaves in flight and its jobs' size, in words (runs of one
    /// series are drawn as one line).
    pub series: String,
    pub workers: usize,
    /// Virtual seconds from the first job to the decision.
    pub seconds: f64,
    pub jobs: u64,
    /// Jobs still in flight at the decision (their work wasted).
    pub abandoned: u64,
    /// Nodes of the whole search: the first level and every job's.
    pub nodes: u64,
    /// Nodes of the jobs, those abandoned included.
    pub job_nodes: u64,
    /// Seconds the workers ran jobs (up to the decision).
    pub busy_seconds: f64,
    /// Seconds the master worked (measured, not simulated).
    pub master_seconds: f64,
    /// Jobs replayed from the trace and jobs run here for it.
    pub replayed: u64,
    pub ran: u64,
    pub outcome: String,
    /// Seconds the server worked for the jobs (`ServerModel`; 0 without one).
    #[serde(default)]
    pub server_seconds: f64,
    /// Which replay of the sweep this run belongs to (`--repeat`), from 1; 0 in the output of
    /// a program before replays were counted.
    #[serde(default)]
    pub replay: usize,
}

/// The NATS server and the master's own messages, as the simulation charges them: one server
/// core spends `job_seconds` on each job (its publish, delivery, the worker's pull, the
/// answer and the acknowledgements together), jobs served in the order they are sent, so a
/// job waits while the server is busy with those before it; the master spends
/// `master_io_seconds` a job on its side of those messages. Left out: latency spread, disk
/// stalls, a server using more than one core, failures, the announcements, uneven workers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServerModel {
    pub job_seconds: f64,
    pub master_io_seconds: f64,
}

impl ServerModel {
    /// No server: messages cost nothing but the latency (the simulation before the server
    /// was in it).
    pub const NONE: ServerModel = ServerModel {
        job_seconds: 0.0,
        master_io_seconds: 0.0,
    };
    /// As `scripts/bench-pipeline.sh` measured it on 2026-12-06 (two cores, file-backed
    /// nats-server 2.9.10, 64 and 256 connections): 105 to 116 µs of the server a job, 22 to
    /// 42 µs of the master's dispatch.
    pub const MEASURED: ServerModel = ServerModel {
        job_seconds: 110e-6,
        master_io_seconds: 30e-6,
    };
}

impl Run {
    /// The fraction of the run the server was busy.
    pub fn server_load(&self) -> f64 {
        self.server_seconds / self.seconds.max(1e-12)
    }

    /// The fraction of the workers' time they had no job.
    pub fn idle(&self) -> f64 {
        1.0 - self.busy_seconds / (self.workers as f64 * self.seconds).max(1e-12)
    }

    /// The master's time a job, in microseconds.
    pub fn master_micros_per_job(&self) -> f64 {
        self.master_seconds * 1e6 / self.jobs.max(1) as f64
    }

    /// How many times sooner than `first` (a run with fewer workers, one at best) it decided,
    /// against one worker of `first`'s: `first`'s time times its workers over this time.
    pub fn speedup_over(&self, first: &Run) -> f64 {
        first.seconds * first.workers as f64 / self.seconds.max(1e-12)
    }

    /// The fraction of the run the master was working: near 1, it is the bottleneck.
    pub fn master_load(&self) -> f64 {
        self.master_seconds / self.seconds.max(1e-12)
    }
}

/// A figure over several replays: the median, the lowest and the highest.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Spread {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

impl Spread {
    fn of(mut values: Vec<f64>) -> Spread {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = match n {
            0 => f64::NAN,
            _ if n % 2 == 1 => values[n / 2],
            _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
        };
        Spread {
            median,
            low: values.first().copied().unwrap_or(f64::NAN),
            high: values.last().copied().unwrap_or(f64::NAN),
        }
    }
}

/// One series at one worker count over its replays, each run against its own replay's first
/// (one worker's) run. Replays of one trace differ (by up to ten points of efficiency at 1024
/// workers): the order answers come back in changes the tree, so one replay is no figure.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub series: String,
    pub workers: usize,
    pub replays: usize,
    pub speedup: Spread,
    pub efficiency: Spread,
    /// Nodes beyond the first run's, as a fraction of them.
    pub extra_nodes: Spread,
    pub master_micros_per_job: Spread,
    /// The fraction of the run the master worked.
    pub master_load: Spread,
    /// The fraction of the run the server was busy.
    pub server_load: Spread,
    pub idle: Spread,
    /// Jobs run here for the trace, over the replays.
    pub ran: u64,
}

/// `runs` summarised by series and worker count, in the order they first appear.
pub fn summarise(runs: &[Run]) -> Vec<Summary> {
    // Each run against the first run of its series and replay.
    let mut firsts: Vec<&Run> = Vec::new();
    // (series, workers, each run with its replay's first)
    type Group<'r> = (&'r str, usize, Vec<(&'r Run, &'r Run)>);
    let mut groups: Vec<Group> = Vec::new();
    for r in runs {
        let first = match firsts
            .iter()
            .find(|f| f.series == r.series && f.replay == r.replay)
        {
            Some(f) => *f,
            None => {
                firsts.push(r);
                r
            }
        };
        match groups
            .iter_mut()
            .find(|(s, w, _)| *s == r.series && *w == r.workers)
        {
            Some(g) => g.2.push((r, first)),
            None => groups.push((&r.series, r.workers, vec![(r, first)])),
        }
    }
    groups
        .into_iter()
        .map(|(series, workers, pairs)| {
            let spread = |f: &dyn Fn(&Run, &Run) -> f64| {
                Spread::of(pairs.iter().map(|(r, first)| f(r, first)).collect())
            };
            Summary {
                series: series.to_string(),
                workers,
                replays: pairs.len(),
                speedup: spread(&|r, f| r.speedup_over(f)),
                efficiency: spread(&|r, f| r.speedup_over(f) / r.workers as f64),
                extra_nodes: spread(&|r, f| r.nodes as f64 / f.nodes.max(1) as f64 - 1.0),
                master_micros_per_job: spread(&|r, _| r.master_micros_per_job()),
                master_load: spread(&|r, _| r.master_load()),
                server_load: spread(&|r, _| r.server_load()),
                idle: spread(&|r, _| r.idle()),
                ran: pairs.iter().map(|(r, _)| r.ran).sum(),
            }
        })
        .collect()
}

/// Runs a job this process does not find in the trace: its answer and seconds.
pub type Runner<'a> = dyn FnMut(&Job) -> (Answer, f64) + 'a;

/// A job on its way: when its answer reaches the master, and its worker's share.
struct Flight {
    /// The answer as encoded by its worker.
    body: Vec<u8>,
    /// When its worker started and would finish it.
    start: f64,
    end: f64,
    nodes: u64,
}

/// The simulated cluster, as the master's dispatch sees it.
struct Simulated<'t, 'r> {
    trace: &'t mut Trace,
    run_here: &'t mut Runner<'r>,
    attacker: Color,
    init: Init,
    workers: usize,
    latency: f64,
    server: ServerModel,
    /// When the server is free of the jobs sent so far, and how long it worked.
    server_free: f64,
    server_busy: f64,
    /// The master's clock.
    now: f64,
    /// When the master last left one of these calls (its own work is measured from there).
    left: Instant,
    master: f64,
    /// Answers on their way, earliest arrival first.
    arriving: BinaryHeap<Reverse<(u64, u64)>>,
    flights: HashMap<u64, Flight>,
    /// Jobs sent so far (the next one's number).
    sent: u64,
    /// Jobs answered: (start, end, nodes).
    done: Vec<(f64, f64, u64)>,
    replayed: u64,
    ran: u64,
    fault: Option<TraceError>,
}

/// Virtual seconds as a heap key (nanoseconds).
fn nanos(t: f64) -> u64 {
    (t * 1e9).round() as u64
}

impl Simulated<'_, '_> {
    /// `seconds` of the master's work: its clock moves on by them.
    fn spend(&mut self, seconds: f64) {
        self.master += seconds;
        self.now += seconds;
    }

    /// The master's work since it left the last call.
    fn master_worked(&mut self) {
        self.spend(self.left.elapsed().as_secs_f64());
    }

    /// Measured master work `f` (encoding, decoding).
    fn timed<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let at = Instant::now();
        let r = f();
        self.spend(at.elapsed().as_secs_f64());
        r
    }
}

const SIMULATED: Signature = Signature {
    name: String::new(),
    host: String::new(),
    threads: 1,
};

impl Dispatch for Simulated<'_, '_> {
    fn width(&self) -> usize {
        self.workers
    }

    fn send(&mut self, job: &Job) -> Result<(), DispatchError> {
        self.master_worked();
        let (attacker, init, id) = (self.attacker, self.init, self.sent);
        let msg = self.timed(|| {
            let msg = JobMsg::new("sim", id, job, attacker, init, None);
            let body = wire::encode_job(&msg);
            (msg, body)
        });
        let (answer, seconds) = match self.trace.get(attacker, job) {
            Some(r) => {
                self.replayed += 1;
                (r.answer(job), r.seconds)
            }
            None => {
                self.ran += 1;
                let (answer, seconds) = (self.run_here)(job);
                if let Err(e) = self.trace.record(attacker, job, &answer, seconds) {
                    self.fault = Some(e);
                    self.left = Instant::now();
                    return Err(DispatchError("the trace cannot be written".into()));
                }
                (answer, seconds)
            }
        };
        // The master's side of the job's messages, then the server's, in the order sent.
        self.spend(self.server.master_io_seconds);
        let served =
            (self.now + self.latency / 2.0).max(self.server_free) + self.server.job_seconds;
        self.server_free = served;
        self.server_busy += self.server.job_seconds;
        let start = served;
        let end = start + seconds;
        self.sent += 1;
        self.arriving
            .push(Reverse((nanos(end + self.latency / 2.0), id)));
        // The worker's answer as it travels; the master decodes it when it arrives.
        let reply = AnswerMsg::new(&msg.0, &answer, &SIMULATED, seconds, 1);
        let body = wire::encode_answer(&reply);
        let nodes = answer.work.nodes;
        self.flights.insert(
            id,
            Flight {
                body,
                start,
                end,
                nodes,
            },
        );
        self.left = Instant::now();
        Ok(())
    }

    fn receive(&mut self) -> Result<Option<Answer>, DispatchError> {
        self.master_worked();
        let Some(Reverse((at, id))) = self.arriving.pop() else {
            self.left = Instant::now();
            return Ok(None);
        };
        self.now = self.now.max(at as f64 / 1e9);
        let flight = self
            .flights
            .remove(&id)
            .expect("every arrival has its flight");
        let msg: AnswerMsg =
            self.timed(|| wire::decode_answer(&flight.body).expect("answers decode"));
        self.done.push((flight.start, flight.end, flight.nodes));
        self.left = Instant::now();
        Ok(Some(msg.answer()))
    }

    fn stale(&mut self) {}

    fn view(&self) -> JobsView {
        JobsView::default()
    }

    fn close(&mut self) {}
}

#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("{0}")]
    Master(String),
}

/// Decides `tree` (fresh, its question's root alone) with `workers` simulated workers, a
/// round trip of `latency` a job, leaves in flight marked by `policy`; jobs not in `trace`
/// are run by `run_here` and added to it.
pub fn simulate(
    tree: &mut PnTree<'_>,
    trace: &mut Trace,
    run_here: &mut Runner<'_>,
    workers: usize,
    (latency, server): (Duration, ServerModel),
    policy: Virtual,
) -> Result<Run, SimulateError> {
    let attacker = tree.goal.attacker;
    let init = tree.leaf_init();
    let mut sim = Simulated {
        trace,
        run_here,
        attacker,
        init,
        workers: workers.max(1),
        latency: latency.as_secs_f64(),
        server,
        server_free: 0.0,
        server_busy: 0.0,
        now: 0.0,
        left: Instant::now(),
        master: 0.0,
        arriving: BinaryHeap::new(),
        flights: HashMap::new(),
        sent: 0,
        done: Vec::new(),
        replayed: 0,
        ran: 0,
        fault: None,
    };
    let abandoned = match solve_by_dispatch(tree, &mut sim, policy) {
        Ok(n) => n,
        Err(e) => {
            return Err(match sim.fault.take() {
                Some(t) => SimulateError::Trace(t),
                None => SimulateError::Master(e.0),
            });
        }
    };
    sim.master_worked();
    sim.trace.flush()?;
    let end = sim.now;
    // The workers' time up to the decision, the abandoned jobs' share included.
    let in_flight = sim.flights.values().map(|f| (f.start, f.end, f.nodes));
    let (mut busy, mut job_nodes) = (0.0, 0);
    for (start, stop, nodes) in sim.done.iter().copied().chain(in_flight) {
        busy += (stop.min(end) - start).max(0.0);
        job_nodes += nodes;
    }
    Ok(Run {
        series: format!("{}, jobs of {} nodes", policy.name(), tree.second_level),
        workers: sim.workers,
        seconds: end,
        jobs: sim.sent,
        abandoned,
        nodes: tree.stats.nodes,
        job_nodes,
        busy_seconds: busy,
        master_seconds: sim.master,
        server_seconds: sim.server_busy.min(end),
        replayed: sim.replayed,
        ran: sim.ran,
        outcome: tree.outcome().name().to_string(),
        replay: 1,
    })
}

/// Draws the speedup of `runs` against their workers (log-log), one line a series through
/// the medians of its replays (each against its own replay's first run, which should be one
/// worker's), a bar from the lowest to the highest where replays differ, with the ideal line
/// and 50% and 35% efficiency, as a PNG at `path` (written through a temporary file).
pub fn draw_speedup(path: &std::path::Path, title: &str, runs: &[Run]) -> Result<(), String> {
    use fanorona_session::bitmap_text::BitmapText;
    use plotters::prelude::*;
    if runs.is_empty() {
        return Err("no runs to draw".into());
    }
    // Each series' median speedups in order, with the lowest and highest over the replays,
    // and its server's and master's median loads.
    type Series<'s> = (&'s str, Vec<(f64, Spread)>, Vec<(f64, f64, f64)>);
    let mut series: Vec<Series> = Vec::new();
    let summaries = summarise(runs);
    for s in &summaries {
        let i = match series.iter().position(|(name, _, _)| *name == s.series) {
            Some(i) => i,
            None => {
                series.push((&s.series, Vec::new(), Vec::new()));
                series.len() - 1
            }
        };
        series[i].1.push((s.workers as f64, s.speedup));
        series[i]
            .2
            .push((s.workers as f64, s.server_load.median, s.master_load.median));
    }
    let most = runs.iter().map(|r| r.workers).max().unwrap_or(1).max(2) as f64;
    let tmp = path.with_extension("tmp.png");
    let labels = fanorona_session::bitmap_text::label_font();
    let drawn = (|| -> Result<(), Box<dyn std::error::Error>> {
        let root = BitmapText(BitMapBackend::new(&tmp, (900, 860))).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, bottom) = root.split_vertically(620);
        let mut chart = ChartBuilder::on(&top);
        chart.margin(20);
        if labels {
            chart
                .caption(title, ("sans-serif", 20))
                .x_label_area_size(50)
                .y_label_area_size(70);
        }
        let mut chart = chart.build_cartesian_2d(
            (1f64..most * 1.2).log_scale(),
            (0.3f64..most * 1.2).log_scale(),
        )?;
        let mut mesh = chart.configure_mesh();
        if labels {
            mesh.x_desc("workers (one thread each)")
                .y_desc("speedup over one worker")
                .axis_desc_style(("sans-serif", 17))
                .label_style(("sans-serif", 14))
                .x_label_formatter(&|v| format!("{v:.0}"))
                .y_label_formatter(&|v| format!("{v:.0}"));
        } else {
            mesh.x_labels(0).y_labels(0);
        }
        mesh.draw()?;
        let line = |share: f64| {
            [1.0, most]
                .iter()
                .map(|&w| (w, w * share))
                .collect::<Vec<_>>()
        };
        let grey = RGBColor(150, 150, 150);
        let guides = [
            (1.0, "ideal", grey.stroke_width(2)),
            (
                0.5,
                "50% efficiency",
                RGBColor(120, 180, 120).stroke_width(1),
            ),
            (
                0.35,
                "35% efficiency",
                RGBColor(230, 160, 60).stroke_width(1),
            ),
        ];
        for (share, name, style) in guides {
            let s = chart.draw_series(LineSeries::new(line(share), style))?;
            if labels {
                s.label(name)
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], style));
            }
        }
        const COLOURS: [RGBColor; 4] = [
            RGBColor(30, 80, 220),
            RGBColor(210, 40, 40),
            RGBColor(120, 60, 170),
            RGBColor(20, 150, 150),
        ];
        for (i, (name, spreads, _)) in series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let points: Vec<(f64, f64)> = spreads.iter().map(|&(w, s)| (w, s.median)).collect();
            // Where replays differ, a bar from the lowest to the highest.
            let bar = |&(w, s): &(f64, Spread)| {
                PathElement::new([(w, s.low), (w, s.high)], colour.stroke_width(2))
            };
            chart.draw_series(spreads.iter().filter(|(_, s)| s.high > s.low).map(bar))?;
            let s = chart.draw_series(LineSeries::new(points.clone(), colour.stroke_width(3)))?;
            if labels {
                s.label(*name).legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 24, y)], colour.stroke_width(3))
                });
            }
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled())))?;
        }
        if labels {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .label_font(("sans-serif", 15))
                .draw()?;
        }
        // Below: how busy the server (solid) and the master (thin, squares) were, in percent
        // of the run: near 100 the one that is sets the pace.
        let mut loads = ChartBuilder::on(&bottom);
        loads.margin(20);
        if labels {
            loads.x_label_area_size(40).y_label_area_size(70);
        }
        let mut loads = loads.build_cartesian_2d((1f64..most * 1.2).log_scale(), 0f64..100f64)?;
        let mut mesh = loads.configure_mesh();
        if labels {
            mesh.y_desc("busy, % (server ●, master ■)")
                .axis_desc_style(("sans-serif", 15))
                .label_style(("sans-serif", 14))
                .x_label_formatter(&|v| format!("{v:.0}"))
                .y_label_formatter(&|v| format!("{v:.0}"));
        } else {
            mesh.x_labels(0).y_labels(0);
        }
        mesh.draw()?;
        for (i, (_, _, load)) in series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let server: Vec<(f64, f64)> = load.iter().map(|&(w, s, _)| (w, 100.0 * s)).collect();
            let master: Vec<(f64, f64)> = load.iter().map(|&(w, _, m)| (w, 100.0 * m)).collect();
            loads.draw_series(LineSeries::new(server.clone(), colour.stroke_width(3)))?;
            loads.draw_series(server.iter().map(|&p| Circle::new(p, 4, colour.filled())))?;
            loads.draw_series(LineSeries::new(master.clone(), colour.stroke_width(1)))?;
            loads.draw_series(master.iter().map(|&(x, y)| {
                Rectangle::new([(x * 0.96, y - 2.0), (x * 1.04, y + 2.0)], colour.filled())
            }))?;
        }
        root.present()?;
        Ok(())
    })()
    .map_err(|e| format!("{}: the plot failed: {e}", path.display()))
    .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display())));
    if drawn.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    drawn
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Header;
    use fanorona_rules::{Board, Position};
    use fanorona_search::dfpn::DfPn;
    use fanorona_search::jobs::run_job;
    use fanorona_search::pn::{DFPN_SECOND_LEVEL_TABLE, search};
    use fanorona_search::{Algorithm, Goal, LeafEval, Limits, SecondLevel};

    const ONE_SECOND: f64 = 1.0;

    /// `board`'s "White wins?" simulated with each of `workers`, every job taking a second.
    fn runs(board: &str, workers: &[usize], trace: &mut Trace) -> Vec<Run> {
        runs_through(board, workers, trace, ServerModel::NONE)
    }

    /// The same, through `server`.
    fn runs_through(
        board: &str,
        workers: &[usize],
        trace: &mut Trace,
        server: ServerModel,
    ) -> Vec<Run> {
        let root = Position::initial(board.parse::<Board>().unwrap());
        let goal = Goal {
            attacker: Color::White,
        };
        let leaf = LeafEval::rules_only();
        let mut dfpn = DfPn::new(goal, leaf, Limits::none(), DFPN_SECOND_LEVEL_TABLE / 64);
        let mut run_here = |job: &Job| (run_job(&mut dfpn, job), ONE_SECOND);
        workers
            .iter()
            .map(|&w| {
                let mut tree = PnTree::new(root, goal, leaf, Vec::new());
                tree.second_level = SecondLevel::Fixed(200);
                simulate(
                    &mut tree,
                    trace,
                    &mut run_here,
                    w,
                    (Duration::ZERO, server),
                    Virtual::Excluded,
                )
                .unwrap()
            })
            .collect()
    }

    #[test]
    fn simulated_workers_decide_as_the_plain_search_and_replay_their_trace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("3x7.trace");
        let header = Header::new("3x7".into(), Init::Material, None);
        let mut trace = Trace::open(&path, &header).unwrap();
        let root = Position::initial("3x7".parse::<Board>().unwrap());
        let goal = Goal {
            attacker: Color::White,
        };
        let (plain, _) = search(
            &root,
            goal,
            LeafEval::rules_only(),
            Algorithm::Pn2DfPn,
            Limits::none(),
            |_| {},
        );
        let first = runs("3x7", &[1, 4, 16], &mut trace);
        for r in &first {
            assert_eq!(r.outcome, plain.outcome().name(), "{r:?}");
            // The master's own time (measured) is small beside seconds-long jobs.
            assert!(r.master_seconds < 0.05 * r.seconds, "{r:?}");
            assert!(
                r.busy_seconds <= r.workers as f64 * r.seconds + 1e-9,
                "{r:?}"
            );
        }
        // One worker: job after job, a second each.
        let one = &first[0];
        assert!(one.seconds >= one.jobs as f64 * ONE_SECOND, "{one:?}");
        assert!(one.seconds < one.jobs as f64 * ONE_SECOND + 0.5, "{one:?}");
        assert_eq!(one.abandoned, 0);
        assert!(one.idle() < 0.01, "{one:?}");
        // Four: jobs ran side by side.
        let four = &first[1];
        assert!(
            four.seconds < four.jobs as f64 * ONE_SECOND - 1.0,
            "{four:?}"
        );
        assert_eq!(four.ran + four.replayed, four.jobs);
        assert!(four.replayed > 0, "{four:?}");
        // Opened again, the trace replays every job: the runs are the same.
        trace.flush().unwrap();
        drop(trace);
        let mut trace = Trace::open(&path, &header).unwrap();
        let again = runs("3x7", &[1, 4, 16], &mut trace);
        for (a, b) in first.iter().zip(&again) {
            assert_eq!(b.ran, 0, "{b:?}");
            assert_eq!(b.replayed, b.jobs);
            assert_eq!((a.jobs, a.nodes, &a.outcome), (b.jobs, b.nodes, &b.outcome));
        }
    }

    #[test]
    fn a_server_that_takes_a_quarter_second_a_job_carries_four_jobs_a_second() {
        let dir = tempfile::tempdir().unwrap();
        let header = Header::new("3x7".into(), Init::Material, None);
        let mut trace = Trace::open(&dir.path().join("3x7.trace"), &header).unwrap();
        let free = runs("3x7", &[16], &mut trace).remove(0);
        let slow = ServerModel {
            job_seconds: 0.25,
            master_io_seconds: 0.0,
        };
        let capped = runs_through("3x7", &[16], &mut trace, slow).remove(0);
        assert_eq!(capped.outcome, free.outcome);
        // Sixteen workers, but jobs start no faster than the server serves them (those still
        // waiting at the decision never started).
        let started = (capped.jobs - capped.abandoned) as f64;
        assert!(capped.seconds >= started * 0.25, "{capped:?}");
        assert!(free.seconds < 0.5 * capped.seconds, "{free:?} {capped:?}");
        assert!(capped.server_load() > 0.8, "{capped:?}");
        assert!(capped.idle() > 0.5, "{capped:?}");
        assert_eq!(free.server_load(), 0.0);
    }

    #[test]
    fn replays_are_summarised_by_medians_each_against_its_own_first_run() {
        let run = |replay, workers, seconds, nodes| Run {
            series: "inflated, jobs of 300 nodes".into(),
            workers,
            seconds,
            jobs: 10,
            abandoned: 0,
            nodes,
            job_nodes: nodes,
            busy_seconds: seconds,
            master_seconds: 0.001,
            server_seconds: 0.0,
            replayed: 10,
            ran: u64::from(replay == 1),
            outcome: "proven".into(),
            replay,
        };
        let runs = [
            run(1, 1, 100.0, 1000),
            run(1, 4, 50.0, 1100),
            run(2, 1, 80.0, 1000),
            run(2, 4, 20.0, 1200),
            run(3, 1, 100.0, 1000),
            run(3, 4, 40.0, 1000),
        ];
        let s = summarise(&runs);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].workers, s[0].replays), (1, 3));
        assert_eq!(s[0].speedup.median, 1.0);
        // At 4 workers: 100/50, 80/20 (against replay 2's own first run), 100/40.
        assert_eq!(
            s[1].speedup,
            Spread {
                median: 2.5,
                low: 2.0,
                high: 4.0
            }
        );
        assert_eq!(s[1].efficiency.median, 0.625);
        assert!((s[1].extra_nodes.median - 0.1).abs() < 1e-12, "{:?}", s[1]);
        assert_eq!(s[1].ran, 1);
        assert_eq!(Spread::of(vec![3.0, 1.0, 4.0, 2.0]).median, 2.5);
        // Drawn: medians with their bars, through a temporary file.
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("speedup.png");
        draw_speedup(&png, "replays", &runs).unwrap();
        assert!(std::fs::metadata(&png).unwrap().len() > 1000);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
