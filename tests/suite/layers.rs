//! The layering `src/lib.rs` states, checked against the code: no module of the library
//! names one of a later layer (tests inside a module aside: they may build what they check
//! with anything).

use std::path::Path;

/// The layers, in `lib.rs`'s order; a module may use its own layer and those before it.
const LAYERS: &[&[&str]] = &[
    &[
        "geometry",
        "position",
        "movegen",
        "moves",
        "repetition",
        "perft",
        "target",
        "diagram",
        "version",
        "machine",
    ],
    &["egdb"],
    &["search", "config"],
    &["certificate"],
    &["session"],
    &["play"],
    &["cluster"],
    &["daemon"],
    &["web"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_uses_a_later_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel.iter().next().unwrap().to_str().unwrap();
        let top = top.strip_suffix(".rs").unwrap_or(top);
        if matches!(top, "cli" | "main" | "lib") {
            continue;
        }
        let Some(own) = layer(top) else {
            panic!("src/{top} is in no layer: add it to lib.rs's map and to LAYERS here");
        };
        checked += 1;
        let text = std::fs::read_to_string(&file).unwrap();
        // A module's own tests sit at its end.
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if let Some(theirs) = layer(&name)
                && theirs > own
            {
                wrong.push(format!("{} uses crate::{name}", rel.display()));
            }
        }
    }
    assert!(checked > 50, "only {checked} files read");
    assert!(wrong.is_empty(), "arrows back up:\n{}", wrong.join("\n"));
}

#[test]
fn the_library_declares_every_layered_module() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    for module in LAYERS.iter().flat_map(|l| l.iter()) {
        assert!(
            lib.contains(&format!("pub mod {module};")),
            "lib.rs does not declare {module}"
        );
        assert!(
            lib.contains(&format!("`{module}`")),
            "lib.rs's map does not name {module}"
        );
    }
}
