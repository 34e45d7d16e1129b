//! One file written atomically: the whole file is written at a temporary name next to it
//! and renamed into place (a rename within one folder is atomic), so an error or Ctrl-C
//! never leaves a half-written file and an earlier good file is not destroyed. The one
//! writer of single files — bytes ([`write_atomic`]) and files a drawing backend writes
//! itself (a PNG, a GIF) — for the figures, the animations and every results folder
//! ([`crate::output::Staging`] stages a whole run's files through the same rename).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Error;

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A per-process sequence number, so that temporary names are unique across threads.
pub(crate) fn next_seq() -> u64 {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    SEQ.fetch_add(1, Ordering::Relaxed)
}

/// Creates the parent folder of `path` (and its parents) if needed.
pub(crate) fn create_parent(path: &Path) -> Result<(), Error> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(io_err(dir))
        }
        _ => Ok(()),
    }
}

/// `<dir>/.<name>.tmp-<pid>-<n>.<ext>`: a unique temporary name next to `path` that keeps
/// its extension (a drawing backend picks its encoder from the extension).
fn temp_sibling(path: &Path) -> Result<PathBuf, Error> {
    let name = path.file_name().ok_or_else(|| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"),
    })?;
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".tmp-{}-{}", std::process::id(), next_seq()));
    if let Some(ext) = path.extension() {
        tmp.push(".");
        tmp.push(ext);
    }
    Ok(path.with_file_name(tmp))
}

/// The one atomic writer of a file: parent folders are created, `write` writes the whole
/// file at a temporary path next to `path` (with the same extension), which is then renamed
/// into place (a rename within one folder is atomic). On failure the temporary file is
/// removed and an existing `path` is untouched.
pub fn write_through_temp(
    path: &Path, write: impl FnOnce(&Path) -> Result<(), Error>,
) -> Result<(), Error> {
    let tmp = temp_sibling(path)?;
    create_parent(path)?;
    let result = write(&tmp).and_then(|()| std::fs::rename(&tmp, path).map_err(io_err(path)));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A drawing backend's failure on `path`, as [`Error::Plot`] naming it.
#[cfg(feature = "plots")]
pub(crate) fn plot_err(path: &Path) -> impl FnOnce(Box<dyn std::error::Error>) -> Error + '_ {
    move |e| Error::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Creates (truncating) `path`, writes `bytes` and flushes them to disk.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut f = File::create(path).map_err(io_err(path))?;
    f.write_all(bytes).map_err(io_err(path))?;
    f.sync_all().map_err(io_err(path))?;
    Ok(())
}

/// Atomically writes one file's `bytes` ([`write_through_temp`]). Parent folders are
/// created. On failure the temporary file is removed and an existing `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_through_temp(path, |tmp| write_file(tmp, bytes))
}
