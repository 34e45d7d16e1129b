//! Drawing a [`Figure`] with plotters (the cargo feature `plots`): the embedded font, the
//! prepared ranges and ticks, and the PNG and SVG backends.

use std::error::Error as StdError;
use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::{DashedPathElement, DynElement, IntoDynElement};
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::{figure_size, glyph_fix, Figure, LineKind, Marker, Panel, Series};
use crate::atomic_file::{plot_err, write_through_temp};
use crate::error::Error;

/// Registers the embedded DejaVu Sans font (regular, bold, oblique, bold oblique) as
/// plotters' "sans-serif" family (also as "serif" and "monospace", so that no text
/// request can fail for want of a font). Runs once per process; later calls return the
/// first outcome. `write_figure` calls this itself; call it before using plotters directly.
pub fn ensure_fonts() -> Result<(), Error> {
    static FONTS: OnceLock<bool> = OnceLock::new();
    let ok = *FONTS.get_or_init(|| {
        // See `glyph_fix`: the faces are patched once (and leaked, plotters needs
        // `'static` font data) so that plotters' ab_glyph text keeps glyph side bearings.
        let fixed = |bytes: &'static [u8]| -> &'static [u8] {
            match glyph_fix::patch(bytes) {
                Some(patched) => Box::leak(patched.into_boxed_slice()),
                None => bytes,
            }
        };
        let regular = fixed(dejavu::sans::regular());
        let bold = fixed(dejavu::sans::bold());
        let oblique = fixed(dejavu::sans::oblique());
        let faces: [(FontStyle, &'static [u8]); 4] = [
            (FontStyle::Normal, regular),
            (FontStyle::Bold, bold),
            (FontStyle::Oblique, oblique),
            (FontStyle::Italic, oblique),
        ];
        let mut ok = true;
        for family in ["sans-serif", "serif", "monospace"] {
            for (style, bytes) in faces {
                ok &= plotters::style::register_font(family, style, bytes).is_ok();
            }
        }
        ok
    });
    if ok {
        Ok(())
    } else {
        Err(Error::Internal(
            "the embedded DejaVu Sans font could not be registered with plotters".into(),
        ))
    }
}

/// Writes the figure as PNG (and SVG where `svg` is Some). Width 1000 px, 320 px per
/// panel plus the title band. Parent folders are created. Each file is written to a
/// temporary name next to it and renamed into place, so an error never leaves a
/// half-written figure.
pub fn write_figure(fig: &Figure, png: &Path, svg: Option<&Path>) -> Result<(), Error> {
    ensure_fonts().map_err(|e| Error::Plot {
        path: png.to_path_buf(),
        message: e.to_string(),
    })?;
    let prepared = prepare(fig);
    let size = figure_size(fig);

    // PNG: plotters writes the file itself (the encoder is chosen by the extension), so
    // render to a temporary `.png` in the same folder and rename it into place.
    write_through_temp(png, |tmp| {
        (|| -> Result<(), Box<dyn StdError>> {
            let root = BitMapBackend::new(tmp, size).into_drawing_area();
            render(&root, fig, &prepared)?;
            root.present()?;
            Ok(())
        })()
        .map_err(plot_err(png))
    })?;

    if let Some(svg) = svg {
        let mut text = String::new();
        let result = (|| -> Result<(), Box<dyn StdError>> {
            let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
            render(&root, fig, &prepared)?;
            root.present()?;
            Ok(())
        })();
        if let Err(e) = result {
            return Err(Error::Plot {
                path: svg.to_path_buf(),
                message: e.to_string(),
            });
        }
        crate::atomic_file::write_atomic(svg, text.as_bytes())?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Data preparation (pure, no drawing)
// ---------------------------------------------------------------------------------------

/// A fixed, colour-blind friendly palette (Tableau 10).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

const MARKER_COLOR: RGBColor = RGBColor(150, 150, 150);

struct PreparedSeries {
    label: String,
    style: LineKind,
    color: RGBColor,
    /// Runs of drawable points; a dropped point breaks the line.
    runs: Vec<Vec<(f64, f64)>>,
}

struct PreparedPanel {
    series: Vec<PreparedSeries>,
    log: bool,
    y: (f64, f64),
    /// A log axis's labelled ticks ([`log_ticks`]); empty for a linear axis.
    ticks: Vec<f64>,
    corner: SeriesLabelPosition,
}

struct Prepared {
    x: (f64, f64),
    panels: Vec<PreparedPanel>,
}

fn prepare(fig: &Figure) -> Prepared {
    // Shared x range over all finite points of all panels.
    let mut xs = Bounds::default();
    for p in &fig.panels {
        for s in &p.series {
            for (&x, &y) in s.x.iter().zip(&s.y) {
                if x.is_finite() && y.is_finite() {
                    xs.add(x);
                }
            }
        }
    }
    if xs.is_empty() {
        for m in &fig.markers {
            if m.x.is_finite() {
                xs.add(m.x);
            }
        }
    }
    let x = linear_range(xs, 0.0);

    let panels = fig
        .panels
        .iter()
        .map(|p| {
            let positive = p.log_y
                && p.series.iter().any(|s| {
                    s.x.iter()
                        .zip(&s.y)
                        .any(|(&x, &y)| x.is_finite() && y.is_finite() && y > 0.0)
                });
            let log = p.log_y && positive;
            let mut ys = Bounds::default();
            let mut series = Vec::new();
            for (k, s) in p.series.iter().enumerate() {
                // Colours follow the series' position, so a skipped series does not shift
                // the colours of the others between figures.
                let color = PALETTE[k % PALETTE.len()];
                let runs = runs(s, log);
                if runs.is_empty() {
                    continue;
                }
                for &(_, y) in runs.iter().flatten() {
                    ys.add(y);
                }
                series.push(PreparedSeries {
                    label: s.label.clone(),
                    style: s.style,
                    color,
                    runs,
                });
            }
            // A log axis with labelled ticks (log_ticks); a degenerate one is drawn linear.
            let (log, y, ticks) = match log.then(|| log_range(ys)) {
                Some(y) if log_ticks(y.0, y.1).len() >= 2 => (true, y, log_ticks(y.0, y.1)),
                _ => (false, linear_range(ys, 0.05), vec![]),
            };
            let corner = legend_corner(&series, x, y, log);
            PreparedPanel {
                series,
                log,
                y,
                ticks,
                corner,
            }
        })
        .collect();
    Prepared { x, panels }
}

/// Splits a series into runs of drawable points.
fn runs(s: &Series, log: bool) -> Vec<Vec<(f64, f64)>> {
    let mut runs = Vec::new();
    let mut run = Vec::new();
    for (&x, &y) in s.x.iter().zip(&s.y) {
        let ok = x.is_finite() && y.is_finite() && (!log || y > 0.0);
        if ok {
            run.push((x, y));
        } else if !run.is_empty() {
            runs.push(std::mem::take(&mut run));
        }
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
}

#[derive(Default, Clone, Copy)]
struct Bounds {
    lo: f64,
    hi: f64,
    n: usize,
}

impl Bounds {
    fn add(&mut self, v: f64) {
        if self.n == 0 {
            self.lo = v;
            self.hi = v;
        } else {
            self.lo = self.lo.min(v);
            self.hi = self.hi.max(v);
        }
        self.n += 1;
    }
    fn is_empty(&self) -> bool {
        self.n == 0
    }
}

const BIG: f64 = f64::MAX / 4.0;

/// A linear axis range covering the data, padded by `pad` of the span on each side; a
/// constant (or empty) range is widened so the axis is never degenerate.
fn linear_range(b: Bounds, pad: f64) -> (f64, f64) {
    if b.is_empty() {
        return (0.0, 1.0);
    }
    let (lo, hi) = (b.lo.clamp(-BIG, BIG), b.hi.clamp(-BIG, BIG));
    let scale = lo.abs().max(hi.abs());
    // Half-spans are used so that nothing overflows even for huge values.
    let half = 0.5 * hi - 0.5 * lo;
    if half <= scale * 1e-12 || half < f64::MIN_POSITIVE {
        let mid = 0.5 * lo + 0.5 * hi;
        let w = if mid == 0.0 { 1.0 } else { 0.1 * mid.abs() };
        return (mid - w, mid + w);
    }
    let p = 2.0 * half * pad;
    (lo - p, hi + p)
}

/// A log axis range (positive values) covering the data, padded by 4 % of its span in
/// decades (half a decade each side for a constant series).
fn log_range(b: Bounds) -> (f64, f64) {
    if b.is_empty() {
        return (0.1, 10.0);
    }
    let lo = b.lo.clamp(1e-307, 1e308);
    let hi = b.hi.clamp(1e-307, 1e308);
    let (l0, l1) = (lo.log10(), hi.log10());
    let span = l1 - l0;
    let (a, b) = if span < 1e-9 {
        (l0 - 0.5, l1 + 0.5)
    } else {
        (l0 - 0.04 * span, l1 + 0.04 * span)
    };
    let a = a.clamp(-307.0, 307.0);
    let b = b.clamp(-306.0, 308.0);
    (10f64.powf(a), 10f64.powf(b))
}

/// The values m·10^k inside [lo, hi] for the mantissas `ms`, in increasing order.
fn decade_multiples(lo: f64, hi: f64, ms: &[f64]) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return vec![];
    }
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mut v = Vec::new();
    for k in k0..=k1 {
        for &m in ms {
            // m·10^k from the decimal text, so that 2·10^-3 is exactly the double 0.002
            let x: f64 = format!("{m}e{k}").parse().unwrap_or(f64::NAN);
            if x >= lo && x <= hi {
                v.push(x);
            }
        }
    }
    v
}

/// The labelled ticks of a log axis over [lo, hi] (0 < lo < hi): the decades 10^k inside
/// (every j-th of them when there are more than 8); when fewer than 4 decades are inside,
/// the 1-2-5 ticks (1, 2, 5 × 10^k) if they are more; then, when still fewer than two,
/// every 1…9 × 10^k; and over a span too narrow even for those (less than a factor 2 or
/// so), evenly spaced ticks, a multiple of the largest 1, 2 or 5 × 10^k step that fits
/// three times into the span. Empty only for an empty or invalid range.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = decade_multiples(lo, hi, &[1.0]);
    if decades.len() > 8 {
        let j = decades.len().div_ceil(8);
        return decades.into_iter().step_by(j).collect();
    }
    if decades.len() >= 4 {
        return decades;
    }
    let one_two_five = decade_multiples(lo, hi, &[1.0, 2.0, 5.0]);
    if one_two_five.len() >= 2 {
        return one_two_five;
    }
    let all: Vec<f64> = (1..10).map(f64::from).collect();
    let ones = decade_multiples(lo, hi, &all);
    if ones.len() >= 2 {
        return ones;
    }
    even_ticks(lo, hi)
}

/// Multiples of the largest step s = 1, 2 or 5 × 10^k with 3 s ≤ hi − lo, inside [lo, hi].
fn even_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = hi - lo;
    if !(span > 0.0 && span.is_finite()) {
        return vec![];
    }
    let third = span / 3.0;
    let k = third.log10().floor() as i32;
    let step = [5.0, 2.0, 1.0]
        .iter()
        .map(|m| m * 10f64.powi(k))
        .find(|&st| st <= third)
        .unwrap_or(10f64.powi(k));
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// The gap from `v` to its nearest neighbour among `ticks` (at most `v`): the precision
/// its label needs.
fn tick_gap(ticks: &[f64], v: f64) -> f64 {
    ticks
        .iter()
        .filter(|&&t| t != v)
        .map(|&t| (t - v).abs())
        .fold(v.abs(), f64::min)
}

/// The tick labels of a log axis over [lo, hi], as figures print them: each with the
/// digits that tell it from its neighbours.
pub fn log_tick_labels(lo: f64, hi: f64) -> Vec<String> {
    let ticks = log_ticks(lo, hi);
    ticks
        .iter()
        .map(|&v| fmt_tick(v, tick_gap(&ticks, v)))
        .collect()
}

/// The legend goes into the corner of the plot area with the fewest data points.
fn legend_corner(
    series: &[PreparedSeries], x: (f64, f64), y: (f64, f64), log: bool,
) -> SeriesLabelPosition {
    let ty = |v: f64| if log { v.log10() } else { v };
    let (y0, y1) = (ty(y.0), ty(y.1));
    let entries = series.iter().filter(|s| !s.label.is_empty()).count();
    // Legend box size as a fraction of the plot area (roughly 220 px × 20 px per entry,
    // on a plot area of about 880 × 230 px).
    let w = 0.27;
    let h = ((entries as f64 * 20.0 + 14.0) / 230.0).min(1.0);
    let corners = [
        (SeriesLabelPosition::UpperRight, 1.0 - w, 1.0, 1.0 - h, 1.0),
        (SeriesLabelPosition::UpperLeft, 0.0, w, 1.0 - h, 1.0),
        (SeriesLabelPosition::LowerRight, 1.0 - w, 1.0, 0.0, h),
        (SeriesLabelPosition::LowerLeft, 0.0, w, 0.0, h),
    ];
    let mut counts = [0usize; 4];
    for s in series {
        let pts: Vec<(f64, f64)> = s.runs.iter().flatten().copied().collect();
        // Lines cover the space between their points too: sample densely enough.
        let step = (pts.len() / 2000).max(1);
        for &(px, py) in pts.iter().step_by(step) {
            let u = (px - x.0) / (x.1 - x.0);
            let v = (ty(py) - y0) / (y1 - y0);
            for (k, &(_, u0, u1, v0, v1)) in corners.iter().enumerate() {
                if u >= u0 && u <= u1 && v >= v0 && v <= v1 {
                    counts[k] += 1;
                }
            }
        }
    }
    let mut best = 0;
    for k in 1..4 {
        if counts[k] < counts[best] {
            best = k;
        }
    }
    corners[best].0.clone()
}

/// Tick label text for value `v` on an axis whose ticks are about `step` apart.
fn fmt_tick(v: f64, step: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let step = step.abs();
    if v == 0.0 || (step > 0.0 && v.abs() < step * 1e-6) {
        return "0".into();
    }
    let mag = v.abs().log10().floor() as i32;
    let step_mag = if step > 0.0 && step.is_finite() {
        step.log10().floor() as i32
    } else {
        mag
    };
    if !(-3..5).contains(&mag) {
        let digits = (mag - step_mag + 1).clamp(1, 10) as usize;
        let s = format!("{:.*e}", digits - 1, v);
        // Trim trailing zeros of the mantissa: "1.500e-5" -> "1.5e-5".
        match s.split_once('e') {
            Some((m, e)) => {
                let m = if m.contains('.') {
                    m.trim_end_matches('0').trim_end_matches('.')
                } else {
                    m
                };
                format!("{m}e{e}")
            }
            None => s,
        }
    } else {
        let decimals = (1 - step_mag).clamp(0, 12) as usize;
        let s = format!("{:.*}", decimals, v);
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        };
        if s == "-0" {
            "0".into()
        } else {
            s
        }
    }
}

