//! A slice file written whole: to a temporary name, synced, renamed, then its SHA-256
//! (taken as it was written) recorded in the board's manifest.

use std::fs::{self, File};
use std::io::Write;
use std::path::PathBuf;

use crate::file::{FileError, Kind, header, io_err, slice_path};
use crate::manifest::{self, Hasher};
use crate::scheme::Index;
use std::path::Path;

/// Writes a slice file: to `NAME.tmp`, synced, then renamed to its final name; then records
/// its SHA-256 in the board's manifest (`SHA256SUMS`).
pub fn write_slice(
    root: &Path,
    slice: &Index,
    kind: Kind,
    payload: &[u8],
) -> Result<PathBuf, FileError> {
    write_slice_reporting(root, slice, kind, payload, &|_| {})
}

/// `write_slice`, telling `progress` the bytes written (and hashed) as it goes.
pub fn write_slice_reporting(
    root: &Path,
    slice: &Index,
    kind: Kind,
    payload: &[u8],
    progress: &dyn Fn(u64),
) -> Result<PathBuf, FileError> {
    assert_eq!(payload.len() as u64, kind.payload_len(slice.len()));
    let path = slice_path(root, slice.board(), slice.material(), kind);
    let dir = path
        .parent()
        .expect("slice files live in a board directory");
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let tmp = path.with_extension(format!("{}.tmp", kind.extension()));
    let mut sha = Hasher::default();
    let result = (|| {
        let mut f = File::create(&tmp)?;
        let header = header(slice, kind, payload);
        sha.update(&header, &|_| {});
        f.write_all(&header)?;
        // The file is hashed as it is written, a chunk at a time.
        for chunk in payload.chunks(manifest::CHUNK) {
            sha.update(chunk, &|_| {});
            f.write_all(chunk)?;
            progress(chunk.len() as u64);
        }
        f.sync_all()?;
        fs::rename(&tmp, &path)?;
        File::open(dir)?.sync_all()
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(io_err(&path)(e));
    }
    manifest::record(
        dir,
        &manifest::file_name(slice.material(), kind),
        &sha.hex(),
    )?;
    Ok(path)
}
