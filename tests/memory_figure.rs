//! The memory a session reports (`session status`, progress logs) is the process's own: a
//! memory-mapped file it reads (the endgame tables) is the page cache's and not counted,
//! while memory it allocates is. Alone in its binary, so no other test allocates meanwhile.

use std::io::Write;

use fanorona::session::log::resident_bytes;

const SIZE: usize = 64 << 20;

#[test]
fn mapped_files_are_left_out_and_allocations_counted() {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(&vec![7u8; SIZE]).unwrap();
    let before = resident_bytes();
    let map = unsafe { memmap2::Mmap::map(&file).unwrap() };
    // Touch every page so that all of it is resident.
    let sum: u64 = map.iter().step_by(4096).map(|&b| b as u64).sum();
    assert_eq!(sum, 7 * (SIZE / 4096) as u64);
    let mapped = resident_bytes();
    assert!(
        mapped < before + (8 << 20),
        "a 64 MiB mapped file counted: {before} -> {mapped}"
    );
    let owned = vec![1u8; SIZE];
    let allocated = resident_bytes();
    assert!(
        allocated >= mapped + (48 << 20),
        "a 64 MiB allocation not counted: {mapped} -> {allocated}"
    );
    drop((map, owned));
}
