//! What the machine has: memory, read from Linux's /proc/meminfo.

/// A /proc/meminfo field in bytes ("MemTotal", "MemAvailable"), where it can be read.
pub fn meminfo(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.split(':').next() == Some(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    #[test]
    fn total_memory_is_read_and_at_least_what_is_available() {
        if let (Some(total), Some(available)) =
            (super::meminfo("MemTotal"), super::meminfo("MemAvailable"))
        {
            assert!(total >= available && total > 1 << 20, "{total} {available}");
        }
        assert_eq!(super::meminfo("NoSuchField"), None);
    }
}
