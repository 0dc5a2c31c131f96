//! Item colours: CSS names and `#hex`, colours derived from a refId, the sequence heat
//! map, and the light and dark shades of a cuboid's faces.

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    /// This colour moved `amount` (0..1) of the way towards `other`.
    pub fn mix(self, other: Rgb, amount: f64) -> Rgb {
        let m =
            |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * amount).round() as u8;
        Rgb(m(self.0, other.0), m(self.1, other.1), m(self.2, other.2))
    }
}

const WHITE: Rgb = Rgb(255, 255, 255);
const BLACK: Rgb = Rgb(0, 0, 0);

/// How far each face of a cuboid moves towards white (top, x) or black (sides): a light
/// from above and the left gives the three faces three distinct shades of one colour.
pub const TOP_LIGHTEN: f64 = 0.3;
/// Width (y) faces: darkened slightly.
pub const WIDTH_DARKEN: f64 = 0.1;
/// Length (z) faces: darkened more.
pub const LENGTH_DARKEN: f64 = 0.3;

/// The shade of a face across `axis` (0 = x, top or bottom; 1 = y; 2 = z).
pub fn shade(base: Rgb, axis: usize) -> Rgb {
    match axis {
        0 => base.mix(WHITE, TOP_LIGHTEN),
        1 => base.mix(BLACK, WIDTH_DARKEN),
        _ => base.mix(BLACK, LENGTH_DARKEN),
    }
}

/// Parses a CSS colour name (case-insensitive) or `#rgb` / `#rrggbb`.
pub fn parse(text: &str) -> Option<Rgb> {
    let text = text.trim();
    if let Some(hex) = text.strip_prefix('#') {
        let digits: Option<Vec<u8>> = hex
            .chars()
            .map(|c| c.to_digit(16).and_then(|d| u8::try_from(d).ok()))
            .collect();
        return match digits?.as_slice() {
            [r, g, b] => Some(Rgb(r * 17, g * 17, b * 17)),
            [r1, r2, g1, g2, b1, b2] => Some(Rgb(r1 * 16 + r2, g1 * 16 + g2, b1 * 16 + b2)),
            _ => None,
        };
    }
    let lower = text.to_ascii_lowercase();
    NAMED
        .binary_search_by(|(name, _)| name.cmp(&lower.as_str()))
        .ok()
        .and_then(|i| NAMED.get(i))
        .map(|&(_, v)| Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8))
}

/// A colour of its own for each refId, the same on every run: hues a golden angle
/// apart, so neighbouring refIds look clearly different.
pub fn for_ref_id(ref_id: i64) -> Rgb {
    let hue = (ref_id.rem_euclid(360) as f64 * 137.507_764).rem_euclid(360.0);
    hsl(hue, 0.55, 0.55)
}

/// Heat-map colour of rank `rank` of `count` sequence values: light for the highest,
/// dark for the lowest, in one hue so only lightness carries the meaning.
pub fn heat(rank: usize, count: usize) -> Rgb {
    let t = if count > 1 {
        rank as f64 / (count - 1) as f64
    } else {
        1.0
    };
    hsl(14.0, 0.85, 0.25 + 0.55 * t)
}

/// Colour of items without a sequence in the heat map.
pub const NO_SEQUENCE: Rgb = Rgb(0xbb, 0xbb, 0xbb);

