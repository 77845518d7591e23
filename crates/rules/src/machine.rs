//! What the machine has: memory, read from Linux's /proc/meminfo, and free disk space; and
//! what this process has used of it.

/// A /proc/meminfo field in bytes ("MemTotal", "MemAvailable"), where it can be read.
pub fn meminfo(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.split(':').next() == Some(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The memory limit of this process's control group and the anonymous memory its members
/// hold now (page cache is left out: it is given back on demand), in bytes: `None` where
/// there is no limit (or it cannot be read). A container's limit is what its processes
/// have, whatever /proc/meminfo says of the whole machine.
pub fn cgroup_memory() -> Option<(u64, u64)> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |path: std::path::PathBuf| std::fs::read_to_string(path).ok();
    let stat = |text: &str, key: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
    };
    // Version 1: a line "N:memory:/path" (the controller may share its line with others).
    let v1 = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then_some(path)
    });
    let (limit, anon) = if let Some(path) = v1 {
        let dir = std::path::Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
        let limit: u64 = read(dir.join("memory.limit_in_bytes"))?
            .trim()
            .parse()
            .ok()?;
        let text = read(dir.join("memory.stat"))?;
        (
            limit,
            stat(&text, "total_rss").or_else(|| stat(&text, "rss"))?,
        )
    } else {
        let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
        let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
        let limit: u64 = read(dir.join("memory.max"))?.trim().parse().ok()?;
        (limit, stat(&read(dir.join("memory.stat"))?, "anon")?)
    };
    // No limit reads as "max" (version 2) or a number near 2^63 (version 1).
    (limit < meminfo("MemTotal")?).then_some((limit, anon))
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
