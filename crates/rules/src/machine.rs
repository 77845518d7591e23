//! What the machine has: memory, read from Linux's /proc/meminfo, and free disk space; and
//! what this process has used of it.

/// A /proc/meminfo field in bytes ("MemTotal", "MemAvailable"), where it can be read.
pub fn meminfo(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.split(':').next() == Some(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A field of this process's /proc/self/status in bytes ("VmHWM": the peak resident size,
/// "VmRSS": the resident size now), where it can be read.
pub fn own_status(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.split(':').next() == Some(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Seconds of processor time this process has had so far, all its threads together: what a
/// long build costs whatever else shares the machine's cores.
pub fn own_cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Bytes free to an unprivileged writer on the file system holding `path` (None where it
/// cannot be read).
pub fn disk_available(path: &std::path::Path) -> Option<u64> {
    let st = rustix::fs::statvfs(path).ok()?;
    st.f_bavail.checked_mul(st.f_frsize)
}

/// A fixed 64-bit hash (FNV-1a) of `path` as written: a short name for a place on this
/// machine (give it a canonical path, so that two spellings of one place agree).
pub fn path_hash(path: &std::path::Path) -> u64 {
    path.to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
}

/// Hands the allocator's free pages back to the system, so that memory freed in bulk (a
/// closed store's cache) leaves the resident size, which the memory bound watches. glibc
/// keeps freed memory amid live blocks otherwise; elsewhere nothing happens.
pub fn give_back_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        #[allow(unsafe_code)]
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // glibc's own function, with no precondition: it only returns free pages.
        #[allow(unsafe_code)]
        unsafe {
            malloc_trim(0);
        }
    }
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
        // The resident size first: the peak, read after it, can only have grown since, while
        // the other tests in this process allocate (read the other way round, they raced).
        let resident = super::own_status("VmRSS").expect("Linux");
        let peak = super::own_status("VmHWM").expect("Linux");
        assert!(peak >= resident && peak > 1 << 20, "{peak} {resident}");
        let disk = super::disk_available(std::path::Path::new(".")).expect("a file system");
        assert!(disk > 0);
        assert_eq!(
            super::disk_available(std::path::Path::new("/no/such/dir")),
            None
        );
    }
}
