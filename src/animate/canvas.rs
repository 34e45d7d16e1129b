//! Drawing shapes and scenes on a plotters drawing area, in world coordinates (metres, y
//! up) mapped to pixels with one scale for both axes, so the picture keeps the
//! mechanism's proportions.

use super::geometry::{Pt, SceneItem, Shape, Side};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// What drawing returns (the backends' errors, boxed).
pub type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Colours of the pictures.
pub const MASS: RGBColor = RGBColor(31, 119, 180);
pub const BAR: RGBColor = RGBColor(55, 55, 55);
pub const SPRING: RGBColor = RGBColor(230, 115, 0);
pub const DAMPER: RGBColor = RGBColor(148, 103, 189);
pub const EVENT: RGBColor = RGBColor(214, 39, 40);
pub const GROUND: RGBColor = RGBColor(90, 90, 90);
pub const PATH: RGBColor = RGBColor(170, 190, 210);
pub const TEXT: RGBColor = RGBColor(30, 30, 30);

/// A world-coordinate box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub x: (f64, f64),
    pub y: (f64, f64),
}

impl Bounds {
    /// The smallest box around `points` (finite ones only); `None` if there is none.
    pub fn around(points: impl IntoIterator<Item = Pt>) -> Option<Bounds> {
        let mut b: Option<Bounds> = None;
        for p in points
            .into_iter()
            .filter(|p| p[0].is_finite() && p[1].is_finite())
        {
            b = Some(match b {
                None => Bounds {
                    x: (p[0], p[0]),
                    y: (p[1], p[1]),
                },
                Some(b) => Bounds {
                    x: (b.x.0.min(p[0]), b.x.1.max(p[0])),
                    y: (b.y.0.min(p[1]), b.y.1.max(p[1])),
                },
            });
        }
        b
    }

    /// Grown to include the height `y`.
    pub fn with_y(self, y: f64) -> Bounds {
        if !y.is_finite() {
            return self;
        }
        Bounds {
            x: self.x,
            y: (self.y.0.min(y), self.y.1.max(y)),
        }
    }

    /// Grown to include the abscissa `x`.
    pub fn with_x(self, x: f64) -> Bounds {
        if !x.is_finite() {
            return self;
        }
        Bounds {
            x: (self.x.0.min(x), self.x.1.max(x)),
            y: self.y,
        }
    }

    /// Padded on every side by `frac` of the larger side (at least `min` metres).
    pub fn padded(self, frac: f64, min: f64) -> Bounds {
        let d = (self.x.1 - self.x.0).max(self.y.1 - self.y.0);
        let pad = (frac * d).max(min);
        Bounds {
            x: (self.x.0 - pad, self.x.1 + pad),
            y: (self.y.0 - pad, self.y.1 + pad),
        }
    }

    pub fn width(&self) -> f64 {
        self.x.1 - self.x.0
    }
    pub fn height(&self) -> f64 {
        self.y.1 - self.y.0
    }
}

/// The map from world to pixels of one panel: `px = left + (x − x0)·scale`,
/// `py = top + (y_top − y)·scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    x0: f64,
    y_top: f64,
    scale: f64,
    left: i32,
    top: i32,
    w: u32,
    h: u32,
}

impl View {
    /// Fits `world` into the pixel rectangle at (`left`, `top`) of size `w`×`h`, centred,
    /// with one scale for both axes.
    pub fn fit(world: Bounds, left: i32, top: i32, w: u32, h: u32) -> View {
        let dx = world.width().max(1e-9);
        let dy = world.height().max(1e-9);
        let scale = (w as f64 / dx).min(h as f64 / dy);
        let cx = 0.5 * (world.x.0 + world.x.1);
        let cy = 0.5 * (world.y.0 + world.y.1);
        View {
            x0: cx - 0.5 * w as f64 / scale,
            y_top: cy + 0.5 * h as f64 / scale,
            scale,
            left,
            top,
            w,
            h,
        }
    }

    /// The same map over a rectangle `m` px larger on every side (scene lines then run
    /// to the panel's edges).
    pub fn widened(&self, m: u32) -> View {
        let d = m as f64 / self.scale;
        View {
            x0: self.x0 - d,
            y_top: self.y_top + d,
            scale: self.scale,
            left: self.left - m as i32,
            top: self.top - m as i32,
            w: self.w + 2 * m,
            h: self.h + 2 * m,
        }
    }

