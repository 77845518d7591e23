//! The examples at the end of each command's `--help` (and of its man page). Every line is a
//! command that runs as written once the files it names are there (the tests parse them all).

pub const FANORONA: &str = "\
Examples:
  fanorona show 5x9                    # the 5x9 start, drawn, with its legal moves
  fanorona perft 5x5 --depth 3         # the move sequences three moves deep
  fanorona solve 3x5 --no-store        # the value of the 3x5 start, solved in memory
  fanorona play 3x3 --black perfect    # a game in the terminal against perfect play
  fanorona session start 5x5           # a long solve, kept in the store, for the daemon";

pub const SHOW: &str = "\
Examples:
  fanorona show                        # the 5x9 start
  fanorona show 5x5 --json
  fanorona show 'BBB/B.W/WWW w'
  fanorona show --play 'd3-e3A d4-d3A' # the 5x9 start after two moves";

pub const MOVES: &str = "\
Examples:
  fanorona moves 3x3
  fanorona moves '.B.BB/.WBBB/.B.../..W.W/W.WW. b'
  fanorona moves --board 5x9 --play d3-e3A --json";

pub const PERFT: &str = "\
Examples:
  fanorona perft 5x5 --depth 3
  fanorona perft --board 3x3 --depth 3 --divide   # the count below each first move
  fanorona perft --depth 7 --threads 2 --json     # the 5x9 start, on two threads";

pub const SOLVE: &str = "\
Examples:
  fanorona solve                              # the 7x3 start, as a session in the store
  fanorona solve 3x5 --no-store --json        # in memory, one JSON object
  fanorona solve 3x3 --no-store --certificate proof
  fanorona solve 5x5 --db egdb --no-store     # over the tables `db build` wrote to egdb
  fanorona solve 5x9 --nodes 100000 --no-store
  fanorona solve 5x5 --db egdb --goal white --init learned --weights 5x5.fnlw   # weights `learn` made";

pub const PLAY: &str = "\
Examples:
  fanorona play                               # you (White) against alpha-beta on 5x9
  fanorona play 5x5 --black mcts:easy --save game.txt   # its record kept after every move
  fanorona play --load game.txt               # go on with it
  fanorona play 3x3 --white mcts:hard --black perfect   # two players
  fanorona play --black proof --db tables --certificates docs/certificates   # the certificates' side";

pub const MATCH: &str = "\
Examples:
  fanorona match alphabeta:easy random --board 3x3 --games 4 --threads 1
  fanorona match mcts alphabeta --games 200 --csv games.csv
  fanorona match perfect alphabeta:hard --board 5x5 --db egdb --games 10
  fanorona match proof random --db egdb --certificates docs/certificates --games 20";

pub const STATS: &str = "\
Examples:
  fanorona stats --out stats           # Table 1, Figures 4 and 5 on 5x9 (10,000 games)
  fanorona stats --board 3x3 --games 10 --json";

pub const LEARN: &str = "\
Examples:
  fanorona learn --db tables --board 5x9 --out 5x9.fnlw            # 2 to 9 pieces, a few minutes
  fanorona learn --db tables --out 5x9.fnlw --certificates docs/certificates/over-9-pieces
  fanorona learn --db tables --out 5x9.fnlw --playouts 200000 --play-weight 0   # scored on games too
  fanorona learn --db tables --out 5x9.fnlw --rote rote.jsonl   # rote.jsonl: `fanorona rote export`
  fanorona learn --db tables --out 5x9.fnlw --rote-train others.jsonl --rote-weight 4 --rote rote.jsonl
  fanorona learn --db egdb --board 5x5 --pieces 6 --samples 2000 --out 5x5.fnlw --json";

pub const VERIFY: &str = "\
Examples:
  fanorona verify proof.white-wins.cert.gz
  fanorona verify docs/certificates/5x7-start.white-wins.cert.gz --db egdb   # the 5x7 tables
  fanorona verify proof.black-wins.cert.gz --json; echo \"exit $?\"";

pub const STITCH: &str = "\
Examples:
  fanorona session certificate 1 part --goal white --leaf-budget 10
  fanorona stitch part.white-wins.partial.cert.gz --leaves leaves --out whole.white-wins.cert.gz
  fanorona stitch part.white-wins.partial.cert.gz --leaves leaves --out whole.white-wins.cert.gz --solve";

