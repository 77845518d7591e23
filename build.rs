//! Records the commit the binary is built from (`FANORONA_COMMIT`), for `--version` and the
//! certificates' producer line; "unknown" outside a git checkout.

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    // A work tree with changes is said so: the commit alone would not rebuild it.
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .is_some_and(|o| o.status.success() && !o.stdout.is_empty());
    let suffix = if dirty { "-modified" } else { "" };
    println!("cargo:rustc-env=FANORONA_COMMIT={commit}{suffix}");
    // Rebuilt when HEAD moves (a commit, a checkout) or the index changes.
    for f in [".git/HEAD", ".git/index"] {
        if std::path::Path::new(f).exists() {
            println!("cargo:rerun-if-changed={f}");
        }
    }
    if let Ok(head) = std::fs::read_to_string(".git/HEAD")
        && let Some(r) = head.strip_prefix("ref: ")
    {
        println!("cargo:rerun-if-changed=.git/{}", r.trim());
    }
    println!("cargo:rerun-if-changed=build.rs");
}
