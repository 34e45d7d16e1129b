//! A heatmap of the cost over a two-axis grid, the optimum marked, with a colour bar
//! (PNG and SVG through plotters, the embedded font of [`crate::plot`]).

use crate::error::Error;
use crate::sweep::grid::Axis;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::error::Error as StdError;
use std::path::Path;

/// One grid cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell {
    /// Not in this file (another shard's point): left white.
    Missing,
    /// The point failed: grey.
    Failed,
    Cost(f64),
}

const SIZE: (u32, u32) = (1000, 800);
const FAILED: RGBColor = RGBColor(190, 190, 190);
const FONT: &str = "sans-serif";

/// Viridis at five stops (0, ¼, ½, ¾, 1), linearly interpolated (matplotlib's colour map
/// sampled at those stops).
fn colour(s: f64) -> RGBColor {
    const STOPS: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let s = if s.is_finite() {
        s.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = s * 4.0;
    let k = (x.floor() as usize).min(3);
    let f = x - k as f64;
    let (a, b) = (STOPS[k], STOPS[k + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The colour scale: log10 ψ when every cost is positive, else ψ; its range.
struct Scale {
    log: bool,
    lo: f64,
    hi: f64,
}

impl Scale {
    fn of(cells: &[Cell]) -> Scale {
        let v: Vec<f64> = cells
            .iter()
            .filter_map(|c| match c {
                Cell::Cost(v) if v.is_finite() => Some(*v),
                _ => None,
            })
            .collect();
        let log = !v.is_empty() && v.iter().all(|&x| x > 0.0);
        let t: Vec<f64> = v.iter().map(|&x| if log { x.log10() } else { x }).collect();
        let lo = t.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if !lo.is_finite() {
            (0.0, 1.0)
        } else if hi > lo {
            (lo, hi)
        } else {
            (lo - 0.5, lo + 0.5)
        };
        Scale { log, lo, hi }
    }
    fn value(&self, v: f64) -> f64 {
        if self.log {
            v.log10()
        } else {
            v
        }
    }
    fn fraction(&self, v: f64) -> f64 {
        (self.value(v) - self.lo) / (self.hi - self.lo)
    }
}

/// Half a grid step (the cell's half width).
fn half_step(a: &Axis) -> f64 {
    (a.hi - a.lo) / ((a.n - 1) as f64) / 2.0
}

type DrawResult = Result<(), Box<dyn StdError>>;

fn render<DB>(
    root: &DrawingArea<DB, Shift>, title: &str, ax: &Axis, ay: &Axis, cells: &[Cell],
    best: Option<(f64, f64, f64)>,
) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let body = root.titled(title, (FONT, 24).into_font().color(&BLACK))?;
    let (main, bar) = body.split_horizontally(SIZE.0 - 150);
    let scale = Scale::of(cells);
    let (hx, hy) = (half_step(ax), half_step(ay));
    let mut chart = ChartBuilder::on(&main)
        .margin(15)
        .margin_top(32)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(ax.lo - hx..ax.hi + hx, ay.lo - hy..ay.hi + hy)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(ax.name.as_str())
        .y_desc(ay.name.as_str())
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .draw()?;
    let xs = ax.values();
    let ys = ay.values();
    chart.draw_series(cells.iter().enumerate().filter_map(|(i, c)| {
        let (x, y) = (xs[i / ay.n], ys[i % ay.n]);
        let fill = match *c {
            Cell::Missing => return None,
            Cell::Failed => FAILED,
            Cell::Cost(v) => colour(scale.fraction(v)),
        };
        Some(Rectangle::new(
            [(x - hx, y - hy), (x + hx, y + hy)],
            fill.filled(),
        ))
    }))?;
    if let Some((bx, by, cost)) = best {
        chart.draw_series(std::iter::once(Cross::new(
            (bx, by),
            9,
            RED.stroke_width(3),
        )))?;
        chart.draw_series(std::iter::once(Circle::new(
            (bx, by),
            12,
            WHITE.stroke_width(2),
        )))?;
        let style = (FONT, 16).into_font().color(&BLACK);
        let label = format!("min ψ = {cost:.4e} at ({bx:.4}, {by:.4})");
        main.draw_text(&label, &style, (100, 6))?;
    }
    colour_bar(&bar, &scale, cells.contains(&Cell::Failed))
}

fn colour_bar<DB>(area: &DrawingArea<DB, Shift>, scale: &Scale, failed: bool) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .margin_top(32)
        .margin_bottom(65)
        .margin_right(10)
        .y_label_area_size(75)
        .build_cartesian_2d(0.0..1.0, scale.lo..scale.hi)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_desc(if scale.log { "log10 ψ" } else { "ψ" })
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .draw()?;
    let n = 100;
    let step = (scale.hi - scale.lo) / n as f64;
    chart.draw_series((0..n).map(|k| {
        let y0 = scale.lo + step * k as f64;
        Rectangle::new(
            [(0.0, y0), (1.0, y0 + step)],
            colour((k as f64 + 0.5) / n as f64).filled(),
        )
    }))?;
    if failed {
        let (_, h) = area.dim_in_pixel();
        let style = (FONT, 14).into_font().color(&BLACK);
        area.draw(&Rectangle::new(
            [(10, h as i32 - 45), (28, h as i32 - 27)],
            FAILED.filled(),
        ))?;
        area.draw_text("failed", &style, (34, h as i32 - 43))?;
    }
    Ok(())
}

/// Writes the heatmap of `cells` (index `i = kx·n_y + k_y`, as the grid enumerates
/// points) as PNG and SVG; `best` = (x, y, ψ) of the optimum.
pub fn write(
    title: &str, ax: &Axis, ay: &Axis, cells: &[Cell], best: Option<(f64, f64, f64)>, png: &Path,
    svg: &Path,
) -> Result<(), Error> {
    let plot_err = |path: &Path, e: Box<dyn StdError>| Error::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    crate::plot::ensure_fonts()?;
    crate::atomic_file::write_through_temp(png, |tmp| {
        let root = BitMapBackend::new(tmp, SIZE).into_drawing_area();
        render(&root, title, ax, ay, cells, best).map_err(|e| plot_err(png, e))?;
        root.present().map_err(|e| plot_err(png, Box::new(e)))
    })?;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
        render(&root, title, ax, ay, cells, best).map_err(|e| plot_err(svg, e))?;
        root.present().map_err(|e| plot_err(svg, Box::new(e)))?;
    }
    crate::atomic_file::write_atomic(svg, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_map_ends_and_scale() {
        assert_eq!(colour(0.0), RGBColor(68, 1, 84));
        assert_eq!(colour(1.0), RGBColor(253, 231, 37));
        assert_eq!(colour(0.5), RGBColor(33, 145, 140));
        assert_eq!(colour(f64::NAN), colour(0.0));
        let s = Scale::of(&[Cell::Cost(1e-3), Cell::Failed, Cell::Cost(10.0)]);
        assert!(s.log && (s.lo + 3.0).abs() < 1e-15 && (s.hi - 1.0).abs() < 1e-15);
        assert!((s.fraction(0.1) - 0.5).abs() < 1e-15);
        let s = Scale::of(&[Cell::Cost(-1.0), Cell::Cost(3.0)]);
        assert!(!s.log && s.lo == -1.0 && s.hi == 3.0);
    }
}