// ---------------------------------------------------------------------------------------
// Drawing
// ---------------------------------------------------------------------------------------

type DrawResult = Result<(), Box<dyn StdError>>;

const FONT: &str = "sans-serif";

fn render<DB>(root: &DrawingArea<DB, Shift>, fig: &Figure, prep: &Prepared) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let body = if fig.title.trim().is_empty() {
        root.clone()
    } else {
        let style = (FONT, 24, FontStyle::Bold).into_font().color(&BLACK);
        root.titled(&fig.title, style)?
    };
    if fig.panels.is_empty() {
        let (w, h) = body.dim_in_pixel();
        let style = (FONT, 18).into_font().color(&MARKER_COLOR);
        body.draw_text("no data", &style, (w as i32 / 2 - 30, h as i32 / 2))?;
        return Ok(());
    }
    let areas = body.split_evenly((fig.panels.len(), 1));
    let n = fig.panels.len();
    // The same y label area in every panel, so that the shared x axes line up.
    let y_area = if fig.panels.iter().all(|p| p.y_label.trim().is_empty()) {
        62
    } else {
        86
    };
    for (i, ((panel, pp), area)) in fig.panels.iter().zip(&prep.panels).zip(&areas).enumerate() {
        let ctx = PanelCtx {
            panel,
            prep: pp,
            x: prep.x,
            markers: &fig.markers,
            x_label: if i + 1 == n { Some(&fig.x_label) } else { None },
            marker_labels: i == 0,
            y_area,
        };
        if pp.log {
            // light lines at every 1…9 × 10^k over a few decades, at the decades over more
            let minor: Vec<f64> = (1..10).map(f64::from).collect();
            let light = match decade_multiples(pp.y.0, pp.y.1, &[1.0]) {
                d if d.len() >= 4 => d,
                _ => decade_multiples(pp.y.0, pp.y.1, &minor),
            };
            let y = (pp.y.0..pp.y.1)
                .log_scale()
                .with_key_points(pp.ticks.clone())
                .with_light_points(light);
            draw_panel(area, &ctx, y)?;
        } else {
            draw_panel(area, &ctx, pp.y.0..pp.y.1)?;
        }
    }
    Ok(())
}

