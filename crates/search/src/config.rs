//! `config.toml`: the settings every command reads. Every key is optional; flags override.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;
use toml::Spanned;

use crate::Init;
use crate::SecondLevel;

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
}

/// The file's keys, as written.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    db_dir: Option<PathBuf>,
    threads: Option<Spanned<usize>>,
    data_dir: Option<PathBuf>,
    checkpoint_interval: Option<Spanned<String>>,
    log_level: Option<Spanned<String>>,
    log_format: Option<Spanned<String>>,
    second_level: Option<Spanned<String>>,
    init: Option<Spanned<String>>,
    weights: Option<PathBuf>,
    store_cache: Option<Spanned<String>>,
    second_level_table: Option<Spanned<String>>,
    memory_bound: Option<Spanned<String>>,
    verify: Option<bool>,
    pairs: Option<bool>,
    certificate_leaf_budget: Option<Spanned<u64>>,
    certificate_close_nodes: Option<Spanned<u64>>,
    backup_every: Option<Spanned<String>>,
    backup_keep: Option<Spanned<usize>>,
    backup_dir: Option<PathBuf>,
    cluster: Option<RawCluster>,
}

/// `[cluster]`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCluster {
    nats: Spanned<String>,
    token_file: Option<PathBuf>,
    jobs: Option<Spanned<usize>>,
    ack_wait: Option<Spanned<String>>,
    retry: Option<Spanned<String>>,
    trace: Option<Spanned<bool>>,
}

/// `[cluster]`: second-level searches as jobs for `fanorona worker`s, through a NATS server.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterConfig {
    /// The server, `nats://HOST:PORT` (or `tls://`).
    pub nats: String,
    /// A file holding the server's token (else `FANORONA_NATS_TOKEN`, else none).
    pub token_file: Option<PathBuf>,
    /// Jobs each question keeps in flight.
    pub jobs: usize,
    /// How long a job may go without word from its worker before another gets it.
    pub ack_wait: Duration,
    /// How long a session searches in the daemon after the server stopped answering,
    /// before it tries the server again.
    pub retry: Duration,
    /// Whether each job answered is written to `DATA/traces/RUN.trace`, for `cluster
    /// simulate` to replay.
    pub trace: bool,
}

impl ClusterConfig {
    /// Jobs in flight a question keeps unless told: enough to keep 16 single-threaded
    /// workers busy.
    pub const JOBS: usize = 16;
}

/// How the readable log on stderr is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// The settings, with defaults filled in and paths resolved.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the endgame tables live (one directory per board below it).
    pub db_dir: PathBuf,
    /// Worker threads; all cores by default.
    pub threads: usize,
    /// The session store, the daemon's lock and socket, and the progress logs.
    pub data_dir: PathBuf,
    pub checkpoint_interval: Duration,
    /// error, warn, info, debug or trace.
    pub log_level: String,
    pub log_format: LogFormat,
    pub second_level: SecondLevel,
    /// How new leaves get their first proof and disproof numbers (mobility, material or learned).
    pub init: Init,
    /// The weights of `init = "learned"` when not the built-in ones (a file `fanorona learn`
    /// made); new sessions keep a copy in their record.
    pub weights: Option<PathBuf>,
    /// The store's page cache, in bytes.
    pub store_cache: u64,
    /// Bytes each second-level df-pn table (one a question being searched) takes at most.
    pub second_level_table: u64,
    /// The daemon's own resident memory (endgame tables' mapped pages not counted) at which a
    /// running session checkpoints and pauses itself, so that growing first-level trees never
    /// push the machine into swap or the OOM killer (0: no bound).
    pub memory_bound: u64,
    /// Re-check every decided proof independently.
    pub verify: bool,
    /// New sessions expand two first-level leaves at a time when one question is left
    /// (PN² with df-pn, two threads).
    pub pairs: bool,
    /// The daemon's certificates: search nodes re-deciding one node may take before it is
    /// left open (and then solved on its own; see `certificate_close_nodes`).
    pub certificate_leaf_budget: u64,
    /// The daemon's certificates: search nodes an open leaf, solved on its own, may take
    /// before the certificate is left partial.
    pub certificate_close_nodes: u64,
    /// Where second-level searches go, if not to this process's threads.
    pub cluster: Option<ClusterConfig>,
    /// Backups the daemon takes of the store by itself: how often (`None`: never), how many
    /// it keeps, and where (`None`: `DATA_DIR/backups`).
    pub backup_every: Option<Duration>,
    pub backup_keep: usize,
    pub backup_dir: Option<PathBuf>,
}

