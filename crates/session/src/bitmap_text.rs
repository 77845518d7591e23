//! A bitmap backend for plots whose text is drawn with each glyph at its side bearing.
//!
//! plotters 0.3 rasterises a glyph at the pen position without the glyph's left side
//! bearing, so a narrow glyph drawn in a wide advance ("1" among the digits) sits against
//! its left neighbour and leaves a gap after it: "4613" reads "461 3". This wrapper passes
//! every drawing call through and lays the text out itself (same anchor, size and vertical
//! placement as plotters), with the same font the plots register.

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters::prelude::*;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
    text_anchor::{HPos, VPos},
};

/// `B` with text drawn glyph by glyph at the right places (see the module's note).
pub struct BitmapText<B>(pub B);

/// Calls `put(x, y, coverage)` for each pixel of `text` at `size`, laid out from (0, 0) as
/// plotters lays it out, each glyph at its pen position plus its bearing.
fn rasterise(font: &FontRef<'static>, size: f32, text: &str, mut put: impl FnMut(i32, i32, f32)) {
    let scaled = font.as_scaled(size);
    let mut pen = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = prev {
            pen += scaled.kern(p, id);
        }
        prev = Some(id);
        let glyph = id.with_scale_and_position(size, ab_glyph::point(pen, 0.0));
        if let Some(outline) = scaled.outline_glyph(glyph) {
            let bounds = outline.px_bounds();
            let (x0, y0) = (bounds.min.x as i32, (size / 2.0 + bounds.min.y) as i32);
            outline.draw(|x, y, a| put(x0 + x as i32, y0 + y as i32, a));
        }
        pen += scaled.h_advance(id);
    }
}

impl<B: DrawingBackend> DrawingBackend for BitmapText<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.blit_bitmap(pos, size, src)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        let Some(font) = label_font_face() else {
            return self.0.draw_text(text, style, pos);
        };
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.get_size();
        let mut result = Ok(());
        rasterise(font, style.size() as f32, text, |x, y, a| {
            let (x, y) = transform.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if result.is_ok() && (0..w as i32).contains(&x) && (0..h as i32).contains(&y) {
                let mixed = BackendColor {
                    alpha: color.alpha * a as f64,
                    rgb: color.rgb,
                };
                result = self.0.draw_pixel((x, y), mixed);
            }
        });
        result
    }
}

/// A TrueType font for the labels, registered as "sans-serif" if the system has one (labels
/// are left out otherwise); other plots call it too.
pub fn label_font() -> bool {
    label_font_face().is_some()
}

/// The labels' font (see `label_font`), for `bitmap_text` to lay glyphs out with.
pub fn label_font_face() -> Option<&'static ab_glyph::FontRef<'static>> {
    static FOUND: std::sync::OnceLock<Option<ab_glyph::FontRef<'static>>> =
        std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            const CANDIDATES: [&str; 4] = [
                "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/TTF/DejaVuSans.ttf",
                "/usr/share/fonts/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
            ];
            CANDIDATES.iter().find_map(|p| {
                let bytes: &'static [u8] = Box::leak(std::fs::read(p).ok()?.into_boxed_slice());
                let face = ab_glyph::FontRef::try_from_slice(bytes).ok()?;
                plotters::style::register_font(
                    "sans-serif",
                    plotters::style::FontStyle::Normal,
                    bytes,
                )
                .ok()
                .map(|()| face)
            })
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The widths of the blank column runs between the inked glyphs of `text` drawn at
    /// `size` through `BitmapText`.
    fn gaps(text: &str, size: f64) -> Vec<usize> {
        let (w, h) = (200u32, 40u32);
        let mut buffer = vec![255u8; (w * h * 3) as usize];
        {
            let root =
                BitmapText(BitMapBackend::with_buffer(&mut buffer, (w, h))).into_drawing_area();
            root.draw(&Text::new(text, (5, 5), ("sans-serif", size).into_font()))
                .unwrap();
            root.present().unwrap();
        }
        let inked: Vec<bool> = (0..w as usize)
            .map(|x| (0..h as usize).any(|y| buffer[(y * w as usize + x) * 3] < 160))
            .collect();
        let first = inked.iter().position(|&i| i).expect("the text is drawn");
        let last = inked.iter().rposition(|&i| i).unwrap();
        let mut runs = Vec::new();
        let mut run = 0;
        for &i in &inked[first..=last] {
            match (i, run) {
                (true, 0) => {}
                (true, r) => {
                    runs.push(r);
                    run = 0;
                }
                (false, _) => run += 1,
            }
        }
        runs
    }

    #[test]
    fn a_one_among_digits_keeps_its_even_spacing() {
        if label_font_face().is_none() {
            eprintln!("no label font on this system: nothing to lay out");
            return;
        }
        // Tabular digits: the same advance each, "1" narrow and centred in it. Laid out
        // without its bearing it sat against the "6" and left a 4-pixel gap before the "3".
        for size in [13.0, 15.0, 24.0] {
            let runs = gaps("4613", size);
            assert_eq!(runs.len(), 3, "{size}: {runs:?}");
            let (least, most) = (runs.iter().min().unwrap(), runs.iter().max().unwrap());
            let spread = most - least;
            assert!(spread <= 2, "size {size}: gaps {runs:?}");
        }
    }
}
