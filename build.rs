//! Records the commit the program is built from (`FANORONA_COMMIT`), for `--version` and the
//! certificates' producer line; "unknown" outside a git checkout. The checkout is the
//! workspace's, two folders up.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(top: &Path, args: &[&str]) -> Option<Vec<u8>> {
    Command::new("git")
        .arg("-C")
        .arg(top)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| o.stdout)
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let top: PathBuf = Path::new(&manifest).join("../..");
    let commit = git(&top, &["rev-parse", "--short=12", "HEAD"])
        .and_then(|o| String::from_utf8(o).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    // A work tree with changes is said so: the commit alone would not rebuild it.
    let dirty = git(&top, &["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|o| !o.is_empty());
    let suffix = if dirty { "-modified" } else { "" };
    println!("cargo:rustc-env=FANORONA_COMMIT={commit}{suffix}");
    // Rebuilt when HEAD moves (a commit, a checkout) or the index changes.
    let dot_git = top.join(".git");
    for f in ["HEAD", "index"] {
        let path = dot_git.join(f);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    if let Ok(head) = std::fs::read_to_string(dot_git.join("HEAD"))
        && let Some(r) = head.strip_prefix("ref: ")
    {
        println!(
            "cargo:rerun-if-changed={}",
            dot_git.join(r.trim()).display()
        );
    }
    println!("cargo:rerun-if-changed=build.rs");
}