impl Config {
    /// The built-in defaults.
    pub fn defaults() -> Config {
        Config {
            db_dir: PathBuf::from("data/egdb"),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            data_dir: PathBuf::from("data"),
            checkpoint_interval: Duration::from_secs(300),
            log_level: "info".into(),
            log_format: LogFormat::Text,
            second_level: SecondLevel::TreeSize,
            init: Init::Material,
            weights: None,
            store_cache: 256 << 20,
            second_level_table: 512 << 20,
            // Seven eighths of the machine: room for the page cache of the tables and for
            // the commands a user runs beside the daemon.
            memory_bound: fanorona_rules::machine::meminfo("MemTotal").map_or(0, |t| t / 8 * 7),
            verify: true,
            pairs: false,
            // 100 M: the 5x9 start's certificate then left 53 of 2 M nodes open in 48
            // minutes, and the hardest of those took 591 M nodes on its own.
            certificate_leaf_budget: 100_000_000,
            certificate_close_nodes: 4_000_000_000,
            cluster: None,
            // A damaged store costs at most an hour of every session, for two copies of the
            // store's live records on its disk.
            backup_every: Some(Duration::from_secs(3600)),
            backup_keep: 2,
            backup_dir: None,
        }
    }

    /// Reads `path`; relative paths in it are taken from the file's directory. A file over
    /// `MAX_CONFIG_BYTES` is refused with its size, unread (`/dev/zero` grew the process
    /// without end).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        use std::io::Read;
        let read = |source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes))
            .map_err(read)?;
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            return Err(ConfigError::Parse {
                path: path.to_path_buf(),
                message: format!(
                    "over {} KiB: a config file is a few lines (is this the file meant?)",
                    MAX_CONFIG_BYTES >> 10
                ),
            });
        }
        let text = String::from_utf8(bytes).map_err(|_| ConfigError::Parse {
            path: path.to_path_buf(),
            message: "not UTF-8 text".into(),
        })?;
        Config::parse(&text, path)
    }

    /// Parses the text of a config file found at `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: toml_message(text, &e),
        })?;
        let r = Reader { text, path };
        let mut c = Config::defaults();
        if let Some(dir) = raw.db_dir {
            c.db_dir = r.resolve(dir);
        }
        if let Some(dir) = raw.data_dir {
            c.data_dir = r.resolve(dir);
        }
        if let Some(t) = raw.threads {
            let (span, t) = (t.span(), t.into_inner());
            if !(1..=256).contains(&t) {
                return Err(r.bad("threads", span, t.to_string(), "1 to 256"));
            }
            c.threads = t;
        }
        if let Some(s) = raw.checkpoint_interval {
            c.checkpoint_interval = r.duration(
                "checkpoint_interval",
                s,
                Duration::ZERO,
                "a duration such as \"5m\" or \"30s\"",
            )?;
        }
        if let Some(s) = raw.log_level {
            let (span, s) = (s.span(), s.into_inner());
            if !["error", "warn", "info", "debug", "trace"].contains(&s.as_str()) {
                return Err(r.bad(
                    "log_level",
                    span,
                    format!("{s:?}"),
                    "error, warn, info, debug or trace",
                ));
            }
            c.log_level = s;
        }
        if let Some(s) = raw.log_format {
            let (span, s) = (s.span(), s.into_inner());
            c.log_format = match s.as_str() {
                "text" => LogFormat::Text,
                "json" => LogFormat::Json,
                _ => {
                    return Err(r.bad(
                        "log_format",
                        span,
                        format!("{s:?}"),
                        "\"text\" or \"json\"",
                    ));
                }
            };
        }
        if let Some(s) = raw.second_level {
            let (span, s) = (s.span(), s.into_inner());
            c.second_level = s.parse().map_err(|_| {
                r.bad(
                    "second_level",
                    span,
                    format!("{s:?}"),
                    "\"tree-size\", a node count such as \"1000000\", \"tree/D\" or \"max(N,tree/D)\"",
                )
            })?;
        }
        if let Some(s) = raw.init {
            let (span, s) = (s.span(), s.into_inner());
            c.init = s.parse::<Init>().map_err(|_| {
                r.bad(
                    "init",
                    span,
                    format!("{s:?}"),
                    "\"mobility\", \"material\" or \"learned\"",
                )
            })?;
        }
        r.memory(
            raw.store_cache,
            raw.second_level_table,
            raw.memory_bound,
            &mut c,
        )?;
        if let Some(v) = raw.verify {
            c.verify = v;
        }
        if let Some(v) = raw.pairs {
            c.pairs = v;
        }
        for (key, value, field) in [
            (
                "certificate_leaf_budget",
                raw.certificate_leaf_budget,
                &mut c.certificate_leaf_budget,
            ),
            (
                "certificate_close_nodes",
                raw.certificate_close_nodes,
                &mut c.certificate_close_nodes,
            ),
        ] {
            if let Some(v) = value {
                let (span, v) = (v.span(), v.into_inner());
                if v == 0 {
                    return Err(r.bad(key, span, v.to_string(), "a node count of at least 1"));
                }
                *field = v;
            }
        }
        if let Some(s) = raw.backup_every {
            c.backup_every = if s.get_ref() == "off" {
                None
            } else {
                Some(r.duration(
                    "backup_every",
                    s,
                    Duration::from_secs(60),
                    "a duration of at least 1m, such as \"1h\", or \"off\"",
                )?)
            };
        }
        if let Some(k) = raw.backup_keep {
            let (span, k) = (k.span(), k.into_inner());
            if !(1..=100).contains(&k) {
                return Err(r.bad("backup_keep", span, k.to_string(), "1 to 100"));
            }
            c.backup_keep = k;
        }
        if let Some(file) = raw.weights {
            c.weights = Some(r.resolve(file));
        }
        if let Some(dir) = raw.backup_dir {
            c.backup_dir = Some(r.resolve(dir));
        }
        if let Some(raw) = raw.cluster {
            c.cluster = Some(r.cluster(raw)?);
        }
        Ok(c)
    }
}

