//! Fixed-point geometry: lengths are integers so that containment and overlap
//! tests are exact. Every conversion from the caller's floats goes through here.

/// A length in fixed-point units of `1 / SCALE` of the caller's length unit.
pub type Len = i64;

/// Fixed-point resolution: 1e-4 of the caller's unit (0.0001 in).
pub const SCALE: f64 = 10_000.0;

/// Largest magnitude a converted length takes: far beyond any real box (7.2e12 of the
/// caller's units), and small enough that sums of a few lengths never overflow.
pub const LEN_LIMIT: Len = 1 << 56;

/// Relative slack used when rounding the caller's floats, so that 4.2 × SCALE
/// (42000.000000000004) is 42000 and not 42001.
const ROUNDING_SLACK: f64 = 1e-6;

/// Converts an item length, rounding up so a placed item never takes less
/// space than it really needs.
pub fn len_ceil(v: f64) -> Len {
    to_fixed(v, f64::ceil)
}

/// Converts an item's side: rounded up, and a positive side to at least one
/// unit, so that no item is placed as taking no space at all (a side of
/// 1e-40 snaps to 0 in [`len_ceil`]; the caller's value is reported back).
pub fn len_side(v: f64) -> Len {
    match len_ceil(v) {
        0 if v > 0.0 => 1,
        l => l,
    }
}

/// Converts a container length, rounding down so an item never sticks out.
pub fn len_floor(v: f64) -> Len {
    to_fixed(v, f64::floor)
}

/// Scales `v`, snapping to the nearest unit when within the rounding slack and
/// otherwise rounding with `direction`; saturates at `LEN_LIMIT` either way.
fn to_fixed(v: f64, direction: fn(f64) -> f64) -> Len {
    let scaled = v * SCALE;
    let nearest = scaled.round();
    let fixed = if (scaled - nearest).abs() <= ROUNDING_SLACK * nearest.abs().max(1.0) {
        nearest as Len
    } else {
        direction(scaled) as Len
    };
    fixed.clamp(-LEN_LIMIT, LEN_LIMIT)
}

/// Converts back to the caller's unit.
pub fn len_to_f64(v: Len) -> f64 {
    v as f64 / SCALE
}

/// Three lengths along x (height, up), y (width) and z (length).
pub type Vec3 = [Len; 3];

/// Volume in the caller's cubic units.
pub fn volume_f64(s: &Vec3) -> f64 {
    len_to_f64(s[0]) * len_to_f64(s[1]) * len_to_f64(s[2])
}

/// An axis-aligned cuboid `[origin, origin + size)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cuboid {
    pub origin: Vec3,
    pub size: Vec3,
}

impl Cuboid {
    /// The corner opposite the origin.
    pub fn end(&self, axis: usize) -> Len {
        self.origin[axis] + self.size[axis]
    }

    /// Its volume in the caller's cubic units.
    pub fn volume(&self) -> f64 {
        volume_f64(&self.size)
    }

    /// True when the two cuboids share interior volume (touching faces do not).
    pub fn overlaps(&self, other: &Cuboid) -> bool {
        (0..3).all(|a| self.origin[a] < other.end(a) && other.origin[a] < self.end(a))
    }

    /// True when `p` lies in the half-open cuboid.
    pub fn contains_point(&self, p: &Vec3) -> bool {
        (0..3).all(|a| self.origin[a] <= p[a] && p[a] < self.end(a))
    }

    /// True when the projection of `p` on the two axes other than `axis` falls
    /// inside this cuboid's face, i.e. a ray from `p` along `axis` can hit it.
    pub fn shadows(&self, p: &Vec3, axis: usize) -> bool {
        (0..3)
            .filter(|&a| a != axis)
            .all(|a| self.origin[a] <= p[a] && p[a] < self.end(a))
    }

    /// Area of contact between the faces of two cuboids that touch along `axis`.
    pub fn face_overlap(&self, other: &Cuboid, axis: usize) -> i128 {
        let mut area: i128 = 1;
        for a in (0..3).filter(|&a| a != axis) {
            let lo = self.origin[a].max(other.origin[a]);
            let hi = self.end(a).min(other.end(a));
            if hi <= lo {
                return 0;
            }
            area *= i128::from(hi - lo);
        }
        area
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_exact_for_decimal_inputs() {
        assert_eq!(len_ceil(4.2), 42_000);
        assert_eq!(len_floor(4.2), 42_000);
        assert_eq!(len_ceil(0.33333), 3_334);
        assert_eq!(len_floor(0.33333), 3_333);
        assert!((len_to_f64(42_000) - 4.2).abs() < 1e-12);
    }

    #[test]
    fn a_positive_side_takes_at_least_one_unit() {
        assert_eq!(len_ceil(1e-40), 0);
        assert_eq!(len_side(1e-40), 1);
        assert_eq!(len_side(5e-324), 1);
        assert_eq!(len_side(0.00004), 1);
        assert_eq!(len_side(4.2), 42_000);
        assert_eq!(len_side(0.0), 0);
    }

    #[test]
    fn huge_lengths_saturate_with_room_for_sums() {
        assert_eq!(len_floor(1e300), LEN_LIMIT);
        assert_eq!(len_ceil(f64::MAX), LEN_LIMIT);
        assert_eq!(len_floor(-1e300), -LEN_LIMIT);
        assert!(LEN_LIMIT.checked_mul(8).is_some());
    }

    #[test]
    fn touching_cuboids_do_not_overlap() {
        let a = Cuboid {
            origin: [0, 0, 0],
            size: [10, 10, 10],
        };
        let b = Cuboid {
            origin: [10, 0, 0],
            size: [10, 10, 10],
        };
        let c = Cuboid {
            origin: [9, 9, 9],
            size: [10, 10, 10],
        };
        assert!(!a.overlaps(&b));
        assert!(a.overlaps(&c));
        assert_eq!(a.face_overlap(&b, 0), 100);
    }
}