fn hsl(h: f64, s: f64, l: f64) -> Rgb {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = h / 60.0;
    let x = c * (1.0 - (hp.rem_euclid(2.0) - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let to = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    Rgb(to(r), to(g), to(b))
}

/// The CSS named colours, sorted by name for binary search.
const NAMED: &[(&str, u32)] = &[
    ("aliceblue", 0xf0f8ff),
    ("antiquewhite", 0xfaebd7),
    ("aqua", 0x00ffff),
    ("aquamarine", 0x7fffd4),
    ("azure", 0xf0ffff),
    ("beige", 0xf5f5dc),
    ("bisque", 0xffe4c4),
    ("black", 0x000000),
    ("blanchedalmond", 0xffebcd),
    ("blue", 0x0000ff),
    ("blueviolet", 0x8a2be2),
    ("brown", 0xa52a2a),
    ("burlywood", 0xdeb887),
    ("cadetblue", 0x5f9ea0),
    ("chartreuse", 0x7fff00),
    ("chocolate", 0xd2691e),
    ("coral", 0xff7f50),
    ("cornflowerblue", 0x6495ed),
    ("cornsilk", 0xfff8dc),
    ("crimson", 0xdc143c),
    ("cyan", 0x00ffff),
    ("darkblue", 0x00008b),
    ("darkcyan", 0x008b8b),
    ("darkgoldenrod", 0xb8860b),
    ("darkgray", 0xa9a9a9),
    ("darkgreen", 0x006400),
    ("darkgrey", 0xa9a9a9),
    ("darkkhaki", 0xbdb76b),
    ("darkmagenta", 0x8b008b),
    ("darkolivegreen", 0x556b2f),
    ("darkorange", 0xff8c00),
    ("darkorchid", 0x9932cc),
    ("darkred", 0x8b0000),
    ("darksalmon", 0xe9967a),
    ("darkseagreen", 0x8fbc8f),
    ("darkslateblue", 0x483d8b),
    ("darkslategray", 0x2f4f4f),
    ("darkslategrey", 0x2f4f4f),
    ("darkturquoise", 0x00ced1),
    ("darkviolet", 0x9400d3),
    ("deeppink", 0xff1493),
    ("deepskyblue", 0x00bfff),
    ("dimgray", 0x696969),
    ("dimgrey", 0x696969),
    ("dodgerblue", 0x1e90ff),
    ("firebrick", 0xb22222),
    ("floralwhite", 0xfffaf0),
    ("forestgreen", 0x228b22),
    ("fuchsia", 0xff00ff),
    ("gainsboro", 0xdcdcdc),
    ("ghostwhite", 0xf8f8ff),
    ("gold", 0xffd700),
    ("goldenrod", 0xdaa520),
    ("gray", 0x808080),
    ("green", 0x008000),
    ("greenyellow", 0xadff2f),
    ("grey", 0x808080),
    ("honeydew", 0xf0fff0),
    ("hotpink", 0xff69b4),
    ("indianred", 0xcd5c5c),
    ("indigo", 0x4b0082),
    ("ivory", 0xfffff0),
    ("khaki", 0xf0e68c),
    ("lavender", 0xe6e6fa),
    ("lavenderblush", 0xfff0f5),
    ("lawngreen", 0x7cfc00),
    ("lemonchiffon", 0xfffacd),
    ("lightblue", 0xadd8e6),
    ("lightcoral", 0xf08080),
    ("lightcyan", 0xe0ffff),
    ("lightgoldenrodyellow", 0xfafad2),
    ("lightgray", 0xd3d3d3),
    ("lightgreen", 0x90ee90),
    ("lightgrey", 0xd3d3d3),
    ("lightpink", 0xffb6c1),
    ("lightsalmon", 0xffa07a),
    ("lightseagreen", 0x20b2aa),
    ("lightskyblue", 0x87cefa),
    ("lightslategray", 0x778899),
    ("lightslategrey", 0x778899),
    ("lightsteelblue", 0xb0c4de),
    ("lightyellow", 0xffffe0),
    ("lime", 0x00ff00),
    ("limegreen", 0x32cd32),
    ("linen", 0xfaf0e6),
    ("magenta", 0xff00ff),
    ("maroon", 0x800000),
    ("mediumaquamarine", 0x66cdaa),
    ("mediumblue", 0x0000cd),
    ("mediumorchid", 0xba55d3),
    ("mediumpurple", 0x9370db),
    ("mediumseagreen", 0x3cb371),
    ("mediumslateblue", 0x7b68ee),
    ("mediumspringgreen", 0x00fa9a),
    ("mediumturquoise", 0x48d1cc),
    ("mediumvioletred", 0xc71585),
    ("midnightblue", 0x191970),
    ("mintcream", 0xf5fffa),
    ("mistyrose", 0xffe4e1),
    ("moccasin", 0xffe4b5),
    ("navajowhite", 0xffdead),
    ("navy", 0x000080),
    ("oldlace", 0xfdf5e6),
    ("olive", 0x808000),
    ("olivedrab", 0x6b8e23),
    ("orange", 0xffa500),
    ("orangered", 0xff4500),
    ("orchid", 0xda70d6),
    ("palegoldenrod", 0xeee8aa),
    ("palegreen", 0x98fb98),
    ("paleturquoise", 0xafeeee),
    ("palevioletred", 0xdb7093),
    ("papayawhip", 0xffefd5),
    ("peachpuff", 0xffdab9),
    ("peru", 0xcd853f),
    ("pink", 0xffc0cb),
    ("plum", 0xdda0dd),
    ("powderblue", 0xb0e0e6),
    ("purple", 0x800080),
    ("rebeccapurple", 0x663399),
    ("red", 0xff0000),
    ("rosybrown", 0xbc8f8f),
    ("royalblue", 0x4169e1),
    ("saddlebrown", 0x8b4513),
    ("salmon", 0xfa8072),
    ("sandybrown", 0xf4a460),
    ("seagreen", 0x2e8b57),
    ("seashell", 0xfff5ee),
    ("sienna", 0xa0522d),
    ("silver", 0xc0c0c0),
    ("skyblue", 0x87ceeb),
    ("slateblue", 0x6a5acd),
    ("slategray", 0x708090),
    ("slategrey", 0x708090),
    ("snow", 0xfffafa),
    ("springgreen", 0x00ff7f),
    ("steelblue", 0x4682b4),
    ("tan", 0xd2b48c),
    ("teal", 0x008080),
    ("thistle", 0xd8bfd8),
    ("tomato", 0xff6347),
    ("turquoise", 0x40e0d0),
    ("violet", 0xee82ee),
    ("wheat", 0xf5deb3),
    ("white", 0xffffff),
    ("whitesmoke", 0xf5f5f5),
    ("yellow", 0xffff00),
    ("yellowgreen", 0x9acd32),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_hex() {
        assert_eq!(parse("#FF8000"), Some(Rgb(255, 128, 0)));
        assert_eq!(parse("#f80"), Some(Rgb(255, 136, 0)));
        assert_eq!(parse("CornflowerBlue"), Some(Rgb(0x64, 0x95, 0xed)));
        assert_eq!(parse("yellowgreen"), Some(Rgb(0x9a, 0xcd, 0x32)));
        assert_eq!(parse("aliceblue"), Some(Rgb(0xf0, 0xf8, 0xff)));
        assert_eq!(parse("notacolour"), None);
        assert_eq!(parse("#12345"), None);
        assert_eq!(parse("#gg0000"), None);
    }

    #[test]
    fn faces_get_three_distinct_shades() {
        let base = Rgb(100, 150, 200);
        assert_eq!(shade(base, 0), Rgb(147, 182, 217));
        assert_eq!(shade(base, 1), Rgb(90, 135, 180));
        assert_eq!(shade(base, 2), Rgb(70, 105, 140));
    }

    #[test]
    fn derived_colours_are_stable_and_differ_between_neighbours() {
        assert_eq!(for_ref_id(7), for_ref_id(7));
        assert_ne!(for_ref_id(1), for_ref_id(2));
        assert_ne!(for_ref_id(-1), for_ref_id(1));
    }

    #[test]
    fn heat_map_is_light_for_high_and_dark_for_low() {
        let lum = |c: Rgb| u32::from(c.0) + u32::from(c.1) + u32::from(c.2);
        assert!(lum(heat(4, 5)) > lum(heat(2, 5)));
        assert!(lum(heat(2, 5)) > lum(heat(0, 5)));
    }
}
