//! The systemd unit in `contrib/`: hardened (`systemd-analyze security`, where the machine
//! has it, rates its exposure at most 4.0), and not restarting what a restart cannot mend.

use std::path::Path;
use std::process::Command;

const UNIT: &str = "contrib/systemd/fanorona-daemon.service";

fn unit_text() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(UNIT)).unwrap()
}

#[test]
fn the_unit_does_not_restart_a_bad_setting_or_a_damaged_store() {
    let text = unit_text();
    let prevent = text
        .lines()
        .find_map(|l| l.strip_prefix("RestartPreventExitStatus="))
        .expect("RestartPreventExitStatus=");
    let codes: Vec<&str> = prevent.split_whitespace().collect();
    assert!(codes.contains(&"2") && codes.contains(&"3"), "{prevent}");
    assert!(
        text.contains("StartLimitBurst="),
        "a bounded number of restarts"
    );
}

#[test]
fn systemd_analyze_rates_the_unit_at_most_4() {
    let Ok(o) = Command::new("systemd-analyze")
        .args(["security", "--offline=true"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(UNIT))
        .output()
    else {
        eprintln!("no systemd-analyze on this machine: the unit's score is not checked");
        return;
    };
    let out = String::from_utf8_lossy(&o.stdout);
    let score: f64 = out
        .lines()
        .find_map(|l| l.split("fanorona-daemon.service: ").nth(1))
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "no exposure level in: {out}{}",
                String::from_utf8_lossy(&o.stderr)
            )
        });
    assert!(score <= 4.0, "exposure {score}:\n{out}");
}
