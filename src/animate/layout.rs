//! The sheet of a picture or an animation: one panel per motion side by side, a title
//! band, a caption band, and one world box and scale shared by all panels (so that the
//! initial and the optimized motion compare at a glance).

use super::canvas::{self, draw_scene, Bounds, View, PATH, TEXT};
use super::geometry::{SceneItem, Shape};
use super::motion::Motion;
use crate::error::Error;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// Height of the title band (px).
pub const TITLE_H: u32 = 34;
/// Height of each panel's subtitle band (px).
pub const SUBTITLE_H: u32 = 24;
/// Height of the caption band (px).
pub const CAPTION_H: u32 = 44;

/// Where every panel goes and how big the discs are.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The world box every panel shows (padded).
    pub world: Bounds,
    /// Pixel size of one panel's drawing (without the bands).
    pub panel: (u32, u32),
    /// Number of panels side by side.
    pub panels: usize,
    /// The heaviest mass drawn and the radius (px) of its disc.
    pub m_max: f64,
    pub r_max: f64,
}

impl Layout {
    /// The layout for `motions` whose shapes at the drawn instants are `shapes` (all
    /// panels, all instants) and whose mass paths are `paths`: the world box around all
    /// of them and around the scene's lines, with panels `width` px wide and as high as
    /// the box's aspect asks (between 0.5 and 1.3 times the width).
    pub fn new(
        motions: &[&Motion<'_>], shapes: &[&[Shape]], paths: &[[f64; 2]], width: u32,
    ) -> Result<Layout, Error> {
        let points = shapes
            .iter()
            .flat_map(|s| s.iter().flat_map(Shape::points))
            .chain(paths.iter().copied());
        let moving = Bounds::around(points).ok_or_else(|| {
            Error::Invalid("nothing to draw: the geometry gave no finite point".into())
        })?;
        let mut world = moving;
        for m in motions {
            for item in m.scene(moving.padded(0.1, 0.1).x) {
                world = include(world, &item, moving);
            }
        }
        let world = world.padded(0.08, 0.08);
        let aspect = (world.height() / world.width()).clamp(0.5, 1.3);
        let h = (width as f64 * aspect).round() as u32;
        let m_max = shapes
            .iter()
            .flat_map(|s| s.iter())
            .filter_map(|s| match s {
                Shape::Mass { mass, .. } if mass.is_finite() => Some(*mass),
                _ => None,
            })
            .fold(0.0, f64::max);
        let r_max = (0.028 * width.min(h) as f64).clamp(4.0, 13.0);
        Ok(Layout {
            world,
            panel: (width, h),
            panels: motions.len().max(1),
            m_max,
            r_max,
        })
    }

    /// Pixel size of the whole sheet.
    pub fn size(&self) -> (u32, u32) {
        (
            self.panel.0 * self.panels as u32,
            TITLE_H + SUBTITLE_H + self.panel.1 + CAPTION_H,
        )
    }

    /// The view of panel `i`: the world box fitted inside the panel less a margin of the
    /// largest disc's radius plus 6 px (so that no disc is cut at the edge).
    pub fn view(&self, i: usize) -> View {
        let m = (self.r_max + 6.0).round() as u32;
        let inner = View::fit(
            self.world,
            (i as u32 * self.panel.0 + m) as i32,
            (TITLE_H + SUBTITLE_H + m) as i32,
            self.panel.0.saturating_sub(2 * m).max(1),
            self.panel.1.saturating_sub(2 * m).max(1),
        );
        inner.widened(m)
    }
}

/// `b` grown to show the scene item (a ground curve only where it runs under the moving
/// parts, so that a steep curve does not shrink the picture).
fn include(b: Bounds, item: &SceneItem, moving: Bounds) -> Bounds {
    match item {
        SceneItem::Ground { y } | SceneItem::StopLine { y, .. } => b.with_y(*y),
        SceneItem::Wall { x, .. } => b.with_x(*x),
        SceneItem::Slope { through, .. } => b.with_x(through[0]).with_y(through[1]),
        SceneItem::Segment { a, b: e, .. } => b.with_x(a[0]).with_y(a[1]).with_x(e[0]).with_y(e[1]),
        SceneItem::GroundCurve { points } => points
            .iter()
            .filter(|p| p[0] >= moving.x.0 && p[0] <= moving.x.1)
            .fold(b, |b, p| b.with_y(p[1])),
    }
}

/// Opens panel i of a frame or picture: its subtitle (font size `size`) centred in the band
/// above, and the motion's static scene; returns the panel's view.
pub fn open_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>, layout: &Layout, i: usize, subtitle: &str, size: f64,
    m: &Motion<'_>,
) -> Result<View, Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let view = layout.view(i);
    let (left, top, right, _) = view.rect();
    canvas::label(
        root,
        subtitle,
        ((left + right) / 2, top - SUBTITLE_H as i32 + 2),
        size,
        TEXT.mix(1.0),
        (HPos::Center, VPos::Top),
    )?;
    draw_scene(root, &view, &m.scene(view.x_range()))?;
    Ok(view)
}

/// Draws a motion's path (world points) as a thin line in the view.
pub fn draw_path<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>, view: &View, points: &[[f64; 2]],
) -> canvas::DrawResult
where
    DB::ErrorType: 'static,
{
    let pts: Vec<_> = points.iter().map(|p| view.px(*p)).collect();
    root.draw(&PathElement::new(pts, PATH.stroke_width(1)))?;
    Ok(())
}
