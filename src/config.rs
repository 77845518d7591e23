//! `config.toml`: the settings every command reads. Every key is optional; flags override.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

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
    threads: Option<usize>,
}

/// The settings, with defaults filled in and paths resolved.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the endgame tables live (one directory per board below it).
    pub db_dir: PathBuf,
    /// Worker threads; all cores by default.
    pub threads: usize,
}

impl Config {
    /// The built-in defaults: tables under `data/egdb`, every core.
    pub fn defaults() -> Config {
        Config {
            db_dir: PathBuf::from("data/egdb"),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }

    /// Reads `path`; relative paths in it are taken from the file's directory.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Config::parse(&text, path)
    }

    /// Parses the text of a config file found at `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            // toml's message names the key and the line; keep it on one line.
            message: e
                .to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut c = Config::defaults();
        if let Some(dir) = raw.db_dir {
            c.db_dir = if dir.is_absolute() {
                dir
            } else {
                base.join(dir)
            };
        }
        if let Some(t) = raw.threads {
            if !(1..=256).contains(&t) {
                return Err(ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: format!("threads = {t}: expected 1 to 256"),
                });
            }
            c.threads = t;
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_and_unknown_keys_named() {
        let c = Config::parse(
            "db_dir = \"tables\"\nthreads = 2\n",
            Path::new("/x/config.toml"),
        )
        .unwrap();
        assert_eq!(c.db_dir, PathBuf::from("/x/tables"));
        assert_eq!(c.threads, 2);
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
    }
}