/// A config file's text being read: refusals name the key, its line and what it takes.
struct Reader<'t> {
    text: &'t str,
    path: &'t Path,
}

impl Reader<'_> {
    /// A bad value: the key, the line and what was expected.
    fn bad(
        &self,
        key: &str,
        span: std::ops::Range<usize>,
        shown: String,
        expected: &str,
    ) -> ConfigError {
        let line = self.text[..span.start.min(self.text.len())]
            .matches('\n')
            .count()
            + 1;
        ConfigError::Parse {
            path: self.path.to_path_buf(),
            message: format!("line {line}: {key} = {shown}: expected {expected}"),
        }
    }

    /// A path as written, relative ones taken from the config file's folder.
    fn resolve(&self, dir: PathBuf) -> PathBuf {
        if dir.is_absolute() {
            dir
        } else {
            self.path.parent().unwrap_or(Path::new(".")).join(dir)
        }
    }

    /// A size of at least `MIN_SIZE` for `key` (`example` shown when it is not one), with
    /// its span and text for a later refusal.
    fn size(
        &self,
        key: &str,
        s: Spanned<String>,
        example: &str,
    ) -> Result<(u64, std::ops::Range<usize>, String), ConfigError> {
        let (span, s) = (s.span(), s.into_inner());
        match parse_bytes(&s).filter(|&b| b >= MIN_SIZE) {
            Some(b) => Ok((b, span, format!("{s:?}"))),
            None => Err(self.bad(
                key,
                span,
                format!("{s:?}"),
                &format!("a size of at least 1MiB, such as {example}"),
            )),
        }
    }

    /// A duration of at least `least` for `key`, or a refusal that says what it takes.
    fn duration(
        &self,
        key: &str,
        s: Spanned<String>,
        least: Duration,
        expected: &str,
    ) -> Result<Duration, ConfigError> {
        let (span, s) = (s.span(), s.into_inner());
        humantime::parse_duration(&s)
            .ok()
            .filter(|d| !d.is_zero() && *d >= least)
            .ok_or_else(|| self.bad(key, span, format!("{s:?}"), expected))
    }

    /// `store_cache`, `second_level_table` and `memory_bound`, each checked against the
    /// machine's memory where a wrong one would swap days into a run.
    fn memory(
        &self,
        store_cache: Option<Spanned<String>>,
        second_level_table: Option<Spanned<String>>,
        memory_bound: Option<Spanned<String>>,
        c: &mut Config,
    ) -> Result<(), ConfigError> {
        if let Some(s) = store_cache {
            c.store_cache = self.size("store_cache", s, "\"256MiB\" or \"1GiB\"")?.0;
        }
        if let Some(s) = second_level_table {
            let (bytes, span, shown) =
                self.size("second_level_table", s, "\"512MiB\" or \"4GiB\"")?;
            // Two questions search at once, each with its table: both must fit beside the
            // rest, or the machine swaps (or kills the daemon) days into a run.
            if let Some(total) = fanorona_rules::machine::meminfo("MemTotal")
                && bytes.saturating_mul(2) > total / 4 * 3
            {
                return Err(self.bad(
                    "second_level_table",
                    span,
                    shown,
                    &format!(
                        "at most {} MiB on this machine (two tables, one a question, in \
                         three quarters of its {} MiB)",
                        (total / 8 * 3) >> 20,
                        total >> 20
                    ),
                ));
            }
            c.second_level_table = bytes;
        }
        if let Some(s) = memory_bound {
            let (bytes, span, shown) = self.size("memory_bound", s, "\"20GiB\"")?;
            if let Some(total) = fanorona_rules::machine::meminfo("MemTotal")
                && bytes > total
            {
                return Err(self.bad(
                    "memory_bound",
                    span,
                    shown,
                    &format!("at most the machine's {} MiB", total >> 20),
                ));
            }
            c.memory_bound = bytes;
        }
        Ok(())
    }

    /// `[cluster]`.
    fn cluster(&self, raw: RawCluster) -> Result<ClusterConfig, ConfigError> {
        let (span, nats) = (raw.nats.span(), raw.nats.into_inner());
        if !["nats://", "tls://"].iter().any(|p| nats.starts_with(p)) {
            return Err(self.bad(
                "nats",
                span,
                format!("{nats:?}"),
                "an address such as \"nats://10.0.0.5:4222\"",
            ));
        }
        let mut cluster = ClusterConfig {
            nats,
            token_file: raw.token_file.map(|f| self.resolve(f)),
            jobs: ClusterConfig::JOBS,
            ack_wait: Duration::from_secs(30),
            retry: Duration::from_secs(30),
            trace: raw.trace.map(Spanned::into_inner).unwrap_or(false),
        };
        if let Some(j) = raw.jobs {
            let (span, j) = (j.span(), j.into_inner());
            if !(1..=65536).contains(&j) {
                return Err(self.bad("jobs", span, j.to_string(), "1 to 65536"));
            }
            cluster.jobs = j;
        }
        if let Some(w) = raw.ack_wait {
            cluster.ack_wait = self.duration(
                "ack_wait",
                w,
                Duration::from_secs(3),
                "a duration of at least 3s, such as \"30s\"",
            )?;
        }
        if let Some(r) = raw.retry {
            cluster.retry = self.duration(
                "retry",
                r,
                Duration::from_secs(1),
                "a duration of at least 1s, such as \"30s\"",
            )?;
        }
        Ok(cluster)
    }
}

