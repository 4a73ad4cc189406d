//! `ndarray` support (feature `ndarray`): views in (any strides, including
//! negative and broadcast ones), owned arrays out, or into an `ArrayViewMut`.

use ndarray::{ArrayD, ArrayView, ArrayViewMut, Dimension, IxDyn};

use crate::{Error, Operator, Result};

/// Runs any [`Operator`] on ndarray views.
///
/// ```
/// use blockshuffle::{tf, DataFormat, OperatorNdarray};
/// use ndarray::{Array, Axis};
///
/// let x = Array::from_shape_vec((1, 2, 2, 1), vec![1, 2, 3, 4]).unwrap();
/// let y = tf::SpaceToDepth::new(2, DataFormat::Nhwc).apply_array(x.view())?;
/// assert_eq!(y.shape(), &[1, 1, 1, 4]);
/// // A strided (reversed) view works as well.
/// let mut rev = x.view();
/// rev.invert_axis(Axis(2));
/// let y = tf::SpaceToDepth::new(2, DataFormat::Nhwc).apply_array(rev)?;
/// assert_eq!(y.iter().copied().collect::<Vec<_>>(), vec![2, 1, 4, 3]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
pub trait OperatorNdarray: Operator {
    /// Runs on a view, returning a new row-major array.
    fn apply_array<T: Copy + Default, D: Dimension>(&self, input: ArrayView<'_, T, D>) -> Result<ArrayD<T>> {
        let plan = self.plan(input.shape())?;
        let shape = IxDyn(plan.output_shape());
        let n = plan.output_len();
        let mut out: Vec<T> = crate::run::allocate(n, std::mem::size_of::<T>())?;
        let strides = elem_strides(&input);
        // SAFETY: the view guarantees every in-range index of its shape is a
        // readable element at `as_ptr() + Σ index·stride`; the output is `n`
        // fresh, row-major elements that `run_strided` writes completely.
        unsafe {
            let out_strides = c_strides(plan.output_shape());
            plan.run_strided(input.as_ptr(), &strides, out.as_mut_ptr(), &out_strides)?;
            out.set_len(n);
        }
        Ok(ArrayD::from_shape_vec(shape, out).expect("row-major shape and buffer agree"))
    }

    /// Runs on a view into `output`, which must have the output shape (any strides
    /// that address distinct elements).
    fn apply_array_into<T: Copy + Default, D: Dimension, E: Dimension>(
        &self,
        input: ArrayView<'_, T, D>,
        mut output: ArrayViewMut<'_, T, E>,
    ) -> Result<()> {
        let plan = self.plan(input.shape())?;
        if output.shape() != plan.output_shape() {
            return Err(Error::OutputShape { given: output.shape().to_vec(), expected: plan.output_shape().to_vec() });
        }
        let strides = elem_strides(&input);
        let out_strides: Vec<isize> = output.strides().to_vec();
        // SAFETY: both views guarantee their in-range indices address valid
        // elements; a mutable view's distinct indices address distinct
        // elements, and it cannot alias the shared input view.
        unsafe { plan.run_strided(input.as_ptr(), &strides, output.as_mut_ptr(), &out_strides) }
    }
}

impl<O: Operator> OperatorNdarray for O {}

fn elem_strides<T, D: Dimension>(a: &ArrayView<'_, T, D>) -> Vec<isize> {
    a.strides().to_vec()
}

fn c_strides(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc = acc.wrapping_mul(shape[i] as isize);
    }
    s
}
