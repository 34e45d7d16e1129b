//! The animated GIF: the motion in real time (or scaled to a chosen duration), frames read
//! off the dense output at evenly spaced instants, the time in a corner, and each event
//! flashed with its guard's name.

use super::canvas::{self, draw_scale_bar, draw_shapes, Ink, EVENT, TEXT};
use super::geometry::Shape;
use super::layout::{draw_path, open_panel, Layout};
use super::motion::{Motion, Paths};
use super::strobe::short;
use crate::error::Error;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use std::path::Path;

/// The most frames an animation may have.
pub const MAX_FRAMES: usize = 10_000;

/// Settings of an animation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnimationOptions {
    /// Frames per second of display (1–100; GIF delays are whole centiseconds, so the
    /// shown rate is 100 / round(100 / fps)).
    pub fps: u32,
    /// Display duration (s); `None`: real time (the motion's own span).
    pub duration: Option<f64>,
    /// Width of one panel (px).
    pub width: u32,
    /// How long an event's name stays on screen (s of display).
    pub flash: f64,
}

impl Default for AnimationOptions {
    fn default() -> Self {
        AnimationOptions {
            fps: 25,
            duration: None,
            width: 480,
            flash: 0.3,
        }
    }
}

/// What was written.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct GifInfo {
    pub frames: usize,
    pub width: u32,
    pub height: u32,
    /// Delay between frames (centiseconds).
    pub delay_cs: u32,
    /// Simulated seconds per displayed second.
    pub speed: f64,
}

/// The frame instants: `t_k = t0 + (t1 − t0) k/(n − 1)`, `n = round(D·fps) + 1` frames
/// for the display duration D (the span itself in real time).
pub fn frame_times(span: (f64, f64), opts: &AnimationOptions) -> Result<Vec<f64>, Error> {
    let fps = |message: String| Error::Flag {
        flag: "--fps".into(),
        value: opts.fps.to_string(),
        message,
    };
    if !(1..=100).contains(&opts.fps) {
        return Err(fps("the frame rate must be between 1 and 100".into()));
    }
    let real = span.1 - span.0;
    let d = opts.duration.unwrap_or(real);
    if !(d.is_finite() && d > 0.0) {
        return Err(Error::Flag {
            flag: "--duration".into(),
            value: d.to_string(),
            message: "the display duration must be a positive number of seconds".into(),
        });
    }
    let n = (d * opts.fps as f64).round() + 1.0;
    if n > MAX_FRAMES as f64 {
        return Err(fps(format!(
            "{n} frames ({d} s at {} fps) is more than {MAX_FRAMES}: lower --fps or --duration",
            opts.fps
        )));
    }
    let n = (n as usize).max(2);
    Ok((0..n)
        .map(|k| span.0 + real * k as f64 / (n - 1) as f64)
        .collect())
}

/// One panel's frame: the shapes now and the events to flash (their index).
struct Frame {
    shapes: Vec<Shape>,
    flash: Vec<usize>,
}

