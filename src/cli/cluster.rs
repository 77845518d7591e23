//! `fanorona worker` and `fanorona cluster solve`: second-level searches as jobs over NATS
//! JetStream.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::cli::help;
use crate::cli::output::{CliResult, Failure};
use crate::out;
use fanorona::cluster::{self, dispatch, master, wire};
use fanorona::config::Config;
use fanorona::search::pn::PnTree;
use fanorona::search::{Goal, LeafEval, Outcome};

/// Where the NATS server is and how to prove who we are.
#[derive(Args)]
pub struct Nats {
    /// The NATS server, e.g. nats://10.0.0.5:4222.
    #[arg(long, value_name = "URL")]
    pub nats: String,
    /// A file holding the server's token (or FANORONA_NATS_TOKEN; never on the command line,
    /// where every user of the machine reads it).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
}

impl Nats {
    fn token(&self) -> Result<Option<String>, Failure> {
        cluster::read_token(self.token_file.as_deref()).map_err(|e| {
            let path = self
                .token_file
                .as_deref()
                .unwrap_or(std::path::Path::new(""));
            Failure::input(anyhow!("{}: {e}", path.display()))
        })
    }
}

#[derive(Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub nats: Nats,
    /// The endgame tables (default: db_dir of the config): the same as the master's.
    #[arg(long, value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// Jobs run at once, one a thread.
    #[arg(long, default_value = "1", value_parser = crate::cli::threads)]
    pub threads: usize,
    /// The worker's name in answers and logs (default: HOST-PID).
    #[arg(long)]
    pub name: Option<String>,
}

#[derive(Subcommand)]
pub enum ClusterCommand {
    /// Decide a position (both questions) with its second-level searches run by workers.
    ///
    /// The first-level tree stays here; each expansion is a job on the jobs stream, up to
    /// --jobs in flight. Prints the value, the nodes and which worker answered how many.
    #[command(after_long_help = help::CLUSTER_SOLVE)]
    Solve {
        #[command(flatten)]
        target: crate::cli::Target,
        #[command(flatten)]
        nats: Nats,
        /// The endgame tables its leaves read (the workers need the same).
        #[arg(long, value_name = "DIR")]
        db: Option<PathBuf>,
        /// Jobs kept in flight.
        #[arg(long, default_value = "4")]
        jobs: usize,
        /// How long a job may go without word from its worker (a worker says "in progress"
        /// three times in it) before the server gives it to another.
        #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
        ack_wait: std::time::Duration,
        /// How large each job's search may grow: \"tree-size\", a node count, \"tree/D\" or
        /// \"max(N,tree/D)\" (default: second_level of the config).
        #[arg(long, value_name = "BOUND")]
        second_level: Option<fanorona::search::SecondLevel>,
        #[command(flatten)]
        out: crate::cli::JsonFlag,
    },
    /// What the server holds: jobs queued and under way, worker threads asking for one,
    /// redeliveries, answers not yet read. The workers by name, and each session's jobs,
    /// are in `fanorona session status`.
    #[command(after_long_help = help::CLUSTER_STATUS)]
    Status {
        #[command(flatten)]
        nats: MaybeNats,
        #[command(flatten)]
        out: crate::cli::JsonFlag,
    },
}

/// The server and token of `--nats`/`--token-file`, or else of the config's `[cluster]`.
#[derive(Args)]
pub struct MaybeNats {
    /// The NATS server (default: nats of the config's [cluster]).
    #[arg(long, value_name = "URL")]
    pub nats: Option<String>,
    /// A file holding the server's token (default: token_file of [cluster], else
    /// FANORONA_NATS_TOKEN).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
}

impl MaybeNats {
    fn resolve(self, config: &Config) -> Result<Nats, Failure> {
        let cluster = config.cluster.as_ref();
        let nats = self
            .nats
            .or_else(|| cluster.map(|c| c.nats.clone()))
            .ok_or_else(|| {
                Failure::input(anyhow!(
                    "no server: give --nats URL, or nats in the config's [cluster]"
                ))
            })?;
        Ok(Nats {
            nats,
            token_file: self
                .token_file
                .or_else(|| cluster.and_then(|c| c.token_file.clone())),
        })
    }
}

