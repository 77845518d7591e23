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

/// The files of one crate (`src` below `dir`) and the arrows between them: file A uses file B
/// when its code (its unit tests aside) names `crate::B`, `crate::{B, ..}`, `super::B` or, for
/// a file of a folder, its parent (`super::item`). A module's uses of the files below it
/// (what a `lib.rs` or `mod.rs` is for: declaring, re-exporting, dispatching) are not arrows;
/// a use of an item of a parent is one to that parent.
fn module_graph(src: &Path) -> (Vec<String>, Vec<(String, String)>) {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let name = |path: &Path| {
        let rel = path.strip_prefix(src).unwrap().with_extension("");
        let rel = rel.to_str().unwrap().replace('\\', "/");
        let rel = rel.strip_suffix("/mod").unwrap_or(&rel).to_string();
        if rel == "lib" {
            String::new()
        } else {
            rel.replace('/', "::")
        }
    };
    let names: Vec<String> = files.iter().map(|f| name(f)).collect();
    let mut edges = Vec::new();
    for (file, own) in files.iter().zip(&names) {
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let parent = own
            .rsplit_once("::")
            .map_or(String::new(), |(p, _)| p.to_string());
        let mut used = Vec::new();
        for (prefix, base) in [("crate::", String::new()), ("super::", parent.clone())] {
            for (i, _) in code.match_indices(prefix) {
                // `crate::` inside a longer path (`$crate::`) is not one.
                if i > 0
                    && code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$')
                {
                    continue;
                }
                let rest = &code[i + prefix.len()..];
                let heads: Vec<&str> = match rest.strip_prefix('{') {
                    Some(group) => group[..group.find('}').unwrap_or(0)].split(',').collect(),
                    None => vec![rest],
                };
                for head in heads {
                    let path = leading_path(head.trim());
                    let join = |parts: &[&str]| {
                        let tail = parts.join("::");
                        if base.is_empty() {
                            tail
                        } else {
                            format!("{base}::{tail}")
                        }
                    };
                    // The longest module the path names; else an item of `base` itself.
                    let target = (1..=path.len())
                        .rev()
                        .map(|n| join(&path[..n]))
                        .find(|t| names.contains(t))
                        .unwrap_or_else(|| base.clone());
                    used.push(target);
                }
            }
        }
        used.sort();
        used.dedup();
        for target in used {
            // A module owns the files below it: using them is what it is for.
            let below = own.is_empty() || target.starts_with(&format!("{own}::"));
            if &target != own && !below && names.contains(&target) {
                edges.push((own.clone(), target));
            }
        }
    }
    (names, edges)
}

/// The identifiers of a path at the start of `text`: `a::b::{c, d}` gives `[a, b]`.
fn leading_path(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        out.push(&rest[..end]);
        match rest[end..].strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    out
}

/// The loops of a graph: each set of files that reach one another, sorted.
fn loops(names: &[String], edges: &[(String, String)]) -> Vec<Vec<String>> {
    let reach = |from: &String| {
        let mut seen = vec![from.clone()];
        let mut i = 0;
        while i < seen.len() {
            let here = seen[i].clone();
            for (a, b) in edges {
                if *a == here && !seen.contains(b) {
                    seen.push(b.clone());
                }
            }
            i += 1;
        }
        seen
    };
    let reached: Vec<Vec<String>> = names.iter().map(reach).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (i, a) in names.iter().enumerate() {
        let mut group: Vec<String> = names
            .iter()
            .enumerate()
            .filter(|&(j, b)| j != i && reached[i].contains(b) && reached[j].contains(a))
            .map(|(_, b)| b.clone())
            .collect();
        if group.is_empty() {
            continue;
        }
        group.push(a.clone());
        group.sort();
        if !out.contains(&group) {
            out.push(group);
        }
    }
    out.sort();
    out
}

