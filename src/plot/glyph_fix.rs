//! Works around a text-placement bug of plotters 0.3.7's `ab_glyph` font backend.
//!
//! Plotters draws each glyph's bitmap at the pen position, dropping the glyph's left side
//! bearing (`xMin`), so narrow glyphs with a large bearing sit too far left ("1 0" for
//! "10", "heig ht"). Plotters does add the font's pair kerning between glyphs, so the
//! bearing is restored through kerning: for every pair of common glyphs the `kern` table
//! gets `kern(a, b) + xMin(b) - xMin(a)` (font units). Then glyph `i` lands at
//! `pen_i + xMin_i - xMin_0`: correct up to a constant shift of the whole string by the
//! first glyph's bearing (a pixel or so). Other pairs keep the font's own kerning.
//!
//! The patched font is the original with only the `kern` table replaced. Any parsing
//! surprise returns `None` and the original font is used unchanged.

use std::collections::BTreeMap;

fn u16_at(d: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_be_bytes(d.get(o..o + 2)?.try_into().ok()?))
}
fn i16_at(d: &[u8], o: usize) -> Option<i16> {
    Some(i16::from_be_bytes(d.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(d: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_be_bytes(d.get(o..o + 4)?.try_into().ok()?))
}

struct Tables<'a> {
    font: &'a [u8],
    /// (tag, offset, length), in directory order.
    dir: Vec<([u8; 4], usize, usize)>,
}

impl<'a> Tables<'a> {
    fn parse(font: &'a [u8]) -> Option<Tables<'a>> {
        let n = u16_at(font, 4)? as usize;
        let mut dir = Vec::with_capacity(n);
        for i in 0..n {
            let r = 12 + 16 * i;
            let tag: [u8; 4] = font.get(r..r + 4)?.try_into().ok()?;
            let off = u32_at(font, r + 8)? as usize;
            let len = u32_at(font, r + 12)? as usize;
            font.get(off..off.checked_add(len)?)?;
            dir.push((tag, off, len));
        }
        Some(Tables { font, dir })
    }
    fn get(&self, tag: &[u8; 4]) -> Option<&'a [u8]> {
        let &(_, off, len) = self.dir.iter().find(|t| &t.0 == tag)?;
        self.font.get(off..off + len)
    }
}

/// Glyph id of `c` from a Unicode BMP cmap subtable of format 4.
fn cmap4_lookup(sub: &[u8], c: u32) -> Option<u16> {
    if c > 0xFFFF {
        return None;
    }
    let c = c as u16;
    let seg_x2 = u16_at(sub, 6)? as usize;
    let ends = 14;
    let starts = ends + seg_x2 + 2;
    let deltas = starts + seg_x2;
    let range_offsets = deltas + seg_x2;
    for i in 0..seg_x2 / 2 {
        let end = u16_at(sub, ends + 2 * i)?;
        if c > end {
            continue;
        }
        let start = u16_at(sub, starts + 2 * i)?;
        if c < start {
            return None;
        }
        let delta = u16_at(sub, deltas + 2 * i)?;
        let ro = u16_at(sub, range_offsets + 2 * i)? as usize;
        if ro == 0 {
            return Some(c.wrapping_add(delta));
        }
        let at = range_offsets + 2 * i + ro + 2 * (c - start) as usize;
        let g = u16_at(sub, at)?;
        return if g == 0 {
            None
        } else {
            Some(g.wrapping_add(delta))
        };
    }
    None
}

/// Characters whose pairs are corrected (at most 250 distinct glyphs, so that the
/// pairs fit in one kern subtable): ASCII, Latin-1, Greek and common math symbols.
fn charset() -> Vec<u32> {
    let mut cs: Vec<u32> = (0x20..0x7F).collect();
    cs.extend(0xA0..=0xFF);
    cs.extend(0x3B1..=0x3C9); // α..ω
    cs.extend([
        0x393, 0x394, 0x398, 0x39B, 0x39E, 0x3A0, 0x3A3, 0x3A6, 0x3A8, 0x3A9,
    ]);
    cs.extend([
        0x2013, 0x2014, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2026, 0x2032, 0x2033, 0x2070,
        0x2074, 0x2075, 0x2076, 0x2077, 0x2078, 0x2079, 0x207A, 0x207B, 0x2080, 0x2081, 0x2082,
        0x2083, 0x2084, 0x2190, 0x2192, 0x2202, 0x2207, 0x2211, 0x2212, 0x221A, 0x221E, 0x222B,
        0x2248, 0x2260, 0x2264, 0x2265, 0x22C5,
    ]);
    cs
}

/// The font with its `kern` table replaced (module docs), or `None` on any parsing surprise.
pub fn patch(font: &[u8]) -> Option<Vec<u8>> {
    let t = Tables::parse(font)?;
    let outlines = Outlines::of(&t)?;
    let sub = unicode_cmap4(&t)?;
    let mut pairs = font_kerning(&t)?;
    let mut glyphs: Vec<(u16, i32)> = Vec::new();
    for c in charset() {
        if let Some(g) = cmap4_lookup(sub, c) {
            if g != 0 && !glyphs.iter().any(|&(h, _)| h == g) && glyphs.len() < 250 {
                glyphs.push((g, outlines.x_min(g)?));
            }
        }
    }
    // kern(a, b) + xMin(b) − xMin(a) for every pair of the charset's glyphs
    for &(a, xa) in &glyphs {
        for &(b, xb) in &glyphs {
            let key = (a as u32) << 16 | b as u32;
            *pairs.entry(key).or_insert(0) += xb - xa;
        }
    }
    pairs.retain(|_, v| *v != 0);
    if pairs.len() > u16::MAX as usize {
        return None;
    }
    let kern = kern_table(&pairs);
    reassemble(font, &t, &kern)
}

/// The glyph outlines' `loca` index into `glyf`, for the glyphs' `xMin`.
struct Outlines<'a> {
    long_loca: bool,
    num_glyphs: usize,
    loca: &'a [u8],
    glyf: &'a [u8],
}