/// The largest config file read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// "256MiB", "1GiB", "64KiB" or a plain byte count, at least 1 MiB.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// The smallest store cache or memory limit taken: less would not hold a search's working
/// set (or sled's own structures).
pub const MIN_SIZE: u64 = 1 << 20;

/// What each key takes, for messages.
fn expected(key: &str) -> Option<&'static str> {
    Some(match key {
        "db_dir" | "data_dir" => "a directory path in quotes",
        "weights" => "a weights file's path in quotes",
        "threads" => "a whole number from 1 to 256",
        "checkpoint_interval" => "a duration in quotes, such as \"5m\" or \"30s\"",
        "log_level" => "\"error\", \"warn\", \"info\", \"debug\" or \"trace\"",
        "log_format" => "\"text\" or \"json\"",
        "second_level" => {
            "\"tree-size\", a node count in quotes such as \"1000000\", \"tree/D\" or \"max(N,tree/D)\""
        }
        "init" => "\"mobility\", \"material\" or \"learned\"",
        "store_cache" | "second_level_table" => {
            "a size of at least 1MiB in quotes, such as \"256MiB\""
        }
        "verify" | "pairs" | "trace" => "true or false",
        "certificate_leaf_budget" | "certificate_close_nodes" => "a node count, such as 100000000",
        "nats" => "an address in quotes, such as \"nats://10.0.0.5:4222\"",
        "token_file" => "a file path in quotes",
        "jobs" => "a whole number from 1 to 65536",
        "ack_wait" | "retry" => "a duration in quotes, such as \"30s\"",
        _ => return None,
    })
}

