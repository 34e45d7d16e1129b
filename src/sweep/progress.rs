//! The sweep's progress bar on stderr (indicatif, with the cargo feature `cli`; without it
//! the bar is never drawn).

/// A progress bar over `len` points, drawn only when asked for and the `cli` feature is on.
pub(crate) struct Progress {
    #[cfg(feature = "cli")]
    bar: indicatif::ProgressBar,
}

impl Progress {
    /// A bar over `len` points run on `jobs` threads; hidden unless `show`.
    #[cfg_attr(not(feature = "cli"), allow(unused_variables))]
    pub(crate) fn new(len: usize, jobs: usize, show: bool) -> Progress {
        #[cfg(feature = "cli")]
        {
            let bar = if show {
                let b = indicatif::ProgressBar::new(len as u64);
                b.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{msg} [{bar:30}] {pos}/{len} points ({elapsed}, about {eta} left)",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                b.set_message(format!("sweep on {jobs} threads"));
                b
            } else {
                indicatif::ProgressBar::hidden()
            };
            Progress { bar }
        }
        #[cfg(not(feature = "cli"))]
        Progress {}
    }

    /// One point done.
    pub(crate) fn inc(&self) {
        #[cfg(feature = "cli")]
        self.bar.inc(1);
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish(&self) {
        #[cfg(feature = "cli")]
        self.bar.finish_and_clear();
    }
}
