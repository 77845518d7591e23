//! Certificates: solve, write, verify on small boards with every solver; every kind of
//! tampering rejected at its line; unreadable files refused as such; `db probe --batch`
//! against single probes; the published certificates against their manifest.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use fanorona::certificate::{Solved, VerifyError, format, verify, write};
use fanorona::egdb::Database;
use fanorona::search::Algorithm;
use fanorona::search::dfpn::DfPn;
use fanorona::search::pn;
use fanorona::search::{Goal, LeafEval, Limits, Outcome};
use fanorona::{Board, Color, Position};

mod rejected;
mod written;

/// Solves `goal` from `root` with `algo` and returns its certificate as text.
pub(super) fn certificate(
    root: &str,
    attacker: Color,
    algo: &str,
    db: Option<&Database>,
) -> (String, bool) {
    let root: Position = root.parse().unwrap();
    let goal = Goal { attacker };
    let leaf = LeafEval::new(db);
    let mut out = Vec::new();
    let proves;
    if algo == "dfpn" {
        let mut search = DfPn::new(goal, leaf, Limits::none(), 1 << 20);
        let result = search.result(&root, |_| {});
        assert_ne!(result.outcome, Outcome::Unknown);
        proves = result.outcome == Outcome::Proven;
        let solved = Solved {
            root,
            goal,
            proves,
            db,
            tree: None,
            dfpn: Some(&mut search),
        };
        let header = write::header(&solved, Default::default());
        write::write(&mut out, &header, solved, None, None, &mut |_| {}).unwrap();
    } else {
        let level = match algo {
            "pn" => Algorithm::Pn,
            "pn2" => Algorithm::Pn2,
            _ => Algorithm::Pn2DfPn,
        };
        let (tree, _) = pn::search(&root, goal, leaf, level, Limits::none(), |_| {});
        assert!(tree.decided());
        proves = tree.outcome() == Outcome::Proven;
        let solved = Solved {
            root,
            goal,
            proves,
            db,
            tree: Some(&tree),
            dfpn: None,
        };
        let header = write::header(&solved, Default::default());
        write::write(&mut out, &header, solved, None, None, &mut |_| {}).unwrap();
    }
    (String::from_utf8(out).unwrap(), proves)
}

pub(super) fn check(
    text: &str,
    db_dir: Option<&Path>,
) -> Result<fanorona::certificate::Report, VerifyError> {
    verify(&mut text.as_bytes(), db_dir, &mut |_| {})
}

/// The 3x5 tables up to 4 pieces, built once per test that needs them.
pub(super) fn tables() -> tempfile::TempDir {
    crate::common::tables::built("3x5".parse().unwrap(), 4)
}

/// A 3x5 position df-pn finds drawn, with repetitions in its disproofs.
pub(super) const DRAWN_3X5: &str = "...../...BW/..W.B w";

/// A partial certificate of `goal` from `root` (PN²'s tree; what its second level did not
/// keep is re-solved within `budget` nodes a node): its text, its open-leaf list, and what
/// the writer counted.
pub(super) fn partial(
    root: &str,
    attacker: Color,
    budget: u64,
) -> (String, String, fanorona::certificate::Written, bool) {
    let root: Position = root.parse().unwrap();
    let goal = Goal { attacker };
    let leaf = LeafEval::new(None);
    let (tree, _) = pn::search(&root, goal, leaf, Algorithm::Pn2, Limits::none(), |_| {});
    let proves = tree.outcome() == Outcome::Proven;
    let solved = Solved {
        root,
        goal,
        proves,
        db: None,
        tree: Some(&tree),
        dfpn: None,
    };
    let mut header = write::header(&solved, Default::default());
    header.partial = true;
    let (mut out, mut list) = (Vec::new(), Vec::new());
    let part = write::Partial {
        leaf_budget: budget,
        list: &mut list,
    };
    let written = write::write(&mut out, &header, solved, Some(part), None, &mut |_| {}).unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(list).unwrap(),
        written,
        proves,
    )
}

/// The node lines of a certificate, and the index of each one's subtree end.
pub(super) fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

pub(super) fn depth(line: &str) -> usize {
    line.split(' ').next().unwrap().parse().unwrap()
}

/// Line `i` (0 = header) replaced by a leaf with `tag`, its subtree removed.
pub(super) fn as_leaf(ls: &[String], i: usize, tag: &str) -> String {
    let d = depth(&ls[i]);
    let mut out: Vec<String> = ls[..i].to_vec();
    let fields: Vec<&str> = ls[i].split(' ').collect();
    out.push(format!("{} {} {tag}", fields[0], fields[1]));
    let end = (i + 1..ls.len())
        .find(|&j| depth(&ls[j]) <= d)
        .unwrap_or(ls.len());
    out.extend_from_slice(&ls[end..]);
    out.join("\n") + "\n"
}

pub(super) fn expect_wrong(text: &str, db: Option<&Path>, line: u64, reason: &str) {
    match check(text, db) {
        Err(VerifyError::Wrong { line: l, reason: r }) => {
            assert_eq!(l, line, "{r}");
            assert!(r.contains(reason), "'{r}' lacks '{reason}'");
        }
        other => panic!("expected a wrong certificate at line {line}, got {other:?}"),
    }
}

/// The first line (0 = header) at which `pred` holds.
pub(super) fn find(ls: &[String], pred: impl Fn(&str) -> bool) -> usize {
    (1..ls.len()).find(|&i| pred(&ls[i])).expect("such a line")
}

pub(super) fn tag(line: &str) -> &str {
    line.split(' ').nth(2).unwrap()
}

/// Whether the node on line `a` is an ancestor of the node on line `b` (lines, 1 = root).
pub(super) fn is_ancestor(ls: &[String], a: usize, b: usize) -> bool {
    let da = depth(&ls[a]);
    a < b && depth(&ls[b]) > da && (a + 1..b).all(|j| depth(&ls[j]) > da)
}

pub(super) fn unreadable(text: &[u8], db: Option<&Path>, reason: &str) {
    match verify(&mut &text[..], db, &mut |_| {}) {
        Err(VerifyError::Unreadable { reason: r, .. }) => {
            assert!(r.contains(reason), "'{r}' lacks '{reason}'")
        }
        other => panic!("expected unreadable ({reason}), got {other:?}"),
    }
}

pub(super) fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fanorona"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

pub(super) fn move_of(line: &str) -> &str {
    line.split(' ').nth(1).unwrap()
}
