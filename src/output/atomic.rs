//! Results folders, written atomically.
//!
//! Result files are written atomically: an error or Ctrl-C never leaves a half-written
//! file, and an earlier good result is not destroyed (Ctrl-C through the command line's
//! SIGINT handler and [`crate::interrupt`]: the commit is refused and the staging folder
//! deleted). One file is written by [`crate::atomic_file`] (a temporary name next to it,
//! then a rename); a whole run's folder by [`Staging`]:
//!
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

use std::path::{Path, PathBuf};

use crate::atomic_file::{create_parent, io_err, next_seq, write_file};
use crate::error::Error;
use crate::format::format_f64;

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