struct PanelCtx<'a> {
    panel: &'a Panel,
    prep: &'a PreparedPanel,
    x: (f64, f64),
    markers: &'a [Marker],
    x_label: Option<&'a String>,
    marker_labels: bool,
    /// Width of the y label area in pixels.
    y_area: u32,
}

fn draw_panel<DB, Y>(area: &DrawingArea<DB, Shift>, ctx: &PanelCtx, y_spec: Y) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let pp = ctx.prep;
    let (x0, x1) = ctx.x;
    let (y0, y1) = pp.y;
    let bottom = ctx.x_label.is_some_and(|s| !s.trim().is_empty());

    let mut builder = ChartBuilder::on(area);
    builder
        .margin_left(10)
        .margin_right(25)
        .margin_top(6)
        .margin_bottom(6)
        .x_label_area_size(if bottom { 52 } else { 30 })
        .y_label_area_size(ctx.y_area);
    if !ctx.panel.title.trim().is_empty() {
        builder.caption(&ctx.panel.title, (FONT, 17).into_font());
    }
    let mut chart = builder.build_cartesian_2d(x0..x1, y_spec)?;

    let x_step = (x1 - x0) / 10.0;
    let y_step = (y1 - y0) / 6.0;
    let fx = move |v: &f64| fmt_tick(*v, x_step);
    let fy_lin = move |v: &f64| fmt_tick(*v, y_step);
    let fy_log = |v: &f64| fmt_tick(*v, tick_gap(&pp.ticks, *v));
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(10)
        .y_labels(if pp.log { 7 } else { 6 })
        .x_label_formatter(&fx)
        .y_label_formatter(if pp.log { &fy_log } else { &fy_lin })
        .label_style((FONT, 13).into_font())
        .axis_desc_style((FONT, 15).into_font())
        .bold_line_style(RGBColor(222, 222, 222))
        .light_line_style(RGBColor(244, 244, 244))
        .max_light_lines(4)
        .axis_style(RGBColor(90, 90, 90));
    if !ctx.panel.y_label.trim().is_empty() {
        mesh.y_desc(ctx.panel.y_label.as_str());
    }
    if let Some(xl) = ctx.x_label.filter(|s| !s.trim().is_empty()) {
        mesh.x_desc(xl.as_str());
    }
    mesh.draw()?;

    // Markers first, so the data is drawn over them.
    draw_markers(&mut chart, ctx)?;
    for series in &pp.series {
        draw_one_series(&mut chart, series)?;
    }

    if pp.series.is_empty() {
        let (w, h) = area.dim_in_pixel();
        let style = (FONT, 16).into_font().color(&MARKER_COLOR);
        area.draw_text("no data", &style, (w as i32 / 2 - 28, h as i32 / 2 - 8))?;
    } else if pp.series.iter().any(|s| !s.label.is_empty()) {
        chart
            .configure_series_labels()
            .position(pp.corner.clone())
            .margin(8)
            .legend_area_size(30)
            .label_font((FONT, 13).into_font())
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(190, 190, 190))
            .draw()?;
    }
    Ok(())
}

