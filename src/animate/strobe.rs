//! The stroboscopic picture: the mechanism at evenly spaced instants and at every event
//! on one sheet, fading with time (earlier = paler), over the masses' paths. Several
//! motions (initial, optimized) are drawn side by side at one scale.

use super::canvas::{self, draw_scale_bar, draw_shapes, Ink, EVENT, TEXT};
use super::geometry::Shape;
use super::layout::{draw_path, open_panel, Layout};
use super::motion::{Motion, Paths};
use crate::error::Error;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use std::collections::BTreeMap;
use std::path::Path;

/// Settings of a strobe picture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrobeOptions {
    /// About this many evenly spaced instants (the spacing is rounded to 1, 2, 2.5 or 5
    /// × 10ᵏ s; the start and the end are always drawn).
    pub instants: usize,
    /// Width of one panel (px).
    pub width: u32,
}

impl Default for StrobeOptions {
    fn default() -> Self {
        StrobeOptions {
            instants: 13,
            width: 640,
        }
    }
}

/// The opacity of an instant: `0.15 + 0.85 (t − t0)/(t1 − t0)` (earlier is paler).
pub fn fade(t: f64, (t0, t1): (f64, f64)) -> f64 {
    let s = if t1 > t0 { (t - t0) / (t1 - t0) } else { 1.0 };
    0.15 + 0.85 * s.clamp(0.0, 1.0)
}

/// One drawn instant.
struct Snap {
    t: f64,
    shapes: Vec<Shape>,
    event: bool,
}

/// What one panel draws.
struct PanelData {
    snaps: Vec<Snap>,
    paths: Paths,
    /// Time runs to the right (see [`spread`]).
    spread: bool,
}

/// A motion that stays on one vertical line (the ball) is spread out in time: each instant
/// and the paths move right by `v (t − t0)`, with `v` chosen so the picture is 1.5 times
/// as wide as it is high. Returns whether it did.
fn spread(snaps: &mut [Snap], paths: &mut Paths, (t0, t1): (f64, f64)) -> bool {
    let pts = snaps
        .iter()
        .flat_map(|s| s.shapes.iter().flat_map(Shape::points));
    let Some(b) = super::canvas::Bounds::around(pts) else {
        return false;
    };
    if !(b.width() <= 0.02 * b.height() && b.height() > 0.0 && t1 > t0) {
        return false;
    }
    let v = 1.5 * b.height() / (t1 - t0);
    for s in snaps.iter_mut() {
        s.shapes = s.shapes.iter().map(|x| x.shifted(v * (s.t - t0))).collect();
    }
    for path in paths.points.iter_mut() {
        for (p, t) in path.iter_mut().zip(&paths.t) {
            p[0] += v * (t - t0);
        }
    }
    true
}

/// The instants of one motion (evenly spaced and every event), in time order, and the
/// masses' paths.
fn panel_data(m: &Motion<'_>, instants: usize) -> Result<PanelData, Error> {
    let span = m.t_range();
    let mut out = Vec::new();
    for t in instants_of(span, instants) {
        out.push(Snap {
            t,
            shapes: m.shapes_at(t)?,
            event: false,
        });
    }
    for (k, e) in m.events().iter().enumerate() {
        out.push(Snap {
            t: e.t,
            shapes: m.shapes_at_event(k)?,
            event: true,
        });
    }
    out.sort_by(|a, b| a.t.total_cmp(&b.t));
    let mut paths = m.mass_paths(3)?;
    let spread = spread(&mut out, &mut paths, span);
    Ok(PanelData {
        snaps: out,
        paths,
        spread,
    })
}

/// A round spacing (1, 2, 2.5 or 5 × 10ᵏ) at least `span / (n − 1)`.
pub fn nice_step(span: f64, n: usize) -> f64 {
    let raw = span / (n.max(2) - 1) as f64;
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let e = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * e)
        .find(|&s| s >= raw * (1.0 - 1e-12))
        .unwrap_or(10.0 * e)
}

/// The strobe's instants: `t0 + k·dt` up to `t1` with `dt` = [`nice_step`], and `t1`.
pub fn instants_of((t0, t1): (f64, f64), n: usize) -> Vec<f64> {
    let dt = nice_step(t1 - t0, n);
    let mut out: Vec<f64> = (0..)
        .map(|k| t0 + dt * k as f64)
        .take_while(|&t| t < t1 - 1e-9 * dt)
        .collect();
    out.push(t1);
    out
}