impl<'a> Outlines<'a> {
    fn of(t: &Tables<'a>) -> Option<Self> {
        Some(Outlines {
            long_loca: i16_at(t.get(b"head")?, 50)? != 0,
            num_glyphs: u16_at(t.get(b"maxp")?, 4)? as usize,
            loca: t.get(b"loca")?,
            glyf: t.get(b"glyf")?,
        })
    }

    /// The left side bearing `xMin` of glyph g (0 for a glyph without outline, e.g. space).
    fn x_min(&self, g: u16) -> Option<i32> {
        let g = g as usize;
        if g >= self.num_glyphs {
            return None;
        }
        let (a, b) = if self.long_loca {
            (
                u32_at(self.loca, 4 * g)? as usize,
                u32_at(self.loca, 4 * g + 4)? as usize,
            )
        } else {
            (
                2 * u16_at(self.loca, 2 * g)? as usize,
                2 * u16_at(self.loca, 2 * g + 2)? as usize,
            )
        };
        if b <= a {
            return Some(0); // no outline: nothing is drawn
        }
        Some(i16_at(self.glyf, a + 2)? as i32)
    }
}

/// A Unicode format-4 cmap subtable.
fn unicode_cmap4<'a>(t: &Tables<'a>) -> Option<&'a [u8]> {
    let cmap = t.get(b"cmap")?;
    for i in 0..u16_at(cmap, 2)? as usize {
        let platform = u16_at(cmap, 4 + 8 * i)?;
        let encoding = u16_at(cmap, 6 + 8 * i)?;
        let off = u32_at(cmap, 8 + 8 * i)? as usize;
        let unicode = platform == 0 || (platform == 3 && encoding == 1);
        if unicode && u16_at(cmap, off)? == 4 {
            return cmap.get(off..);
        }
    }
    None
}

/// The font's own pair kerning (format 0, horizontal subtables of a version-0 table), keyed
/// by `left << 16 | right`; `None` for an Apple-style table (not handled).
fn font_kerning(t: &Tables<'_>) -> Option<BTreeMap<u32, i32>> {
    let mut pairs = BTreeMap::new();
    let Some(kern) = t.get(b"kern") else {
        return Some(pairs);
    };
    if u16_at(kern, 0)? != 0 {
        return None;
    }
    let mut o = 4;
    for _ in 0..u16_at(kern, 2)? {
        let len = u16_at(kern, o + 2)? as usize;
        let coverage = u16_at(kern, o + 4)?;
        if coverage >> 8 == 0 && coverage & 1 == 1 {
            let n = u16_at(kern, o + 6)? as usize;
            for k in 0..n {
                let p = o + 14 + 6 * k;
                pairs
                    .entry(u32_at(kern, p)?)
                    .or_insert(i16_at(kern, p + 4)? as i32);
            }
        }
        o += len;
    }
    Some(pairs)
}

/// The binary-search fields of an OpenType table header for `n` entries: the largest power
/// of two `pow ≤ max(n, 1)` and its log₂.
fn search_range(n: usize) -> (usize, u16) {
    let mut pow = 1usize;
    let mut log = 0u16;
    while pow * 2 <= n.max(1) {
        pow *= 2;
        log += 1;
    }
    (pow, log)
}

/// A kern table: version 0, one format-0 horizontal subtable with the sorted pairs. (With a
/// single subtable its 16-bit length field is not used by parsers, so it may overflow.)
fn kern_table(pairs: &BTreeMap<u32, i32>) -> Vec<u8> {
    let n = pairs.len();
    let mut kern = Vec::with_capacity(18 + 6 * n);
    let (pow, log) = search_range(n);
    let sub_len = (14 + 6 * n).min(u16::MAX as usize) as u16;
    for v in [0u16, 1, 0, sub_len, 0x0001, n as u16, (6 * pow) as u16, log] {
        kern.extend_from_slice(&v.to_be_bytes());
    }
    kern.extend_from_slice(&((6 * (n - pow.min(n))) as u16).to_be_bytes());
    for (key, &v) in pairs {
        kern.extend_from_slice(&key.to_be_bytes());
        kern.extend_from_slice(&(v.clamp(i16::MIN as i32, i16::MAX as i32) as i16).to_be_bytes());
    }
    kern
}