    /// Pixels per metre.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The pixel of a world point.
    pub fn px(&self, p: Pt) -> (i32, i32) {
        (
            self.left + ((p[0] - self.x0) * self.scale).round() as i32,
            self.top + ((self.y_top - p[1]) * self.scale).round() as i32,
        )
    }

    /// The world's horizontal extent shown.
    pub fn x_range(&self) -> (f64, f64) {
        (self.x0, self.x0 + self.w as f64 / self.scale)
    }

    /// The world's vertical extent shown (bottom, top).
    pub fn y_range(&self) -> (f64, f64) {
        (self.y_top - self.h as f64 / self.scale, self.y_top)
    }

    /// The pixel rectangle: (left, top, right, bottom).
    pub fn rect(&self) -> (i32, i32, i32, i32) {
        (
            self.left,
            self.top,
            self.left + self.w as i32,
            self.top + self.h as i32,
        )
    }
}

/// How a set of shapes is inked: its opacity, and whether it is an event instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ink {
    pub alpha: f64,
    pub event: bool,
    /// Write the masses' names.
    pub labels: bool,
    /// Draw the springs and dampers (a strobe picture draws them once, not per instant).
    pub springs: bool,
}

/// The disc radius of a mass in pixels: area proportional to the mass, `r_max` for the
/// heaviest mass `m_max`, at least 3 px (massless points, e.g. feet, are dots).
pub fn mass_radius(mass: f64, m_max: f64, r_max: f64) -> u32 {
    let r = if m_max > 0.0 && mass > 0.0 {
        r_max * (mass / m_max).sqrt()
    } else {
        0.0
    };
    r.max(3.0).round() as u32
}

fn text_style(size: f64, color: RGBAColor) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&color)
}

/// Writes `text` at pixel `at` with the given anchor.
pub fn label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>, text: &str, at: (i32, i32), size: f64, color: RGBAColor,
    anchor: (HPos, VPos),
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let style = text_style(size, color).pos(Pos::new(anchor.0, anchor.1));
    area.draw(&Text::new(text.to_string(), at, style))?;
    Ok(())
}

/// Unit vector from a to b in pixels and the length (0 when they coincide).
fn dir(a: (i32, i32), b: (i32, i32)) -> ((f64, f64), f64) {
    let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
    let l = (dx * dx + dy * dy).sqrt();
    if l > 0.0 {
        ((dx / l, dy / l), l)
    } else {
        ((1.0, 0.0), 0.0)
    }
}

fn at(a: (i32, i32), u: (f64, f64), s: f64, n: f64) -> (i32, i32) {
    // s along u, n along its normal (−u.1, u.0)
    (
        (a.0 as f64 + s * u.0 - n * u.1).round() as i32,
        (a.1 as f64 + s * u.1 + n * u.0).round() as i32,
    )
}

/// A zigzag spring from a to b: straight leads of 15% at each end and 8 coils of
/// half-width 5 px between them.
pub fn zigzag(a: (i32, i32), b: (i32, i32)) -> Vec<(i32, i32)> {
    const COILS: usize = 8;
    const HALF_WIDTH: f64 = 5.0;
    let (u, l) = dir(a, b);
    let (s0, s1) = (0.15 * l, 0.85 * l);
    let mut pts = vec![a, at(a, u, s0, 0.0)];
    for k in 0..2 * COILS {
        let s = s0 + (s1 - s0) * (k as f64 + 0.5) / (2 * COILS) as f64;
        let n = if k % 2 == 0 { HALF_WIDTH } else { -HALF_WIDTH };
        pts.push(at(a, u, s, n));
    }
    pts.push(at(a, u, s1, 0.0));
    pts.push(b);
    pts
}

/// A dashpot from a to b: a rod, a cylinder open towards b, a piston plate and its rod.
fn dashpot(a: (i32, i32), b: (i32, i32)) -> Vec<Vec<(i32, i32)>> {
    let (u, l) = dir(a, b);
    let w = 6.0;
    let (c0, c1, plate) = (0.35 * l, 0.65 * l, 0.55 * l);
    vec![
        vec![a, at(a, u, c0, 0.0)],
        vec![
            at(a, u, c1, w),
            at(a, u, c0, w),
            at(a, u, c0, -w),
            at(a, u, c1, -w),
        ],
        vec![at(a, u, plate, w - 2.0), at(a, u, plate, 2.0 - w)],
        vec![at(a, u, plate, 0.0), b],
    ]
}

