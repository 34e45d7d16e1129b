//! Results folders and files, written atomically.
//!
//! Result files are written atomically: an error or Ctrl-C never leaves a half-written
//! file, and an earlier good result is not destroyed (Ctrl-C through the command line's
//! SIGINT handler and [`crate::interrupt`]: the commit is refused and the staging folder
//! deleted).
//!
//! - [`write_through_temp`] writes one file to a temporary name next to it and renames it
//!   into place (a rename within one folder is atomic): the one writer of single files,
//!   for bytes ([`write_atomic`]) and for a file that a drawing backend writes itself (a
//!   PNG, a GIF).
//! - [`Staging`] collects a run's files in a hidden staging folder next to the final one
//!   and moves them into place on [`Staging::commit`]: a new folder is renamed into place
//!   whole; into an existing folder each file is renamed over its namesake (atomic per
//!   file), `summary.json` last, and **every other file there is left alone** — a run
//!   never deletes what it did not write (`periodic` after `periodic --continue` keeps the
//!   continuation's files). Dropping an uncommitted `Staging` (an error, a panic) deletes
//!   the staging folder and leaves the earlier results untouched. If the process is killed
//!   outright, a hidden `.<name>.staging-*` folder may remain; killed during a commit into
//!   an existing folder, some files may be new and the rest old, and a summary.json that
//!   is new says every file of its run is in place.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Error;

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A per-process sequence number, so that temporary names are unique across threads.
fn next_seq() -> u64 {
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
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
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

/// Formats a float so that it parses back to exactly the same value: Rust's `{}` and
/// `{:e}` print the shortest digits that round-trip. Plain notation for ordinary
/// magnitudes, scientific for very small or very large ones; `NaN`, `inf`, `-inf`.
pub fn format_f64(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() || (1e-5..1e16).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// A staging folder next to the final one (`<parent>/.<name>.staging-<pid>-<n>`); files
/// are written into it; [`commit`](Staging::commit) moves them into place (the whole
/// folder when there is none yet, else file by file over their namesakes, leaving the
/// folder's other files). Dropping an uncommitted `Staging` deletes the staging folder,
/// so an error leaves the old results untouched and no partial files.
#[derive(Debug)]
pub struct Staging {
    final_dir: PathBuf,
    staging_dir: PathBuf,
    committed: bool,
}

impl Staging {
    /// Creates the staging folder (and the final folder's parents if needed).
    pub fn new(final_dir: &Path) -> Result<Staging, Error> {
        let name = final_dir.file_name().ok_or_else(|| Error::Io {
            path: final_dir.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a results folder needs a name (the path ends in '..' or is a root)",
            ),
        })?;
        create_parent(final_dir)?;
        let tag = format!("{}-{}", std::process::id(), next_seq());
        let staging_dir = sibling(final_dir, name, "staging", &tag);
        // The name is unique to this process and Staging, so anything already there is
        // left over from a dead process that had the same pid: remove it.
        if std::fs::symlink_metadata(&staging_dir).is_ok() {
            remove_any(&staging_dir).map_err(io_err(&staging_dir))?;
        }
        std::fs::create_dir(&staging_dir).map_err(io_err(&staging_dir))?;
        Ok(Staging {
            final_dir: final_dir.to_path_buf(),
            staging_dir,
            committed: false,
        })
    }

    /// The final folder that `commit` will create or replace.
    pub fn final_dir(&self) -> &Path {
        &self.final_dir
    }

    /// The staging folder itself.
    pub fn dir(&self) -> &Path {
        &self.staging_dir
    }

    /// Path of `file_name` inside the staging folder (for writers that need a path, such
    /// as [`crate::plot::write_figure`]). `file_name` may contain subfolders.
    pub fn path(&self, file_name: &str) -> PathBuf {
        self.staging_dir.join(file_name)
    }

    /// Writes `fig` as `<stem>.png` and `<stem>.svg` inside the staging folder (nothing
    /// without the `plots` feature, see [`crate::plot::write_figure`]).
    pub fn write_figure(&self, stem: &str, fig: &crate::plot::Figure) -> Result<(), Error> {
        crate::plot::write_figure(
            fig,
            &self.path(&format!("{stem}.png")),
            Some(&self.path(&format!("{stem}.svg"))),
        )
    }

    /// Writes `bytes` to `file_name` inside the staging folder (subfolders are created).
    pub fn write_bytes(&self, file_name: &str, bytes: &[u8]) -> Result<(), Error> {
        let path = self.path(file_name);
        create_parent(&path)?;
        write_file(&path, bytes)
    }

    /// Writes `value` as pretty-printed JSON (with a final newline).
    pub fn write_json<T: serde::Serialize + ?Sized>(
        &self, file_name: &str, value: &T,
    ) -> Result<(), Error> {
        let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| Error::Io {
            path: self.path(file_name),
            source: std::io::Error::from(e),
        })?;
        bytes.push(b'\n');
        self.write_bytes(file_name, &bytes)
    }

    /// Writes a CSV file with a header line and one line per row of `rows`. Floats are
    /// written with full precision (they parse back to exactly the same value, see
    /// [`format_f64`]). The header length must match the number of columns.
    pub fn write_csv(
        &self, file_name: &str, header: &[String], rows: &ndarray::Array2<f64>,
    ) -> Result<(), Error> {
        let path = self.path(file_name);
        let bytes = csv_bytes(header, rows).map_err(io_err(&path))?;
        self.write_bytes(file_name, &bytes)
    }

    /// Moves the staged files into place and returns the final folder's path.
    ///
    /// Without a final folder, the staging folder is renamed to it (atomic). With one, each
    /// staged file (subfolders included) is renamed over the file of the same name there,
    /// in name order with every `summary.json` last; the folder's other files are kept.
    /// A final path that exists but is not a folder is refused.
    ///
    /// Once an interruption was requested ([`crate::interrupt`]) it returns
    /// [`Error::Interrupted`] instead, and dropping `self` deletes the staging folder.
    pub fn commit(mut self) -> Result<PathBuf, Error> {
        crate::interrupt::check()?;
        match std::fs::symlink_metadata(&self.final_dir) {
            Err(_) => {
                std::fs::rename(&self.staging_dir, &self.final_dir)
                    .map_err(io_err(&self.final_dir))?;
                self.committed = true;
            }
            Ok(meta) if meta.is_dir() => {
                let mut files = Vec::new();
                staged_files(&self.staging_dir, Path::new(""), &mut files)
                    .map_err(io_err(&self.staging_dir))?;
                files.sort_by_key(|f| (f.file_name() == Some("summary.json".as_ref()), f.clone()));
                for f in &files {
                    let to = self.final_dir.join(f);
                    create_parent(&to)?;
                    std::fs::rename(self.staging_dir.join(f), &to).map_err(io_err(&to))?;
                }
                // only the emptied staging folders remain; Drop removes them
            }
            Ok(_) => {
                return Err(Error::Io {
                    path: self.final_dir.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        "exists and is not a folder: give another --out",
                    ),
                })
            }
        }
        Ok(self.final_dir.clone())
    }
}

