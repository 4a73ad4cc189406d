//! numpy: `np.transpose(x, axes)`, a permutation of the axes, on the same
//! engine as the block operators (a geometry of plain axes, each block-side
//! axis one of them).
//!
//! | rule | numpy's error |
//! | --- | --- |
//! | one axis per input dim | `ValueError: axes don't match array` |
//! | every axis in `-rank..rank` (negative ones count from the end) | `AxisError: axis 9 is out of bounds for array of dimension 6` |
//! | no axis twice | `ValueError: repeated axis in transpose` |
//!
//! The rules are checked in numpy's order: the count, then each axis in
//! turn (its range, then whether an earlier one named it).

use arrayvec::ArrayVec;

use super::param_len;
use crate::engine::geometry::{o, Factor, SpaceAxis};
use crate::engine::Direction;
use crate::ops::check_max_rank;
use crate::{Error, Operator, Plan, Result, MAX_RANK};

/// `np.transpose(x, axes)`: output axis `i` is input axis `axes[i]`;
/// without `axes`, the axes reversed (`x.T`).
///
/// ```
/// use blockshuffle::{numpy, Operator};
/// let x: Vec<u8> = (0..6).collect(); // [[0, 1, 2], [3, 4, 5]]
/// let (y, shape) = numpy::Transpose::new(&[1, 0]).apply(&x, &[2, 3])?;
/// assert_eq!((shape.as_slice(), y), (&[3, 2][..], vec![0, 3, 1, 4, 2, 5]));
/// // Negative axes count from the end; no axes reverses them.
/// let y = numpy::Transpose::new(&[-1, 0]).apply(&x, &[2, 3])?.0;
/// assert_eq!(y, numpy::Transpose::reversed().apply(&x, &[2, 3])?.0);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Transpose {
    /// The permutation (`None`: the axes reversed).
    pub axes: Option<Vec<i64>>,
}

impl Transpose {
    /// The transpose by `axes` (validated against the input by [`Operator::plan`]).
    ///
    /// ```
    /// use blockshuffle::{numpy, Operator};
    /// let shape = numpy::Transpose::new(&[2, 0, 1]).output_shape(&[4, 5, 6])?;
    /// assert_eq!(shape.as_slice(), &[6, 4, 5]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn new(axes: &[i64]) -> Self {
        Transpose { axes: Some(axes.to_vec()) }
    }

    /// The transpose that reverses the axes (`np.transpose(x)`, `x.T`).
    ///
    /// ```
    /// use blockshuffle::{numpy, Operator};
    /// let shape = numpy::Transpose::reversed().output_shape(&[4, 5, 6])?;
    /// assert_eq!(shape.as_slice(), &[6, 5, 4]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn reversed() -> Self {
        Transpose { axes: None }
    }
}

impl Operator for Transpose {
    fn name(&self) -> &'static str {
        "numpy transpose"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let op = self.name();
        let rank = input_shape.len();
        check_max_rank(op, rank)?;
        let mut perm: ArrayVec<usize, MAX_RANK> = ArrayVec::new();
        match &self.axes {
            None => perm.extend((0..rank).rev()),
            Some(axes) => {
                param_len(op, "axes", axes.len(), rank, "one per input dim")?;
                // Where each axis was first named.
                let mut named = [usize::MAX; MAX_RANK];
                for (index, &axis) in axes.iter().enumerate() {
                    let r = rank as i64;
                    if axis < -r || axis >= r {
                        return Err(Error::AxisOutOfBounds { op, param: "axes", index, axis, rank });
                    }
                    let dim = if axis < 0 { (axis + r) as usize } else { axis as usize };
                    if named[dim] != usize::MAX {
                        return Err(Error::RepeatedAxis { op, param: "axes", index, axis, dim, first: named[dim] });
                    }
                    named[dim] = index;
                    perm.push(dim);
                }
            }
        }
        let space: ArrayVec<SpaceAxis, MAX_RANK> = input_shape.iter().map(|&d| SpaceAxis::plain(d as u64)).collect();
        let singles: ArrayVec<[Factor; 1], MAX_RANK> = perm.iter().map(|&p| [o(p)]).collect();
        let groups: ArrayVec<&[Factor], MAX_RANK> = singles.iter().map(|g| g.as_slice()).collect();
        Plan::new(op, &space, &groups, Direction::Forward)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpys_errors_in_numpys_order() {
        let t = |axes: &[i64], shape: &[usize]| Transpose::new(axes).output_shape(shape).unwrap_err().to_string();
        assert_eq!(t(&[1, 2], &[2, 3, 4]), "numpy transpose: axes has 2 values but must have 3 (one per input dim)");
        assert_eq!(t(&[], &[2]), "numpy transpose: axes has 0 values but must have 1 (one per input dim)");
        assert_eq!(
            t(&[9, 4, 2, 0, 1, 5], &[1; 6]),
            "numpy transpose: axes[0] = 9 is out of bounds for an input of rank 6 (axes run from -6 to 5)"
        );
        assert_eq!(
            t(&[0, -4, 1], &[2, 3, 4]),
            "numpy transpose: axes[1] = -4 is out of bounds for an input of rank 3 (axes run from -3 to 2)"
        );
        assert_eq!(t(&[0, -4, 1, 3], &[1; 4]), "numpy transpose: axes[1] = -4 repeats axis 0, already axes[0]");
        assert_eq!(
            Transpose::new(&[2, 2, 9]).output_shape(&[1; 3]),
            Err(Error::RepeatedAxis { op: "numpy transpose", param: "axes", index: 1, axis: 2, dim: 2, first: 0 })
        );
        assert!(matches!(
            Transpose::reversed().output_shape(&[1; MAX_RANK + 1]),
            Err(Error::RankTooLarge { rank: 33, max: 32, .. })
        ));
    }

    #[test]
    fn zero_d_and_empty_inputs() {
        assert_eq!(Transpose::reversed().apply(&[7u8], &[]).unwrap().0, vec![7]);
        assert_eq!(Transpose::new(&[]).apply(&[7u8], &[]).unwrap().0, vec![7]);
        let (y, shape) = Transpose::new(&[1, 0]).apply::<u8>(&[], &[0, 5]).unwrap();
        assert_eq!((y.len(), shape.as_slice()), (0, &[5, 0][..]));
    }
}