/// Draws shapes: springs, dampers and bars under pivots and masses. `m_max` and `r_max`
/// scale the discs (see [`mass_radius`]).
pub fn draw_shapes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>, view: &View, shapes: &[Shape], ink: Ink, m_max: f64, r_max: f64,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let a = ink.alpha;
    let tint = |c: RGBColor| if ink.event { EVENT.mix(a) } else { c.mix(a) };
    for s in shapes {
        match s {
            Shape::Spring { a: p, b: q } if ink.springs => {
                let pts = zigzag(view.px(*p), view.px(*q));
                area.draw(&PathElement::new(pts, tint(SPRING).stroke_width(2)))?;
            }
            Shape::Damper { a: p, b: q } if ink.springs => {
                for part in dashpot(view.px(*p), view.px(*q)) {
                    area.draw(&PathElement::new(part, tint(DAMPER).stroke_width(2)))?;
                }
            }
            Shape::Bar { a: p, b: q } => {
                let pts = vec![view.px(*p), view.px(*q)];
                area.draw(&PathElement::new(pts, tint(BAR).stroke_width(4)))?;
            }
            _ => {}
        }
    }
    for s in shapes {
        match s {
            Shape::Pivot { at: p } => draw_pivot(area, view.px(*p), a)?,
            Shape::Mass { at: p, mass, name } => {
                let c = view.px(*p);
                let r = mass_radius(*mass, m_max, r_max);
                area.draw(&Circle::new(c, r, tint(MASS).filled()))?;
                area.draw(&Circle::new(c, r, WHITE.mix(a).stroke_width(1)))?;
                if ink.labels && !name.is_empty() {
                    // away from the middle of the picture, where the mechanism is
                    let (vl, _, vr, _) = view.rect();
                    let right = c.0 >= (vl + vr) / 2;
                    let d = r as i32 + 3;
                    let (x, h) = if right {
                        (c.0 + d, HPos::Left)
                    } else {
                        (c.0 - d, HPos::Right)
                    };
                    // on a white box (≈ 8 px a character at 13 px), readable over bars
                    let wbox = 8 * name.chars().count() as i32 + 4;
                    let x0 = if right { x - 2 } else { x - wbox + 2 };
                    let corners = [(x0, c.1 - d - 16), (x0 + wbox, c.1 - d + 1)];
                    area.draw(&Rectangle::new(corners, WHITE.mix(0.8 * a).filled()))?;
                    let anchor = (h, VPos::Bottom);
                    label(area, name, (x, c.1 - d), 13.0, TEXT.mix(a), anchor)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// A ground pivot: a triangle under the point on a hatched base.
fn draw_pivot<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>, c: (i32, i32), a: f64,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (x, y) = c;
    let tri = vec![(x, y), (x - 8, y + 13), (x + 8, y + 13), (x, y)];
    area.draw(&Polygon::new(tri.clone(), WHITE.mix(a).filled()))?;
    area.draw(&PathElement::new(tri, BAR.mix(a).stroke_width(2)))?;
    area.draw(&PathElement::new(
        vec![(x - 12, y + 13), (x + 12, y + 13)],
        BAR.mix(a).stroke_width(2),
    ))?;
    for k in 0..5 {
        let x0 = x - 10 + 5 * k;
        area.draw(&PathElement::new(
            vec![(x0, y + 13), (x0 - 5, y + 19)],
            GROUND.mix(a).stroke_width(1),
        ))?;
    }
    area.draw(&Circle::new(c, 3, BAR.mix(a).filled()))?;
    Ok(())
}

/// A solid surface along the pixel polyline `pts`, hatched every 10 px on the side of
/// the normal `(−u.1, u.0)` when `below` (screen y grows downwards), else the other side.
fn surface<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>, pts: &[(i32, i32)], below: bool,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.draw(&PathElement::new(pts.to_vec(), GROUND.stroke_width(2)))?;
    let mut carry = 0.0;
    for w in pts.windows(2) {
        let (u, l) = dir(w[0], w[1]);
        let mut s = carry;
        while s < l {
            let p = at(w[0], u, s, 0.0);
            let (n, t) = if below { (8.0, -5.0) } else { (-8.0, -5.0) };
            let q = at(p, u, t, n * if u.0 >= 0.0 { 1.0 } else { -1.0 });
            area.draw(&PathElement::new(vec![p, q], GROUND.stroke_width(1)))?;
            s += 10.0;
        }
        carry = s - l;
    }
    Ok(())
}

/// Draws the static scene into the view's rectangle.
pub fn draw_scene<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>, view: &View, items: &[SceneItem],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (xa, xb) = view.x_range();
    let (ya, yb) = view.y_range();
    for item in items {
        match item {
            SceneItem::Ground { y } => {
                surface(area, &[view.px([xa, *y]), view.px([xb, *y])], true)?;
            }
            SceneItem::GroundCurve { points } => {
                // only the runs inside the view (a curve may leave it at the bottom)
                let inside = |p: &Pt| p[1] >= ya && p[1] <= yb && p[0] >= xa && p[0] <= xb;
                let mut run = Vec::new();
                for p in points.iter().chain(std::iter::once(&[f64::NAN, f64::NAN])) {
                    if inside(p) {
                        run.push(view.px(*p));
                    } else if !run.is_empty() {
                        surface(area, &std::mem::take(&mut run), true)?;
                    }
                }
            }
            SceneItem::Slope { through, angle } => {
                let k = angle.tan();
                let y = |x: f64| through[1] + k * (x - through[0]);
                surface(area, &[view.px([xa, y(xa)]), view.px([xb, y(xb)])], true)?;
            }
            SceneItem::Wall { x, solid } => {
                let pts = [view.px([*x, yb]), view.px([*x, ya])];
                // going down the screen, the normal (−u.1, u.0) points to −x (left)
                surface(area, &pts, matches!(solid, Side::Left))?;
            }
            SceneItem::StopLine { y, label: name } => {
                let (p, q) = (view.px([xa, *y]), view.px([xb, *y]));
                area.draw(&DashedPathElement::new(
                    vec![p, q],
                    8,
                    5,
                    EVENT.mix(0.7).stroke_width(2),
                ))?;
                label(
                    area,
                    name,
                    (q.0 - 4, q.1 - 4),
                    13.0,
                    EVENT.mix(0.9),
                    (HPos::Right, VPos::Bottom),
                )?;
            }
            SceneItem::Segment { a, b, label: name } => {
                let (p, q) = (view.px(*a), view.px(*b));
                area.draw(&PathElement::new(vec![p, q], GROUND.stroke_width(5)))?;
                label(
                    area,
                    name,
                    (q.0 + 6, q.1),
                    13.0,
                    TEXT.mix(1.0),
                    (HPos::Left, VPos::Center),
                )?;
            }
        }
    }
    Ok(())
}

/// A scale bar of a round length (1, 2 or 5 × 10ᵏ m, at most a fifth of the panel) just
/// under the bottom-right corner of the view (in the caption band, clear of the drawing).
pub fn draw_scale_bar<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, view: &View) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (_, _, right, bottom) = view.rect();
    let target = 0.2 * view.rect().2.saturating_sub(view.rect().0) as f64 / view.scale();
    let e = 10f64.powf(target.log10().floor());
    let len = [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * e)
        .find(|&l| l <= target)
        .unwrap_or(e);
    let px = (len * view.scale()).round() as i32;
    let (x1, y) = (right - 12, bottom + 24);
    let x0 = x1 - px;
    let style = TEXT.stroke_width(2);
    area.draw(&PathElement::new(vec![(x0, y), (x1, y)], style))?;
    area.draw(&PathElement::new(vec![(x0, y - 4), (x0, y + 4)], style))?;
    area.draw(&PathElement::new(vec![(x1, y - 4), (x1, y + 4)], style))?;
    let text = format!("{} m", crate::format::format_f64(len));
    label(
        area,
        &text,
        ((x0 + x1) / 2, y - 6),
        13.0,
        TEXT.mix(1.0),
        (HPos::Center, VPos::Bottom),
    )
}