pub const CUT: &str = "\
Examples:
  fanorona cut proof.white-wins.cert.gz --play c1-b2A --out after.white-wins.cert.gz
  fanorona cut docs/certificates/5x9-start.white-wins.cert.gz --play f2-e3A --out f2-e3A.white-wins.cert.gz --db egdb";

pub const DAEMON: &str = "\
Examples:
  fanorona daemon                              # solves the data directory's sessions
  fanorona --data-dir /srv/fanorona daemon --no-log-file";

pub const SERVE: &str = "\
Examples:
  fanorona serve                               # then open the link it prints
  fanorona serve --bind localhost:9000 --db egdb";

pub const SESSION: &str = "\
Examples:
  fanorona session start 5x5 --name five
  fanorona session list
  fanorona session status 1
  fanorona session tail 1 --follow";

pub const SESSION_START: &str = "\
Examples:
  fanorona session start 5x5 --name five
  fanorona session start 'BBB/B.W/WWW w' --algo pn2-dfpn --json
  fanorona session start 5x9 --db egdb --second-level 'max(30000,tree/4)'";

pub const SESSION_LIST: &str = "\
Examples:
  fanorona session list
  fanorona session list --json";

pub const SESSION_STATUS: &str = "\
Examples:
  fanorona session status 1
  fanorona session status 1 --json";

pub const SESSION_PAUSE: &str = "\
Examples:
  fanorona session pause 1
  fanorona session pause 1 --json";

pub const SESSION_RESUME: &str = "\
Examples:
  fanorona session resume 1
  fanorona session resume 1 --json";

pub const SESSION_MOVES: &str = "\
Examples:
  fanorona session moves 1
  fanorona session moves 1 --heaviest
  fanorona session moves 1 --line c3-b4A --pieces --json";

pub const SESSION_TUNE: &str = "\
Examples:
  fanorona session tune 1 --second-level 30000
  fanorona session tune 1 --init mobility
  fanorona session tune 1 --db egdb --json";

pub const SESSION_STOP: &str = "\
Examples:
  fanorona session stop 1
  fanorona session stop 1 --json";

pub const SESSION_DELETE: &str = "\
Examples:
  fanorona session delete 1
  fanorona session delete 1 --json";

pub const SESSION_RENAME: &str = "\
Examples:
  fanorona session rename 1 five
  fanorona session rename 1 'the 5x5 start' --json";

pub const SESSION_TAIL: &str = "\
Examples:
  fanorona session tail 1 -n 2
  fanorona session tail 1 --follow
  fanorona session tail 1 -n all --json";

pub const SESSION_CERTIFICATE: &str = "\
Examples:
  fanorona session certificate 1 five               # five.white-wins.cert.gz, five.black-wins.cert.gz
  fanorona session certificate 1 after --move c3-b4A
  fanorona session certificate 1 part --goal white --leaf-budget 1000";

pub const SESSION_CURVE: &str = "\
Examples:
  fanorona session curve 1 --csv curve.csv --png curve.png
  fanorona session curve 1 --svg curve.svg --x nodes --points 500
  fanorona session curve 2 --png both.png --x nodes --beside curve.csv --beside-label material";

pub const ROTE: &str = "\
Examples:
  fanorona rote stats
  fanorona rote export rote.jsonl";

pub const ROTE_STATS: &str = "\
Examples:
  fanorona rote stats
  fanorona rote stats --json";

pub const ROTE_EXPORT: &str = "\
Examples:
  fanorona rote export rote.jsonl";

pub const STORE: &str = "\
Examples:
  fanorona store compact";

pub const STORE_COMPACT: &str = "\
Examples:
  fanorona store compact
  fanorona --data-dir /srv/fanorona store compact --json";

pub const STORE_BACKUP: &str = "\
Examples:
  fanorona store backup /mnt/other-disk/fanorona-backup-1
  fanorona store backup /mnt/other-disk/fanorona-backup-2 --json";

pub const STORE_RESTORE: &str = "\
Examples:
  fanorona store restore /mnt/other-disk/fanorona-backup-1
  fanorona store restore data/backups/backup-1796570000 --json";

pub const DB: &str = "\
Examples:
  fanorona db build --board 5x5 --pieces 5 --db egdb
  fanorona db stats --board 5x5 --db egdb
  fanorona db probe 'B...B/..W../...../...../..... w' --db egdb
  fanorona db verify --board 5x5 --db egdb";

