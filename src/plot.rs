//! Figures as PNG and SVG.
//!
//! A figure is a stack of panels that share one x range (typically time), each with its
//! own y axis (linear or logarithmic), legend and series, plus vertical markers (for
//! example event times) drawn in every panel.
//!
//! Text is rendered with the DejaVu Sans font embedded in the binary (crate `dejavu`),
//! registered once with plotters' `ab_glyph` font registry, so plots work on a machine
//! without any system fonts.
//!
//! Plotting is robust to degenerate data: empty series are skipped, non-finite points
//! are dropped (lines are broken there), constant data gets a padded range, and on a
//! logarithmic panel non-positive values are dropped; if nothing positive remains the
//! panel falls back to a linear axis.

//!
//! The figure's data types are always built; drawing them (plotters, the embedded font)
//! is the cargo feature `plots` (on by default). Without it [`write_figure`] writes
//! nothing, so a library built with `default-features = false` leaves the CSV and JSON
//! files of a results folder and no figures.

#[cfg(not(feature = "plots"))]
use std::path::Path;

#[cfg(not(feature = "plots"))]
use crate::error::Error;

#[cfg(feature = "plots")]
mod glyph_fix;
#[cfg(feature = "plots")]
mod render;
#[cfg(feature = "plots")]
pub use render::{ensure_fonts, log_tick_labels, log_ticks, write_figure};

/// Without the `plots` feature a figure is not drawn: nothing is written and the call
/// succeeds (the results folder keeps its CSV and JSON files).
#[cfg(not(feature = "plots"))]
pub fn write_figure(_fig: &Figure, _png: &Path, _svg: Option<&Path>) -> Result<(), Error> {
    Ok(())
}

/// Figure width in pixels.
pub const WIDTH: u32 = 1000;
/// Height of one panel in pixels.
pub const PANEL_HEIGHT: u32 = 320;
/// Height of the figure title band in pixels (only when the title is non-empty).
pub const TITLE_HEIGHT: u32 = 44;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineKind {
    /// A solid line through the points.
    #[default]
    Solid,
    /// A dashed line through the points.
    Dashed,
    /// Unconnected dots.
    Points,
}

/// One data series. Points are `(x[i], y[i])`; if the lengths differ the extra values are
/// ignored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub label: String,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub style: LineKind,
}

impl Series {
    /// A series with the given label, data and style.
    pub fn new(label: impl Into<String>, x: Vec<f64>, y: Vec<f64>, style: LineKind) -> Series {
        Series {
            label: label.into(),
            x,
            y,
            style,
        }
    }
}

/// One panel (one y axis) of a figure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Panel {
    pub title: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Logarithmic y axis. Non-positive values are dropped; if nothing remains the panel
    /// is drawn with a linear axis.
    pub log_y: bool,
}

/// A vertical line drawn in every panel, e.g. at an event time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Marker {
    pub x: f64,
    /// Drawn (small, grey) next to the line in the top panel.
    pub label: Option<String>,
}

impl Marker {
    pub fn new(x: f64, label: Option<String>) -> Marker {
        Marker { x, label }
    }
}

/// A figure: panels stacked vertically with a shared x range.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figure {
    pub title: String,
    /// Shown under the bottom panel.
    pub x_label: String,
    pub panels: Vec<Panel>,
    pub markers: Vec<Marker>,
}

/// Pixel size of the rendered figure: `WIDTH` × (`PANEL_HEIGHT` per panel, at least one,
/// plus `TITLE_HEIGHT` if there is a title).
pub fn figure_size(fig: &Figure) -> (u32, u32) {
    let n = fig.panels.len().max(1) as u32;
    let title = if fig.title.trim().is_empty() {
        0
    } else {
        TITLE_HEIGHT
    };
    (WIDTH, PANEL_HEIGHT * n + title)
}
