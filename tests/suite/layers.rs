//! The layering `src/lib.rs` states, checked against the crates' manifests: each crate of
//! `crates/` depends (for its code and for its tests) only on crates of earlier layers, and
//! the certificate checker on the rules and the tables alone. Cargo then refuses any `use` of
//! a later layer, so what this test reads is what the compiler enforces.

use std::path::Path;

/// The layers, in `lib.rs`'s order, by folder under `crates/`; a crate may use its own
/// layer's crates that come before it and every crate of an earlier layer.
const LAYERS: &[&[&str]] = &[
    &["rules"],
    &["tables"],
    &["search"],
    &["check", "certificate"],
    &["session"],
    &["play"],
    &["cluster"],
    &["daemon"],
    &["web"],
];

fn order() -> Vec<&'static str> {
    LAYERS.iter().flat_map(|l| l.iter().copied()).collect()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The project's crates that `crate_dir`'s manifest names in `section`.
fn internal_deps(crate_dir: &str, section: &str) -> Vec<String> {
    let path = root().join("crates").join(crate_dir).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    let Some(deps) = manifest.get(section).and_then(|d| d.as_table()) else {
        return Vec::new();
    };
    deps.keys()
        .filter_map(|k| k.strip_prefix("fanorona-"))
        .map(str::to_string)
        .collect()
}

#[test]
fn no_crate_depends_on_a_later_layer() {
    let order = order();
    let mut wrong = Vec::new();
    for (i, own) in order.iter().enumerate() {
        for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
            for dep in internal_deps(own, section) {
                match order.iter().position(|c| *c == dep) {
                    Some(j) if j < i => {}
                    _ => wrong.push(format!("fanorona-{own} [{section}] uses fanorona-{dep}")),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "arrows back up:\n{}", wrong.join("\n"));
    // The layers do use each other: the manifests were read.
    assert_eq!(internal_deps("tables", "dependencies"), ["rules"]);
}

#[test]
fn the_checker_uses_the_rules_and_the_tables_alone() {
    let mut deps = internal_deps("check", "dependencies");
    deps.extend(internal_deps("check", "dev-dependencies"));
    deps.sort();
    assert_eq!(deps, ["rules", "tables"]);
}

#[test]
fn every_crate_is_in_the_map_and_declared() {
    let order = order();
    let mut found: Vec<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    found.sort();
    let mut mapped: Vec<String> = order.iter().map(|c| c.to_string()).collect();
    mapped.sort();
    assert_eq!(found, mapped, "crates/ and the map of this test differ");
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    for c in order {
        assert!(
            lib.contains(&format!("`fanorona-{c}`")),
            "lib.rs's map does not name fanorona-{c}"
        );
        assert!(
            manifest.contains(&format!("\"crates/{c}\"")),
            "the workspace does not list crates/{c}"
        );
    }
}