/// The panel's event markers: a vertical line each in the x range, labelled (when the
/// panel labels them) in three staggered rows so that close markers stay readable.
fn draw_markers<DB, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    ctx: &PanelCtx,
) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64>,
{
    let (x0, x1) = ctx.x;
    let (y0, y1) = ctx.prep.y;
    let marker_text = (FONT, 12).into_font().color(&RGBColor(110, 110, 110));
    let mut labelled = 0;
    for m in ctx.markers {
        if !(m.x.is_finite() && m.x >= x0 && m.x <= x1) {
            continue;
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(m.x, y0), (m.x, y1)],
            MARKER_COLOR.stroke_width(1),
        )))?;
        if let Some(label) = m.label.as_ref().filter(|_| ctx.marker_labels) {
            // Stagger labels over three rows so that close markers stay readable.
            let dy = 3 + 14 * (labelled % 3);
            labelled += 1;
            chart.draw_series(std::iter::once(
                EmptyElement::at((m.x, y1)) + Text::new(label.clone(), (3, dy), &marker_text),
            ))?;
        }
    }
    Ok(())
}

/// One series: its lines (solid or dashed, lone points as dots) or its points, with its
/// legend entry when it has a label.
fn draw_one_series<'a, DB, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    s: &PreparedSeries,
) -> DrawResult
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64>,
{
    let color = s.color;
    let anno = match s.style {
        kind @ (LineKind::Solid | LineKind::Dashed) => {
            let dashed = kind == LineKind::Dashed;
            let style = color.stroke_width(2);
            draw_singles(chart, s)?;
            let anno = chart.draw_series(
                s.runs
                    .iter()
                    .filter(|r| r.len() > 1)
                    .map(move |r| line_path(dashed, r.clone(), style)),
            )?;
            anno.legend(move |(x, y)| line_path(dashed, vec![(x, y), (x + 24, y)], style));
            anno
        }
        LineKind::Points => {
            let style = color.filled();
            let anno = chart.draw_series(
                s.runs
                    .iter()
                    .flatten()
                    .map(move |&p| Circle::new(p, 3, style)),
            )?;
            anno.legend(move |(x, y)| Circle::new((x + 12, y), 3, style));
            anno
        }
    };
    if !s.label.is_empty() {
        anno.label(s.label.as_str());
    }
    Ok(())
}

