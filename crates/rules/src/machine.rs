//! What the machine has: memory, read from Linux's /proc/meminfo, and free disk space; and
//! what this process has used of it.

/// A /proc/meminfo field in bytes ("MemTotal", "MemAvailable"), where it can be read.
pub fn meminfo(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.split(':').next() == Some(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The memory limit of this process's control group (the lowest on its way up) and the
/// memory its members hold that cannot be given back (anonymous and shared memory; page
/// cache is left out), in bytes: `None` where there is no limit below the machine's memory,
/// or it cannot be read. A container's limit is what its processes have, whatever
/// /proc/meminfo says of the whole machine.
pub fn cgroup_memory() -> Option<(u64, u64)> {
    use std::path::Path;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |dir: &Path, name: &str| std::fs::read_to_string(dir.join(name)).ok();
    // Inside a container the mount is often the group itself, its path from the host's view
    // absent under it.
    let resolve = |mount: &str, path: &str| {
        let joined = Path::new(mount).join(path.trim_start_matches('/'));
        if joined.is_dir() {
            joined
        } else {
            Path::new(mount).to_path_buf()
        }
    };
    let (limit, held) = match memory_cgroup(&own)? {
        Cgroup::V1(path) => {
            let dir = resolve("/sys/fs/cgroup/memory", path);
            v1_memory(&read(&dir, "memory.stat")?)?
        }
        Cgroup::V2(path) => {
            let root = Path::new("/sys/fs/cgroup");
            let leaf = resolve("/sys/fs/cgroup", path);
            let limit = leaf
                .ancestors()
                .take_while(|d| d.starts_with(root))
                .flat_map(|d| ["memory.max", "memory.high"].map(|f| read(d, f)))
                .flatten()
                .filter_map(|t| limit_value(&t))
                .min()?;
            (limit, v2_held(&read(&leaf, "memory.stat")?)?)
        }
    };
    (limit < meminfo("MemTotal")?).then_some((limit, held))
}

/// Where this process's memory controller is, from /proc/self/cgroup.
#[derive(Debug, PartialEq)]
enum Cgroup<'a> {
    /// Version 1: a line "N:memory:/path" (the controller may share its line with others).
    V1(&'a str),
    /// Version 2 alone: the line "0::/path".
    V2(&'a str),
}

fn memory_cgroup(own: &str) -> Option<Cgroup<'_>> {
    let v1 = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then_some(path)
    });
    v1.map(Cgroup::V1).or_else(|| {
        own.lines()
            .find_map(|l| l.strip_prefix("0::"))
            .map(Cgroup::V2)
    })
}

/// A value of a memory.stat.
fn stat(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

/// Version 1: the limit the group has with its parents' (hierarchical_memory_limit; no limit
/// reads as a number near 2^63) and what its members hold (total_rss, total_shmem).
fn v1_memory(stat_text: &str) -> Option<(u64, u64)> {
    let limit = stat(stat_text, "hierarchical_memory_limit")?;
    let held = stat(stat_text, "total_rss")? + stat(stat_text, "total_shmem").unwrap_or(0);
    Some((limit, held))
}

/// Version 2: anonymous and shared memory of the group.
fn v2_held(stat_text: &str) -> Option<u64> {
    Some(stat(stat_text, "anon")? + stat(stat_text, "shmem").unwrap_or(0))
}

/// A version 2 limit file's number; `None` for "max".
fn limit_value(text: &str) -> Option<u64> {
    text.trim().parse().ok()
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
    use super::*;

    #[test]
    fn a_control_group_s_memory_is_read_from_either_version() {
        // A hybrid host: the version 1 memory line wins over version 2's.
        let hybrid = "9:name=systemd:/\n4:memory:/jobs/a1\n3:cpu,cpuacct:/\n0::/\n";
        assert_eq!(memory_cgroup(hybrid), Some(Cgroup::V1("/jobs/a1")));
        let shared = "5:cpuset,memory:/x\n";
        assert_eq!(memory_cgroup(shared), Some(Cgroup::V1("/x")));
        assert_eq!(
            memory_cgroup("0::/user.slice/run\n"),
            Some(Cgroup::V2("/user.slice/run"))
        );
        assert_eq!(memory_cgroup("4:cpu:/\n"), None);
        // Version 1's stat: the hierarchical limit, anonymous and shared memory; rss_huge is
        // not rss.
        let v1 = "cache 100\nrss 5\nrss_huge 7\nshmem 1\nhierarchical_memory_limit 2097152000\ntotal_cache 900\ntotal_rss 4000\ntotal_rss_huge 0\ntotal_shmem 96\n";
        assert_eq!(v1_memory(v1), Some((2_097_152_000, 4096)));
        assert_eq!(v1_memory("rss 5\n"), None);
        // Version 2's: anon and shmem, not anon_thp; "max" is no limit.
        assert_eq!(
            v2_held("anon 3000\nanon_thp 2048\nfile 99999\nshmem 100\n"),
            Some(3100)
        );
        assert_eq!(limit_value("max\n"), None);
        assert_eq!(limit_value("8589934592\n"), Some(8 << 30));
        // This machine's, whatever it is, is below its memory where it is read at all.
        if let Some((limit, held)) = cgroup_memory() {
            assert!(
                limit < meminfo("MemTotal").unwrap() && held > 0,
                "{limit} {held}"
            );
        }
    }

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