pub fn worker(args: WorkerArgs, config: &Config) -> CliResult {
    let options = cluster::worker::Options {
        url: args.nats.nats.clone(),
        token: args.nats.token()?,
        db: Some(args.db.unwrap_or_else(|| config.db_dir.clone())),
        threads: args.threads,
        name: args
            .name
            .unwrap_or_else(|| format!("{}-{}", cluster::host_name(), std::process::id())),
        table_bytes: 256 << 20,
    };
    cluster::worker::run(options, &|line| eprintln!("{line}")).map_err(Failure::other)?;
    Ok(())
}

pub fn cluster(command: ClusterCommand, config: &Config) -> CliResult {
    match command {
        ClusterCommand::Status { nats, out } => {
            let nats = nats.resolve(config)?;
            let token = nats.token()?;
            let s =
                cluster::status::status(&nats.nats, token.as_deref()).map_err(Failure::other)?;
            if out.json {
                out!("{}", json!(s));
                return Ok(());
            }
            out!("server {} (nats-server {})", s.url, s.server_version);
            if !s.streams {
                out!("  no jobs stream yet: no master has run here");
                return Ok(());
            }
            let list = |runs: &[(String, u64)]| {
                if runs.is_empty() {
                    "none".to_string()
                } else {
                    runs.iter()
                        .map(|(r, n)| format!("{n} of {r}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            };
            out!("  jobs queued: {}", list(&s.queued));
            out!(
                "  jobs held by workers: {}; worker threads asking for one: {}; redelivered: {}; ack wait {} s",
                s.running,
                s.idle_threads,
                s.redelivered,
                s.ack_wait_seconds
            );
            out!("  answers not yet read: {}", list(&s.answers));
            Ok(())
        }
        ClusterCommand::Solve {
            target,
            nats,
            db,
            jobs,
            ack_wait,
            second_level,
            out,
        } => {
            let root = crate::cli::rules::resolve_target(&target)?;
            let tables = db
                .as_deref()
                .map(|d| crate::cli::solve::open_tables(d, root.board()))
                .transpose()?;
            let leaf = LeafEval::new(tables.as_ref()).with_init(config.init);
            let needs = tables.as_ref().map(|t| {
                let pieces = t.max_pieces();
                wire::Tables {
                    board: root.board().to_string(),
                    pieces,
                    fingerprint: t.fingerprint(pieces),
                }
            });
            let run = dispatch::subject_token(&format!(
                "{}-{}",
                cluster::host_name(),
                std::process::id()
            ));
            let token = nats.token()?;
            let mover = root.side_to_move();
            let mut answers = Vec::new();
            let mut value = "draw".to_string();
            let options = dispatch::Options {
                url: nats.nats.clone(),
                token,
                width: jobs.max(1),
                ack_wait,
            };
            for attacker in [mover, mover.opponent()] {
                let goal = Goal { attacker };
                // A run a question: answers to one question's jobs never reach the other.
                let mut tree = PnTree::new(root, goal, leaf, Vec::new());
                tree.second_level = second_level.unwrap_or(config.second_level);
                let run = format!("{run}-{}", attacker.name());
                let tally = master::solve(&options, run, &mut tree, needs.clone(), |line| {
                    eprintln!("{line}")
                })
                .map_err(Failure::other)?;
                let outcome = tree.outcome();
                answers.push(json!({
                    "goal": goal.to_string(),
                    "outcome": outcome.name(),
                    "nodes": tree.stats.nodes,
                    "iterations": tree.stats.iterations,
                    "jobs": tally.jobs,
                    "stale": tally.stale,
                    "garbled": tally.garbled,
                    "abandoned": tally.abandoned,
                    "redelivered": tally.redelivered,
                    "by_worker": tally.by_worker,
                }));
                if outcome == Outcome::Proven {
                    value = attacker.name().to_string();
                    break;
                }
            }
            if out.json {
                out!(
                    "{}",
                    json!({"position": root.to_string(), "value": value, "searches": answers})
                );
            } else {
                out!(
                    "{}: {}",
                    root,
                    if value == "draw" {
                        "draw".to_string()
                    } else {
                        format!("{value} wins")
                    }
                );
                for a in &answers {
                    out!(
                        "  {}: {}, {} nodes, {} jobs ({} answered twice, {} not needed), by worker {}",
                        a["goal"].as_str().unwrap_or(""),
                        a["outcome"].as_str().unwrap_or(""),
                        a["nodes"],
                        a["jobs"],
                        a["stale"],
                        a["abandoned"],
                        a["by_worker"]
                    );
                }
            }
            Ok(())
        }
    }
}
