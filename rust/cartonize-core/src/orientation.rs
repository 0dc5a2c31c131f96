//! Which rotations of an item are allowed, as permutations of its axes.

use crate::geometry::Vec3;

/// A rotation maps placed axis `a` to input axis `perm[a]`.
pub type Perm = [usize; 3];

/// Identity first: the item as given is the preferred orientation.
pub const ALL_PERMS: [Perm; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

/// Applies a rotation to dimensions given on the input axes.
pub fn rotate(dims: &Vec3, perm: &Perm) -> Vec3 {
    [dims[perm[0]], dims[perm[1]], dims[perm[2]]]
}

/// Rotations allowed when only spins about `free_axes` are permitted
/// (`None` = every rotation). Spinning about one axis keeps it in place and
/// swaps the other two; spins about two or more axes generate all six.
pub fn allowed_perms(free_axes: Option<&[usize]>) -> Vec<Perm> {
    match free_axes {
        None => ALL_PERMS.to_vec(),
        Some(axes) => {
            let mut distinct: Vec<usize> = axes.iter().copied().filter(|a| *a < 3).collect();
            distinct.sort_unstable();
            distinct.dedup();
            match distinct.as_slice() {
                [] => vec![[0, 1, 2]],
                [a] => ALL_PERMS.iter().copied().filter(|p| p[*a] == *a).collect(),
                _ => ALL_PERMS.to_vec(),
            }
        }
    }
}

/// The distinct placed shapes of an item, identity first; equal sides give
/// fewer shapes, which keeps the search small for cubes and square items.
pub fn distinct_shapes(dims: &Vec3, perms: &[Perm]) -> Vec<(Vec3, Perm)> {
    let mut out: Vec<(Vec3, Perm)> = Vec::with_capacity(perms.len());
    for p in perms {
        let s = rotate(dims, p);
        if !out.iter().any(|(t, _)| *t == s) {
            out.push((s, *p));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_limit_rotations() {
        assert_eq!(allowed_perms(Some(&[])).len(), 1);
        assert_eq!(allowed_perms(Some(&[0])), vec![[0, 1, 2], [0, 2, 1]]);
        assert_eq!(allowed_perms(Some(&[0, 2])).len(), 6);
        assert_eq!(allowed_perms(None).len(), 6);
    }

    #[test]
    fn cubes_have_one_shape() {
        assert_eq!(distinct_shapes(&[5, 5, 5], &ALL_PERMS).len(), 1);
        assert_eq!(distinct_shapes(&[5, 5, 7], &ALL_PERMS).len(), 3);
        assert_eq!(distinct_shapes(&[1, 2, 3], &ALL_PERMS).len(), 6);
    }
}