pub const DB_BUILD: &str = "\
Examples:
  fanorona db build --board 5x5 --pieces 5 --db egdb
  fanorona db build --board 5x9 --pieces 4 --db egdb --distances
  fanorona db build --board 5x9 --pieces 8 --db egdb --index symmetric --threads 2
  fanorona db build --board 5x9 --pair 6-3 --db egdb --index symmetric";

pub const DB_STATS: &str = "\
Examples:
  fanorona db stats --board 5x5 --db egdb
  fanorona db stats --board 5x9 --json";

pub const DB_PROBE: &str = "\
Examples:
  fanorona db probe 'B...B/..W../...../...../..... w' --db egdb
  fanorona db probe 'B...B/..W../...../...../..... w' --db egdb --json
  fanorona db probe --batch --db egdb < positions.txt";

pub const DB_CONVERT: &str = "\
Examples:
  fanorona db convert --board 5x5 --db egdb
  fanorona db convert --board 5x9 --db egdb --pieces 8";

pub const DB_FORWARD_CHECK: &str = "\
Examples:
  fanorona db forward-check --board 5x5 --pieces 5 --db egdb --samples 10
  fanorona db forward-check --board 5x9 --pieces 8 --db egdb --nodes 10000000";

pub const DB_VERIFY: &str = "\
Examples:
  fanorona db verify --board 5x5 --db egdb
  fanorona db verify --board 5x9 --db egdb --pieces 8 --sample 100000
  fanorona db verify --board 5x9 --db egdb --quick   # files against SHA256SUMS";

pub const DB_CHECKSUMS: &str = "\
Examples:
  fanorona db checksums --board 5x9 --db egdb
  cd egdb/5x9 && sha256sum -c SHA256SUMS";

pub const BENCH: &str = "\
Examples:
  fanorona bench                       # the perft signature: 296000662 leaves
  fanorona bench --repeat 5 --threads 2
  fanorona bench solvers --repeat 1
  fanorona bench store --tree-nodes 1000000 --seconds 2";

pub const BENCH_SOLVERS: &str = "\
Examples:
  fanorona bench solvers
  fanorona bench solvers --db egdb --repeat 1   # needs the 5x9 tables";

pub const BENCH_CERTIFICATES: &str = "\
Examples:
  fanorona bench certificates
  fanorona bench certificates --db egdb --repeat 3   # with 5x7 over the 5x7 tables";

pub const BENCH_AGENTS: &str = "\
Examples:
  fanorona bench agents
  fanorona bench agents --db egdb --json   # with perfect play over the 5x9 tables";

pub const BENCH_TABLES: &str = "\
Examples:
  fanorona bench tables --repeat 1
  fanorona bench tables --db egdb          # with probes of the 5x9 tables";

pub const BENCH_STORE: &str = "\
Examples:
  fanorona bench store
  fanorona bench store --tree-nodes 20000 --seconds 0.2 --repeat 1 --json
  fanorona bench store --from copy-of-data     # a copy: its trees are rewritten";

pub const COMPLETIONS: &str = "\
Examples:
  fanorona completions bash > ~/.local/share/bash-completion/completions/fanorona
  fanorona completions zsh > ~/.zfunc/_fanorona
  fanorona completions fish > ~/.config/fish/completions/fanorona.fish";

pub const MAN: &str = "\
Examples:
  fanorona man pages                   # pages/fanorona.1, pages/fanorona-solve.1, ...
  man -l pages/fanorona-session-start.1
  fanorona man ~/.local/share/man/man1 # then: man fanorona-session-start";

pub const WORKER: &str = "\
Examples:
  FANORONA_NATS_TOKEN=... fanorona worker --nats nats://10.0.0.5:4222 --db egdb --threads 2
  fanorona worker --nats nats://127.0.0.1:4222 --token-file nats.token";

pub const CLUSTER: &str = "\
Examples:
  fanorona cluster solve 3x9 --nats nats://127.0.0.1:4222 --jobs 8";

pub const CLUSTER_SOLVE: &str = "\
Examples:
  fanorona cluster solve 3x9 --nats nats://127.0.0.1:4222 --jobs 8
  fanorona cluster solve 5x5 --nats nats://10.0.0.5:4222 --db egdb --jobs 64 --json
  fanorona cluster solve 7x5 --goal black --nats nats://127.0.0.1:4222 --second-level 30000
  fanorona cluster solve 7x5 --goal black --nats nats://127.0.0.1:4222 --trace 7x5.trace   # to replay";

