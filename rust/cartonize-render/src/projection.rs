//! Orthographic projection seen from `eye`: screen axes, depth, cuboid corners.
//!
//! World axes: x = height (up), y = width, z = length (right-handed). The camera looks
//! along `-eye`; screen up is the world's up (x) as far as the eye allows.

/// Below this a vector counts as zero: eye components and degenerate screen axes.
pub const EPS: f64 = 1e-9;

/// An axis-aligned cuboid: `lo` corner and `hi` corner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cuboid {
    /// Minimum corner.
    pub lo: [f64; 3],
    /// Maximum corner.
    pub hi: [f64; 3],
}

impl Cuboid {
    /// The cuboid from an origin corner and extents.
    pub fn new(origin: [f64; 3], dimensions: [f64; 3]) -> Self {
        Cuboid {
            lo: origin,
            hi: [
                origin[0] + dimensions[0],
                origin[1] + dimensions[1],
                origin[2] + dimensions[2],
            ],
        }
    }
}

/// A camera: unit view direction `dir` (towards the viewer) and screen axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Unit vector from the scene towards the viewer; larger `p·dir` is nearer.
    pub dir: [f64; 3],
    right: [f64; 3],
    up: [f64; 3],
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Cross product.
pub fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn normalised(v: [f64; 3]) -> Option<[f64; 3]> {
    let n = dot(v, v).sqrt();
    (n > EPS).then(|| [v[0] / n, v[1] / n, v[2] / n])
}

impl Camera {
    /// The camera looking from `eye`; a zero or non-finite eye falls back to (1,1,1).
    pub fn new(eye: [f64; 3]) -> Self {
        // Only the direction counts: scaled so that its largest component is 1 first,
        // an eye of 1e200 (whose squared length overflows) or 1e-300 (underflows)
        // looks the same way as (1, 1, 1) or (1, 0, 0).
        let largest = eye.iter().fold(0.0f64, |m, c| m.max(c.abs()));
        let dir = if eye.iter().all(|c| c.is_finite()) && largest > 0.0 {
            normalised(eye.map(|c| c / largest))
        } else {
            None
        }
        .unwrap_or([1.0 / 3f64.sqrt(); 3]);
        // Screen right is up × dir; looking straight down (or up) there is no horizon,
        // so width (y) is taken as screen right instead, keeping length (z) vertical.
        let right = normalised(cross([1.0, 0.0, 0.0], dir))
            .or_else(|| normalised(cross([0.0, 0.0, dir[0].signum()], dir)))
            .unwrap_or([0.0, 1.0, 0.0]);
        let up = cross(dir, right);
        Camera { dir, right, up }
    }

    /// Screen coordinates (right, down) of world point `p`, before scaling.
    pub fn project(&self, p: [f64; 3]) -> (f64, f64) {
        (dot(p, self.right), -dot(p, self.up))
    }

    /// Nearness of `p` to the viewer.
    pub fn depth(&self, p: [f64; 3]) -> f64 {
        dot(p, self.dir)
    }

    /// Screen bounding box `(min_x, min_y, max_x, max_y)` of a cuboid.
    pub fn bounds(&self, c: &Cuboid) -> (f64, f64, f64, f64) {
        let mut b = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for corner in corners(c) {
            let (x, y) = self.project(corner);
            b = (b.0.min(x), b.1.min(y), b.2.max(x), b.3.max(y));
        }
        b
    }

    /// The cuboid faces facing the viewer: `(axis, at_hi)` for each axis the eye is not
    /// perpendicular to.
    pub fn visible_faces(&self) -> Vec<(usize, bool)> {
        (0..3)
            .filter(|&a| self.dir[a].abs() > EPS)
            .map(|a| (a, self.dir[a] > 0.0))
            .collect()
    }
}