/// A TOML error on one line: its line, and for a value of the wrong type, the key and what
/// it takes (instead of the parser's type names).
fn toml_message(text: &str, e: &toml::de::Error) -> String {
    let Some(span) = e.span() else {
        return e.message().split_whitespace().collect::<Vec<_>>().join(" ");
    };
    let start = span.start.min(text.len());
    let line_no = text[..start].matches('\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("").trim();
    let key = line.split('=').next().unwrap_or("").trim();
    match expected(key) {
        Some(want) if line.contains('=') && e.message().contains("invalid type") => {
            format!("line {line_no}: {line}: expected {want}")
        }
        _ => format!(
            "line {line_no}: {}",
            e.message().split_whitespace().collect::<Vec<_>>().join(" ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_table_is_read_and_its_bad_values_named() {
        let c = Config::parse(
            "threads = 2\n[cluster]\nnats = \"nats://10.0.0.5:4222\"\ntoken_file = \"nats.token\"\njobs = 64\nack_wait = \"1m\"\nretry = \"5s\"\ntrace = true\n",
            Path::new("/x/config.toml"),
        )
        .unwrap();
        assert_eq!(
            c.cluster,
            Some(ClusterConfig {
                nats: "nats://10.0.0.5:4222".into(),
                token_file: Some(PathBuf::from("/x/nats.token")),
                jobs: 64,
                ack_wait: Duration::from_secs(60),
                retry: Duration::from_secs(5),
                trace: true,
            })
        );
        let c =
            Config::parse("[cluster]\nnats = \"nats://h:4222\"\n", Path::new("c.toml")).unwrap();
        let cluster = c.cluster.unwrap();
        assert_eq!(
            (cluster.jobs, cluster.token_file, cluster.trace),
            (ClusterConfig::JOBS, None, false)
        );
        assert_eq!(Config::defaults().cluster, None);
        for (text, names) in [
            (
                "[cluster]\nnats = \"h:4222\"\n",
                "line 2: nats = \"h:4222\"",
            ),
            (
                "[cluster]\nnats = \"nats://h\"\njobs = 0\n",
                "line 3: jobs = 0: expected 1 to 65536",
            ),
            (
                "[cluster]\nnats = \"nats://h\"\nack_wait = \"1s\"\n",
                "ack_wait = \"1s\": expected a duration of at least 3s",
            ),
            ("[cluster]\njobs = 3\n", "nats"),
            ("[cluster]\nnats = \"nats://h\"\ntoken = \"x\"\n", "token"),
        ] {
            let e = Config::parse(text, Path::new("c.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(names), "{text}: {e}");
        }
    }

    #[test]
    fn keys_are_read_and_unknown_keys_named() {
        let c = Config::parse(
            "db_dir = \"tables\"\nthreads = 2\ndata_dir = \"d\"\ncheckpoint_interval = \"90s\"\nsecond_level = \"5000\"\ninit = \"mobility\"\nstore_cache = \"64MiB\"\nlog_format = \"json\"\nverify = false\ncertificate_leaf_budget = 5000\ncertificate_close_nodes = 7\n",
            Path::new("/x/config.toml"),
        )
        .unwrap();
        assert_eq!(c.db_dir, PathBuf::from("/x/tables"));
        assert_eq!(c.data_dir, PathBuf::from("/x/d"));
        assert_eq!(c.threads, 2);
        assert_eq!(c.checkpoint_interval, Duration::from_secs(90));
        assert_eq!(c.second_level, SecondLevel::Fixed(5000));
        assert_eq!(c.init, Init::Mobility);
        assert_eq!(Config::defaults().init, Init::Material);
        assert_eq!(
            (c.certificate_leaf_budget, c.certificate_close_nodes),
            (5000, 7)
        );
        let e = Config::parse("certificate_close_nodes = 0\n", Path::new("config.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("certificate_close_nodes") && e.contains("at least 1"),
            "{e}"
        );
        let e = Config::parse("init = \"eval\"\n", Path::new("config.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 1") && e.contains("\"mobility\", \"material\" or \"learned\""),
            "{e}"
        );
        assert_eq!(c.store_cache, 64 << 20);
        assert_eq!(c.log_format, LogFormat::Json);
        assert!(!c.verify);
        let e = Config::parse("db_dri = \"x\"\n", Path::new("config.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("db_dri") && e.contains("line 1"), "{e}");
        let e = Config::parse("threads = \"two\"\n", Path::new("config.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("threads") || e.contains("line 1"), "{e}");
        let e = Config::parse("threads = 0\n", Path::new("config.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("threads = 0"), "{e}");
        let e = Config::parse(
            "verify = true\n\ncheckpoint_interval = \"often\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("line 3") && e.contains("checkpoint_interval"),
            "{e}"
        );
        let e = Config::parse("second_level = \"big\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1") && e.contains("second_level"), "{e}");
    }

    #[test]
    fn backups_are_read_and_the_checked_in_config_gives_the_defaults() {
        let c = Config::parse(
            "backup_every = \"30m\"\nbackup_keep = 5\nbackup_dir = \"b\"\n",
            Path::new("/x/config.toml"),
        )
        .unwrap();
        assert_eq!(c.backup_every, Some(Duration::from_secs(1800)));
        assert_eq!(
            (c.backup_keep, c.backup_dir),
            (5, Some(PathBuf::from("/x/b")))
        );
        let off = Config::parse("backup_every = \"off\"\n", Path::new("c.toml")).unwrap();
        assert_eq!(off.backup_every, None);
        for (bad, says) in [
            ("backup_every = \"10s\"", "at least 1m"),
            ("backup_keep = 0", "1 to 100"),
        ] {
            let e = Config::parse(&format!("{bad}\n"), Path::new("c.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("line 1") && e.contains(says), "{e}");
        }
        // The repository's config.toml lists the defaults.
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config.toml");
        let checked_in = Config::load(&path).unwrap();
        let d = Config::defaults();
        assert_eq!(
            (
                checked_in.backup_every,
                checked_in.backup_keep,
                checked_in.backup_dir
            ),
            (d.backup_every, d.backup_keep, d.backup_dir)
        );
    }

    #[test]
    fn a_config_file_past_its_cap_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; MAX_CONFIG_BYTES as usize + 1]).unwrap();
        let e = Config::load(&big).unwrap_err().to_string();
        assert!(e.contains("over 1024 KiB"), "{e}");
        let e = Config::load(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("over 1024 KiB"), "{e}");
    }

    #[test]
    fn the_memory_bound_is_a_size_the_machine_has() {
        let c = Config::parse("memory_bound = \"2GiB\"\n", Path::new("c.toml")).unwrap();
        assert_eq!(c.memory_bound, 2 << 30);
        for bad in ["\"0\"", "\"lots\""] {
            let e = Config::parse(&format!("memory_bound = {bad}\n"), Path::new("c.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("line 1") && e.contains("at least 1MiB"), "{e}");
        }
        if let Some(total) = fanorona_rules::machine::meminfo("MemTotal") {
            assert_eq!(Config::defaults().memory_bound, total / 8 * 7);
            let gib = total / (1 << 30) + 1;
            let e = Config::parse(
                &format!("memory_bound = \"{gib}GiB\"\n"),
                Path::new("c.toml"),
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains("at most the machine's"), "{e}");
        }
    }

    #[test]
    fn the_second_level_table_is_a_size_the_machine_can_give_twice() {
        let c = Config::parse("second_level_table = \"2GiB\"\n", Path::new("c.toml")).unwrap();
        assert_eq!(c.second_level_table, 2 << 30);
        assert_eq!(Config::defaults().second_level_table, 512 << 20);
        for bad in ["\"0\"", "\"512KiB\"", "\"lots\""] {
            let e = Config::parse(
                &format!("second_level_table = {bad}\n"),
                Path::new("c.toml"),
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains("line 1") && e.contains("at least 1MiB"), "{e}");
        }
        // Two tables larger than the machine: refused, naming what it can take.
        if let Some(total) = fanorona_rules::machine::meminfo("MemTotal") {
            let gib = total / (1 << 30) + 1;
            let e = Config::parse(
                &format!("second_level_table = \"{gib}GiB\"\n"),
                Path::new("c.toml"),
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("at most") && e.contains("MiB on this machine"),
                "{e}"
            );
        }
    }
}