/// Writes the animation of `panels` (subtitle, motion) side by side to `path` (a GIF),
/// atomically (temporary name, then rename). All panels share the time axis of the
/// longest motion.
pub fn write_gif(
    title: &str, panels: &[(&str, &Motion<'_>)], opts: &AnimationOptions, path: &Path,
) -> Result<GifInfo, Error> {
    crate::plot::ensure_fonts()?;
    let span = panels
        .iter()
        .map(|(_, m)| m.t_range())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |a, b| {
            (a.0.min(b.0), a.1.max(b.1))
        });
    let times = frame_times(span, opts)?;
    let dt = (span.1 - span.0) / (times.len() - 1) as f64;
    let speed = (span.1 - span.0) / opts.duration.unwrap_or(span.1 - span.0);
    let window = (opts.flash * speed).max(1.0001 * dt);
    let mut frames: Vec<Vec<Frame>> = Vec::with_capacity(times.len());
    for &t in &times {
        let mut row = Vec::with_capacity(panels.len());
        for (_, m) in panels {
            let flash = m
                .events()
                .iter()
                .enumerate()
                .filter(|(_, e)| e.t <= t && (e.t > t - window || e.t == span.0))
                .map(|(k, _)| k)
                .collect();
            row.push(Frame {
                shapes: m.shapes_at(t)?,
                flash,
            });
        }
        frames.push(row);
    }
    let paths = panels
        .iter()
        .map(|(_, m)| m.mass_paths(3))
        .collect::<Result<Vec<_>, _>>()?;
    let motions: Vec<&Motion<'_>> = panels.iter().map(|(_, m)| *m).collect();
    let shapes: Vec<&[Shape]> = frames
        .iter()
        .flatten()
        .map(|f| f.shapes.as_slice())
        .collect();
    let pts: Vec<[f64; 2]> = paths
        .iter()
        .flat_map(|p| p.points.iter().flatten().copied())
        .collect();
    let layout = Layout::new(&motions, &shapes, &pts, opts.width)?;
    let (w, h) = layout.size();
    let delay_ms = (1000.0 / opts.fps as f64).round() as u32;
    let pace = if (speed - 1.0).abs() < 1e-9 {
        "real time".to_string()
    } else {
        format!("{}× real time", short(1.0 / speed))
    };
    let heading = format!("{title} ({pace})");

    let draw = |tmp: &Path| -> canvas::DrawResult {
        let root = BitMapBackend::gif(tmp, (w, h), delay_ms)?.into_drawing_area();
        for (row, &t) in frames.iter().zip(&times) {
            root.fill(&WHITE)?;
            canvas::label(
                &root,
                &heading,
                ((w / 2) as i32, 8),
                18.0,
                TEXT.mix(1.0),
                (HPos::Center, VPos::Top),
            )?;
            for (i, ((sub, m), f)) in panels.iter().zip(row).enumerate() {
                draw_frame(&root, &layout, i, sub, m, f, &paths[i], t)?;
            }
            root.present()?;
        }
        Ok(())
    };
    crate::atomic_file::write_through_temp(path, |tmp| {
        draw(tmp).map_err(crate::atomic_file::plot_err(path))
    })?;
    Ok(GifInfo {
        frames: times.len(),
        width: w,
        height: h,
        delay_cs: delay_ms.div_ceil(10).max(1).min((delay_ms + 5) / 10),
        speed,
    })
}

/// One panel of one frame: subtitle, scene, the trail so far, flashed events, the shapes
/// now, the time and the scale bar.
#[allow(clippy::too_many_arguments)]
fn draw_frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>, layout: &Layout, i: usize, subtitle: &str, m: &Motion<'_>,
    f: &Frame, paths: &Paths, t: f64,
) -> canvas::DrawResult
where
    DB::ErrorType: 'static,
{
    let view = open_panel(root, layout, i, subtitle, 15.0, m)?;
    let (left, top, right, bottom) = view.rect();
    let cx = (left + right) / 2;
    let upto = paths.t.partition_point(|&s| s <= t);
    for path in &paths.points {
        draw_path(root, &view, &path[..upto.min(path.len())])?;
    }
    let ghost = Ink {
        alpha: 0.45,
        event: true,
        labels: false,
        springs: false,
    };
    for &k in &f.flash {
        draw_shapes(
            root,
            &view,
            &m.shapes_at_event(k)?,
            ghost,
            layout.m_max,
            layout.r_max,
        )?;
    }
    let now = Ink {
        alpha: 1.0,
        event: false,
        labels: true,
        springs: true,
    };
    draw_shapes(root, &view, &f.shapes, now, layout.m_max, layout.r_max)?;
    let clock = format!("t = {:.2} s", t.min(m.t_range().1));
    canvas::label(
        root,
        &clock,
        (left + 8, top + 6),
        16.0,
        TEXT.mix(1.0),
        (HPos::Left, VPos::Top),
    )?;
    if !f.flash.is_empty() {
        let names: Vec<&str> = f
            .flash
            .iter()
            .map(|&k| m.events()[k].guard.as_str())
            .collect();
        let mut seen = names.clone();
        seen.dedup();
        canvas::label(
            root,
            &seen.join(" + "),
            (cx, top + 6),
            22.0,
            EVENT.mix(1.0),
            (HPos::Center, VPos::Top),
        )?;
        root.draw(&Rectangle::new(
            [(left + 2, top + 2), (right - 3, bottom - 3)],
            EVENT.stroke_width(3),
        ))?;
    }
    draw_scale_bar(root, &view)?;
    Ok(())
}