/// The eight corners of a cuboid.
pub fn corners(c: &Cuboid) -> [[f64; 3]; 8] {
    let mut out = [[0.0; 3]; 8];
    for (i, corner) in out.iter_mut().enumerate() {
        for (a, v) in corner.iter_mut().enumerate() {
            *v = if i & (1 << a) != 0 { c.hi[a] } else { c.lo[a] };
        }
    }
    out
}

/// The four corners of face `(axis, at_hi)` of a cuboid, in order around the face.
pub fn face(c: &Cuboid, axis: usize, at_hi: bool) -> [[f64; 3]; 4] {
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    let mut p = c.lo;
    p[axis] = if at_hi { c.hi[axis] } else { c.lo[axis] };
    let mut out = [p; 4];
    out[1][u] = c.hi[u];
    out[2][u] = c.hi[u];
    out[2][v] = c.hi[v];
    out[3][v] = c.hi[v];
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn only_the_eyes_direction_counts() {
        let unit = Camera::new([1.0, 1.0, 1.0]);
        for eye in [[1e200; 3], [1e-300; 3], [3.0; 3]] {
            let c = Camera::new(eye);
            for a in 0..3 {
                assert!((c.dir[a] - unit.dir[a]).abs() < 1e-12, "{eye:?}");
            }
        }
        let down = Camera::new([1e-300, 0.0, 0.0]);
        assert_eq!(down.dir, [1.0, 0.0, 0.0]);
    }

    #[test]
    fn isometric_view_puts_height_up_and_length_right() {
        let cam = Camera::new([1.0, 1.0, 1.0]);
        let (x0, y0) = cam.project([0.0, 0.0, 0.0]);
        let (_, y_up) = cam.project([1.0, 0.0, 0.0]);
        let (x_len, _) = cam.project([0.0, 0.0, 1.0]);
        let (x_wid, _) = cam.project([0.0, 1.0, 0.0]);
        assert!(y_up < y0, "height goes up the screen (smaller y)");
        assert!(x_len > x0, "length goes right");
        assert!(x_wid < x0, "width goes left");
        // Isometric: the three unit axes project to the same length.
        let len = |p: [f64; 3]| {
            let (x, y) = cam.project(p);
            (x * x + y * y).sqrt()
        };
        assert!(close(len([1.0, 0.0, 0.0]), len([0.0, 1.0, 0.0])));
        assert!(close(len([0.0, 1.0, 0.0]), len([0.0, 0.0, 1.0])));
    }

    #[test]
    fn top_down_view_has_a_screen_and_sees_only_the_top() {
        let cam = Camera::new([1.0, 0.0, 0.0]);
        assert_eq!(cam.visible_faces(), vec![(0, true)]);
        let (xa, ya) = cam.project([0.0, 0.0, 0.0]);
        let (xb, yb) = cam.project([0.0, 1.0, 1.0]);
        assert!(close((xb - xa).abs(), 1.0) && close((yb - ya).abs(), 1.0));
        // Height projects to a point: straight down the line of sight.
        assert_eq!(cam.project([5.0, 0.0, 0.0]), cam.project([0.0, 0.0, 0.0]));
    }

    #[test]
    fn depth_grows_towards_the_eye_and_bad_eyes_fall_back() {
        let cam = Camera::new([0.0, 0.0, 0.0]);
        assert!(cam.depth([1.0, 1.0, 1.0]) > cam.depth([0.0, 0.0, 0.0]));
        assert_eq!(Camera::new([f64::NAN, 0.0, 1.0]), cam);
        let below = Camera::new([-1.0, 0.0, 0.0]);
        assert_eq!(below.visible_faces(), vec![(0, false)]);
    }

    #[test]
    fn faces_lie_on_their_plane() {
        let c = Cuboid::new([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]);
        for (axis, at_hi) in [(0, true), (1, false), (2, true)] {
            let want = if at_hi { c.hi[axis] } else { c.lo[axis] };
            assert!(face(&c, axis, at_hi).iter().all(|p| p[axis] == want));
        }
        assert_eq!(corners(&c)[7], c.hi);
    }
}