/// The files under `root/rel`, as paths relative to `root`, appended to `out`.
fn staged_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(root.join(rel))? {
        let entry = entry?;
        let path = rel.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            staged_files(root, &path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.staging_dir);
        }
    }
}

/// `<parent>/.<name>.<kind>-<tag>`
fn sibling(final_dir: &Path, name: &std::ffi::OsStr, kind: &str, tag: &str) -> PathBuf {
    let mut s = std::ffi::OsString::from(".");
    s.push(name);
    s.push(format!(".{kind}-{tag}"));
    final_dir.with_file_name(s)
}

/// Removes a folder tree, a file or a symlink.
fn remove_any(path: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    }
}

fn csv_bytes(header: &[String], rows: &ndarray::Array2<f64>) -> std::io::Result<Vec<u8>> {
    if header.len() != rows.ncols() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "CSV header has {} names but the data has {} columns",
                header.len(),
                rows.ncols()
            ),
        ));
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    if !header.is_empty() {
        w.write_record(header).map_err(std::io::Error::other)?;
    }
    let mut record = Vec::with_capacity(rows.ncols());
    for row in rows.rows() {
        record.clear();
        record.extend(row.iter().map(|&v| format_f64(v)));
        w.write_record(&record).map_err(std::io::Error::other)?;
    }
    w.into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_round_trip() {
        for v in [
            0.0,
            -0.0,
            1.0,
            0.1,
            1.0 / 3.0,
            1e-300,
            5e-324,
            f64::MAX,
            -1.234_567_890_123_456_7e20,
            123456.789,
        ] {
            let s = format_f64(v);
            assert_eq!(s.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{s}");
        }
        assert_eq!(format_f64(1e-300), "1e-300");
        assert_eq!(format_f64(0.5), "0.5");
        assert!(format_f64(f64::NAN).parse::<f64>().unwrap().is_nan());
    }
}
