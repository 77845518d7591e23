//! The examples of README.md and the guide, run: each `$ fanorona show|moves|perft ...` in
//! a code block is run and must print what the page shows (its stdout and stderr, the
//! timing lines aside). The other commands' examples need tables, a daemon or minutes.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_fanorona");

/// The commands whose examples are checked: fast and the same on every machine.
const CHECKED: [&str; 3] = ["show", "moves", "perft"];

/// `line` split as a shell would split these examples: words, and "double-quoted" words.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// Each example of `text`: the command's words and the lines shown after it (up to the
/// next `$` line or the end of its code block).
fn examples(text: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    let mut in_block = false;
    let mut current: Option<usize> = None;
    for line in text.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            current = None;
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ fanorona ") {
            let w = words(command);
            if w.first().is_some_and(|c| CHECKED.contains(&c.as_str())) && !command.contains('#') {
                out.push((w, Vec::new()));
                current = Some(out.len() - 1);
            } else {
                current = None;
            }
        } else if line.starts_with('$') {
            current = None;
        } else if let Some(i) = current
            && !line.trim().is_empty()
        {
            out[i].1.push(line.trim_end().to_string());
        }
    }
    out
}

/// A line that measures this machine (a time, a speed): not compared.
fn timing(line: &str) -> bool {
    line.contains(" leaves/s") || line.ends_with(" s")
}

/// A line as compared: a JSON object without its measures of this machine (its keys naming
/// seconds), any other line as it is.
fn compared(line: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(serde_json::Value::Object(mut o)) => {
            o.retain(|k, _| !k.contains("second"));
            serde_json::Value::Object(o).to_string()
        }
        _ => line.to_string(),
    }
}

#[test]
fn the_pages_show_what_the_commands_print() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs/guide")).unwrap() {
        pages.push(entry.unwrap().path());
    }
    let mut checked = 0;
    let mut wrong = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for (args, shown) in examples(&text) {
            let o = Command::new(BIN).args(&args).output().unwrap();
            let printed: Vec<String> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .chain(String::from_utf8_lossy(&o.stderr).lines())
                .map(|l| l.trim_end().to_string())
                .filter(|l| !l.is_empty())
                .collect();
            let expected: Vec<String> = shown
                .iter()
                .filter(|l| !timing(l))
                .map(|l| compared(l))
                .collect();
            let got: Vec<String> = printed
                .iter()
                .filter(|l| !timing(l))
                .map(|l| compared(l))
                .collect();
            if expected != got {
                wrong.push(format!(
                    "{}: fanorona {}\n  shown:   {expected:?}\n  printed: {got:?}",
                    page.strip_prefix(root).unwrap().display(),
                    args.join(" ")
                ));
            }
            checked += 1;
        }
    }
    assert!(checked >= 8, "only {checked} examples found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn example_lines_split_as_a_shell_would() {
    assert_eq!(
        words(r#"show "BBB/B.W/WWW w" --json"#),
        ["show", "BBB/B.W/WWW w", "--json"]
    );
    assert_eq!(words("perft  --depth 6"), ["perft", "--depth", "6"]);
}