/// "ground ×9, lift1 ×2": the guards that fired and how often.
pub fn event_summary(m: &Motion<'_>) -> String {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for e in m.events() {
        *count.entry(e.guard.as_str()).or_default() += 1;
    }
    count
        .iter()
        .map(|(g, n)| format!("{g} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes the strobe picture of `panels` (subtitle, motion) as PNG, and SVG where `svg`
/// is given, each file atomically (temporary name, then rename).
pub fn write_strobe(
    title: &str, panels: &[(&str, &Motion<'_>)], opts: &StrobeOptions, png: &Path,
    svg: Option<&Path>,
) -> Result<(), Error> {
    let plot_err = |path: &Path, e: Box<dyn std::error::Error>| Error::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    crate::plot::ensure_fonts()?;
    let data = panels
        .iter()
        .map(|(_, m)| panel_data(m, opts.instants))
        .collect::<Result<Vec<_>, _>>()?;
    let motions: Vec<&Motion<'_>> = panels.iter().map(|(_, m)| *m).collect();
    let shapes: Vec<&[Shape]> = data
        .iter()
        .flat_map(|d| d.snaps.iter().map(|s| s.shapes.as_slice()))
        .collect();
    let path_points: Vec<[f64; 2]> = data
        .iter()
        .flat_map(|d| d.paths.points.iter().flatten().copied())
        .collect();
    let layout = Layout::new(&motions, &shapes, &path_points, opts.width)?;
    let size = layout.size();
    let sheet = Sheet {
        title,
        panels,
        data: &data,
        layout: &layout,
        instants: opts.instants,
    };
    crate::atomic_file::write_through_temp(png, |tmp| {
        (|| -> canvas::DrawResult {
            let root = BitMapBackend::new(tmp, size).into_drawing_area();
            sheet.draw(&root)?;
            root.present()?;
            Ok(())
        })()
        .map_err(|e| plot_err(png, e))
    })?;
    if let Some(svg) = svg {
        let mut text = String::new();
        (|| -> canvas::DrawResult {
            let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
            sheet.draw(&root)?;
            root.present()?;
            Ok(())
        })()
        .map_err(|e| plot_err(svg, e))?;
        crate::atomic_file::write_atomic(svg, text.as_bytes())?;
    }
    Ok(())
}

/// Everything a strobe sheet draws.
struct Sheet<'s, 'm> {
    title: &'s str,
    panels: &'s [(&'s str, &'s Motion<'m>)],
    data: &'s [PanelData],
    layout: &'s Layout,
    instants: usize,
}

impl Sheet<'_, '_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> canvas::DrawResult
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let mid = (self.layout.size().0 / 2) as i32;
        let style = (HPos::Center, VPos::Top);
        canvas::label(root, self.title, (mid, 8), 20.0, TEXT.mix(1.0), style)?;
        for (i, ((sub, m), d)) in self.panels.iter().zip(self.data).enumerate() {
            draw_panel(root, self.layout, i, sub, m, d, self.instants)?;
        }
        Ok(())
    }
}

/// One panel: subtitle, scene, paths, the instants (faded, events in red), scale bar and
/// caption.
#[allow(clippy::too_many_arguments)]
fn draw_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>, layout: &Layout, i: usize, subtitle: &str, m: &Motion<'_>,
    data: &PanelData, instants: usize,
) -> canvas::DrawResult
where
    DB::ErrorType: 'static,
{
    let view = open_panel(root, layout, i, subtitle, 16.0, m)?;
    let (left, _, _, bottom) = view.rect();
    let snaps = &data.snaps;
    for path in &data.paths.points {
        draw_path(root, &view, path)?;
    }
    let span = m.t_range();
    let last = snaps.len().saturating_sub(1);
    for (k, s) in snaps.iter().enumerate() {
        let ink = Ink {
            alpha: fade(s.t, span),
            event: s.event,
            labels: k == last,
            springs: k == last,
        };
        draw_shapes(root, &view, &s.shapes, ink, layout.m_max, layout.r_max)?;
    }
    draw_scale_bar(root, &view)?;
    let dt = nice_step(span.1 - span.0, instants);
    let caption = format!(
        "t = {} → {} s, every {} s, earlier paler{}",
        short(span.0),
        short(span.1),
        short(dt),
        if data.spread {
            "; time runs to the right"
        } else {
            ""
        }
    );
    let y1 = bottom + 4;
    let style = (HPos::Left, VPos::Top);
    canvas::label(root, &caption, (left + 8, y1), 14.0, TEXT.mix(1.0), style)?;
    let events = event_summary(m);
    if !events.is_empty() {
        let caption = format!("red: at the events ({events})");
        canvas::label(
            root,
            &caption,
            (left + 8, y1 + 19),
            14.0,
            EVENT.mix(1.0),
            style,
        )?;
    }
    Ok(())
}

/// A time or length with at most 4 significant digits.
pub fn short(v: f64) -> String {
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" || s.is_empty() {
        "0".into()
    } else {
        s.to_string()
    }
}