#[test]
fn no_import_loop_inside_a_crate() {
    let mut dirs = vec![String::from(".")];
    dirs.extend(order().iter().map(|c| format!("crates/{c}")));
    let mut found = Vec::new();
    let mut arrows = 0;
    for dir in &dirs {
        let (names, edges) = module_graph(&root().join(dir).join("src"));
        arrows += edges.len();
        for group in loops(&names, &edges) {
            found.push((dir.trim_start_matches("./").to_string(), group));
        }
    }
    found.sort();
    assert!(
        arrows > 200,
        "only {arrows} arrows read: the reader is broken"
    );
    assert_eq!(
        found,
        Vec::<(String, Vec<String>)>::new(),
        "import loops (crate, files) differ from the known ones"
    );
}

/// The reader of `no_import_loop_inside_a_crate` finds a loop where there
/// is one: three files using each other in a circle, one through `super::`.
#[test]
fn the_loop_reader_sees_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir(src.join("c")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod a;\npub mod b;\npub mod c;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::X;\n").unwrap();
    std::fs::write(src.join("b.rs"), "use crate::{c::Y, Z};\n").unwrap();
    std::fs::write(src.join("c/mod.rs"), "mod d;\n").unwrap();
    std::fs::write(
        src.join("c/d.rs"),
        "use super::super::a;\nuse crate::a::W;\n",
    )
    .unwrap();
    std::fs::write(src.join("c.rs.txt"), "").unwrap();
    let (names, edges) = module_graph(src);
    assert_eq!(
        loops(&names, &edges),
        Vec::<Vec<String>>::new(),
        "{edges:?}"
    );
    std::fs::write(src.join("c/mod.rs"), "mod d;\nuse d::V;\nuse crate::a;\n").unwrap();
    let (names, edges) = module_graph(src);
    assert_eq!(
        loops(&names, &edges),
        vec![vec!["a", "b", "c"]],
        "{edges:?}"
    );
}

/// The drawing of every crate's module graph in `docs/guide/modules.md`, as the loop test
/// reads it: a Mermaid flowchart a crate, an arrow where a file uses another. Checked
/// against the code so that it cannot drift; `FANORONA_WRITE_MODULES=1` writes it anew.
fn module_drawing() -> String {
    let mut dirs = vec![(String::from("."), String::from("fanorona (src/)"))];
    dirs.extend(order().iter().map(|c| {
        (
            format!("crates/{c}"),
            format!("fanorona-{c} (crates/{c}/src)"),
        )
    }));
    let mut out = String::from(
        "# The module graph of each crate\n\n\
         Generated from the code by `tests/suite/layers.rs` (the reader of the import-loop test):\n\
         an arrow from a file to another that it uses (`crate::`, `super::`); a module's use of\n\
         the files below it is not drawn. No graph has a loop; the test fails on one, and on a\n\
         drawing that is not the code's (`FANORONA_WRITE_MODULES=1 cargo test --test suite\n\
         layers::` writes it anew).\n",
    );
    for (dir, title) in &dirs {
        let (names, mut edges) = module_graph(&root().join(dir).join("src"));
        edges.sort();
        let node = |n: &str| {
            if n.is_empty() {
                "root[\"lib.rs / main.rs\"]".to_string()
            } else {
                format!("{}[\"{n}\"]", n.replace("::", "_"))
            }
        };
        out.push_str(&format!(
            "\n## {title}\n\n{} files, {} arrows.\n\n```mermaid\nflowchart LR\n",
            names.len(),
            edges.len()
        ));
        for (a, b) in &edges {
            out.push_str(&format!("  {} --> {}\n", node(a), node(b)));
        }
        out.push_str("```\n");
    }
    out
}

#[test]
fn the_module_drawing_in_the_docs_is_the_code_s() {
    let path = root().join("docs/guide/modules.md");
    let drawing = module_drawing();
    if std::env::var_os("FANORONA_WRITE_MODULES").is_some() {
        std::fs::write(&path, &drawing).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == drawing,
        "docs/guide/modules.md is not the code's module graph: run `FANORONA_WRITE_MODULES=1 cargo test --test suite layers::` and commit it"
    );
}