/// A line series' path through `points`: solid, or dashed (8 px dashes, 5 px gaps); the
/// same for the plotted runs (data coordinates) and the legend's sample (pixels).
fn line_path<'a, DB, C>(dashed: bool, points: Vec<C>, style: ShapeStyle) -> DynElement<'a, DB, C>
where
    DB: DrawingBackend,
    C: Clone + 'a,
{
    if dashed {
        DashedPathElement::new(points, 8, 5, style).into_dyn()
    } else {
        PathElement::new(points, style).into_dyn()
    }
}

/// Isolated points of a line series (runs of length one) are drawn as small dots so they
/// do not vanish.
fn draw_singles<DB, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    s: &PreparedSeries,
) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64>,
{
    let style = s.color.filled();
    chart.draw_series(
        s.runs
            .iter()
            .filter(|r| r.len() == 1)
            .map(move |r| Circle::new(r[0], 2, style)),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Left-most inked column of each maximal run of inked columns.
    fn ink_runs(text: &str, size: f64) -> Vec<i32> {
        let font = plotters::style::FontDesc::new(FontFamily::SansSerif, size, FontStyle::Normal);
        let mut cols = std::collections::BTreeSet::new();
        font.draw(text, (0, 0), |x, _y, a| {
            if a > 0.5 {
                cols.insert(x);
            }
            Ok::<(), ()>(())
        })
        .unwrap()
        .unwrap();
        let mut starts = Vec::new();
        let mut prev = None;
        for &c in &cols {
            if prev != Some(c - 1) {
                starts.push(c);
            }
            prev = Some(c);
        }
        starts
    }

    #[test]
    fn glyph_bearings_are_kept() {
        ensure_fonts().unwrap();
        // DejaVu Sans: '1' advance 1303, xMin 225; '0' xMin 135; height 1901 + 483.
        let size = 100.0;
        let s = size / 2384.0;
        let runs = ink_runs("10", size);
        assert_eq!(runs.len(), 2, "{runs:?}");
        let got = (runs[1] - runs[0]) as f64;
        let want = (1303.0 + 135.0 - 225.0) * s; // 50.9 px (unpatched plotters: 54.7)
        assert!(
            (got - want).abs() <= 1.5,
            "'0' starts {got} px after '1', want {want}"
        );
    }

    #[test]
    fn ticks() {
        assert_eq!(fmt_tick(0.0, 0.1), "0");
        assert_eq!(fmt_tick(0.25, 0.05), "0.25");
        assert_eq!(fmt_tick(1e-17, 0.1), "0");
        assert_eq!(fmt_tick(1e-5, 1e-5), "1e-5");
        assert_eq!(fmt_tick(1000.0, 1000.0), "1000");
        assert_eq!(fmt_tick(2.5e6, 5e5), "2.5e6");
        assert_eq!(fmt_tick(-3.0, 1.0), "-3");
    }

    #[test]
    fn ranges() {
        let mut b = Bounds::default();
        b.add(5.0);
        let (lo, hi) = linear_range(b, 0.05);
        assert!(lo < 5.0 && hi > 5.0);
        let (lo, hi) = log_range(b);
        assert!(lo < 5.0 && hi > 5.0);
        assert_eq!(log_ticks(1e-10, 1e-2).len(), 5, "9 decades, every 2nd");
        assert_eq!(
            log_ticks(0.9e-3, 1.1e-1),
            vec![1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1]
        );
        assert_eq!(log_ticks(5.18e-3, 9.12e-3), vec![6e-3, 7e-3, 8e-3, 9e-3]);
        assert!(
            log_ticks(5.27e-3, 5.29e-3).len() >= 3,
            "evenly spaced by 5e-6"
        );
        assert!(log_ticks(1.0, 1.0).is_empty());
        b.add(1e300);
        b.add(-1e308);
        let (lo, hi) = linear_range(b, 0.05);
        assert!(lo.is_finite() && hi.is_finite() && lo < hi);
    }
}