pub const CLUSTER_STATUS: &str = "\
Examples:
  fanorona cluster status                          # the server of the config's [cluster]
  fanorona cluster status --nats nats://10.0.0.5:4222 --token-file nats.token --json";

pub const CLUSTER_BENCH: &str = "\
Examples:
  scripts/bench-pipeline.sh 10 1,8,64,256          # starts a server and runs this against it
  fanorona cluster bench --nats nats://127.0.0.1:4222 --token-file nats.token --connections 1,64
  fanorona cluster bench --nats nats://127.0.0.1:4222 --window 1 --batch 1 --json   # a round trip a job
  fanorona cluster bench --nats nats://127.0.0.1:4222 --connections 16,64 --threads 8   # workers of 8 threads
  fanorona cluster bench --nats nats://127.0.0.1:4222 --connections 16,64 --threads 8 --fetch 1   # a request a thread";

pub const CLUSTER_BENCH_ECHO: &str = "\
Examples:
  fanorona cluster bench-echo --nats nats://127.0.0.1:4222 --connections 64   # as cluster bench starts it";

pub const CLUSTER_SIMULATE: &str = "\
Examples:
  fanorona cluster simulate 5x5 --goal white --trace 5x5.trace --workers 1,4,16
  fanorona cluster simulate 5x9 --db tables --trace 5x9.trace --png speedup.png   # 1 to 1024
  fanorona cluster simulate 5x5 --trace 5x5.trace --latency 5ms --json   # a slower network
  fanorona cluster simulate 5x5 --trace 5x5.trace --server-us 0   # the server left out
  fanorona cluster simulate 5x9 --play d2-e3A --goal black --db tables --trace d2.trace --repeat 7   # medians";

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use crate::cli::Cli;

    /// A command line's words, as a shell splits them: quotes kept together, and nothing
    /// from a redirection, a pipe, a `;` or a comment on.
    fn words(line: &str) -> Vec<String> {
        let (mut words, mut word, mut quote, mut started) = (vec![], String::new(), None, false);
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.push(c),
                (None, '\'' | '"') => (quote, started) = (Some(c), true),
                (None, '#' | '<' | '>' | '|' | ';') => break,
                (None, c) if c.is_whitespace() => {
                    if started {
                        words.push(std::mem::take(&mut word));
                    }
                    started = false;
                }
                (None, c) => {
                    word.push(c);
                    started = true;
                }
            }
        }
        if started {
            words.push(word);
        }
        words
    }

    /// Every command and subcommand, by its words ("session start").
    fn commands(c: &clap::Command, path: Vec<String>, all: &mut Vec<(Vec<String>, clap::Command)>) {
        for sub in c.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            commands(sub, p.clone(), all);
            all.push((p, sub.clone()));
        }
    }

    #[test]
    fn every_command_has_examples_and_every_example_parses() {
        let root = Cli::command();
        let mut all = vec![(vec![], root.clone())];
        commands(&root, vec![], &mut all);
        assert!(all.len() > 40, "{}", all.len());
        for (path, command) in all {
            let examples = command
                .get_after_long_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            let mut lines = examples.lines();
            assert_eq!(lines.next(), Some("Examples:"), "{path:?}: {examples}");
            let lines: Vec<&str> = lines.collect();
            assert!(!lines.is_empty(), "{path:?}");
            // Each of them runs its own command, and the command's words are all there.
            let mut own = 0;
            for line in lines {
                let words = words(line);
                assert!(
                    line.starts_with("  ") && !words.is_empty(),
                    "{path:?}: {line}"
                );
                if words[0] != "fanorona" {
                    continue;
                }
                let given: Vec<&String> = words.iter().filter(|w| !w.starts_with('-')).collect();
                if path.iter().all(|p| given.contains(&p)) {
                    own += 1;
                }
                if let Err(e) = Cli::try_parse_from(&words) {
                    panic!("{path:?}: '{line}' does not parse: {e}");
                }
            }
            assert!(own > 0, "{path:?}: no example runs it");
        }
    }

    #[test]
    fn words_are_split_as_a_shell_would() {
        assert_eq!(
            words("  fanorona show 'BBB/B.W/WWW w' --play \"d3-e3A\"  # the start"),
            ["fanorona", "show", "BBB/B.W/WWW w", "--play", "d3-e3A"]
        );
        assert_eq!(words("fanorona a < b"), ["fanorona", "a"]);
        assert_eq!(words("x ''"), ["x", ""]);
    }
}