/// A table's checksum: the wrapping sum of its big-endian 32-bit words (zero-padded).
fn checksum(data: &[u8]) -> u32 {
    data.chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_be_bytes(w)
        })
        .fold(0u32, u32::wrapping_add)
}

/// The font with `kern` in place of its kern table (tables sorted by tag, 4-aligned, with
/// their checksums).
fn reassemble(font: &[u8], t: &Tables<'_>, kern: &[u8]) -> Option<Vec<u8>> {
    let mut tables: Vec<([u8; 4], &[u8])> = t
        .dir
        .iter()
        .filter(|d| &d.0 != b"kern")
        .map(|d| (d.0, &font[d.1..d.1 + d.2]))
        .collect();
    tables.push((*b"kern", kern));
    tables.sort_by_key(|x| x.0);
    let num = tables.len();
    let (pow, log) = search_range(num);
    let mut out = Vec::with_capacity(font.len() + kern.len());
    out.extend_from_slice(font.get(0..4)?); // sfnt version
    for v in [
        num as u16,
        (16 * pow) as u16,
        log,
        (16 * (num - pow)) as u16,
    ] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    let mut offset = 12 + 16 * num;
    let mut body = Vec::new();
    for (tag, data) in &tables {
        out.extend_from_slice(tag);
        out.extend_from_slice(&checksum(data).to_be_bytes());
        out.extend_from_slice(&(offset as u32).to_be_bytes());
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        body.extend_from_slice(data);
        while body.len() % 4 != 0 {
            body.push(0);
        }
        offset = 12 + 16 * num + body.len();
    }
    out.extend_from_slice(&body);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glyph(t: &Tables<'_>, c: char) -> u16 {
        cmap4_lookup(unicode_cmap4(t).unwrap(), c as u32).unwrap()
    }

    fn kern_of(t: &Tables<'_>, a: u16, b: u16) -> i32 {
        let pairs = font_kerning(t).unwrap();
        pairs
            .get(&((a as u32) << 16 | b as u32))
            .copied()
            .unwrap_or(0)
    }

    /// The patched font keeps every other table byte for byte, and its kerning of a pair is
    /// the original kerning plus `xMin(b) − xMin(a)` (module docs).
    #[test]
    fn patched_kerning_restores_the_side_bearings() {
        let font = dejavu::sans::regular();
        let patched = patch(font).expect("DejaVu Sans is patched");
        let (orig, new) = (
            Tables::parse(font).unwrap(),
            Tables::parse(&patched).unwrap(),
        );
        for &(tag, _, _) in orig.dir.iter().filter(|d| &d.0 != b"kern") {
            assert_eq!(orig.get(&tag), new.get(&tag), "table {:?}", tag);
        }
        let outlines = Outlines::of(&orig).unwrap();
        let mut corrected = 0;
        for (a, b) in [('1', '0'), ('h', 't'), ('A', 'V'), ('θ', '='), ('i', 'l')] {
            let (ga, gb) = (glyph(&orig, a), glyph(&orig, b));
            let want =
                kern_of(&orig, ga, gb) + outlines.x_min(gb).unwrap() - outlines.x_min(ga).unwrap();
            assert_eq!(kern_of(&new, ga, gb), want, "pair {a}{b}");
            corrected += (want != kern_of(&orig, ga, gb)) as usize;
        }
        assert!(
            corrected >= 3,
            "the bearings differ for most pairs: {corrected}"
        );
    }

    /// Each table's directory checksum is the wrapping sum of its big-endian words.
    #[test]
    fn directory_checksums_match_the_tables() {
        let patched = patch(dejavu::sans::bold()).unwrap();
        let t = Tables::parse(&patched).unwrap();
        for (i, &(tag, off, len)) in t.dir.iter().enumerate() {
            // an independent word sum (the words of a 4-aligned table in the file)
            let mut sum = 0u32;
            for w in (off..off + len).step_by(4) {
                let mut word = [0u8; 4];
                for (i, b) in word.iter_mut().enumerate() {
                    *b = if w + i < off + len { patched[w + i] } else { 0 };
                }
                sum = sum.wrapping_add(u32::from_be_bytes(word));
            }
            assert_eq!(u32_at(&patched, 12 + 16 * i + 4), Some(sum), "{tag:?}");
            assert_eq!(off % 4, 0, "{tag:?} is 4-aligned");
        }
        assert_eq!(search_range(1), (1, 0));
        assert_eq!(search_range(19), (16, 4));
    }
}
