//! The one description every operator reduces to: pad (or crop) some axes of
//! the *space* tensor, split each axis into `(outer, block)` factors, permute
//! the factors and merge them into the axes of the *block* tensor.
//!
//! Space-to-batch and space-to-depth run it forward (space side to block
//! side, zero-filling the padding); batch-to-space and depth-to-space run the
//! very same description backward (block side to space side, dropping the
//! cropped positions).
//!
//! Building a [`Geometry`] is shape inference: it checks every product and sum
//! with checked 64-bit arithmetic, and allocates nothing up to
//! [`INLINE_RANK`] axes.

use arrayvec::ArrayVec;
use smallvec::SmallVec;

use crate::{Error, Result, MAX_RANK};

/// Most factors a geometry can have: an outer and a block factor per axis.
pub(crate) const MAX_FACTORS: usize = 2 * MAX_RANK;

/// Axes a geometry (and a plan's shapes) hold inline; more, up to
/// [`MAX_RANK`], go on the heap. A plan is moved out of every call that
/// returns it, and at [`MAX_RANK`] inline it was 2 KiB, whose copies were a
/// quarter of planning and running a 64-byte tensor; rank 8 covers every
/// framework operator's usual tensors (4-D and 5-D, with their split axes).
pub(crate) const INLINE_RANK: usize = 8;

/// Per-axis values, inline up to [`INLINE_RANK`] axes.
pub(crate) type Dims<T> = SmallVec<[T; INLINE_RANK]>;

/// One axis of the space-side tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpaceAxis {
    /// Size without padding (the space tensor's real dimension).
    pub extent: u64,
    /// Zero padding (forward) or crop (backward) before the data.
    pub begin: u64,
    /// Zero padding (forward) or crop (backward) after the data.
    pub end: u64,
    /// Block size: the padded size is `outer * block`.
    pub block: u64,
    /// `(extent + begin + end) / block`.
    pub outer: u64,
}

impl SpaceAxis {
    pub fn padded(&self) -> u64 {
        self.outer * self.block
    }

    /// The size of this axis's factor `part`.
    pub fn count(&self, part: Part) -> u64 {
        match part {
            Part::Outer => self.outer,
            Part::Block => self.block,
        }
    }
}

/// Which half of a split space axis a factor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// The position of the block: `padded / block` values.
    Outer,
    /// The position within the block: `block` values.
    Block,
}

/// A factor of the split space tensor: axis `axis`, half `part`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Factor {
    pub axis: u8,
    pub part: Part,
}

/// Outer factor of space axis `axis`.
pub(crate) const fn o(axis: usize) -> Factor {
    Factor { axis: axis as u8, part: Part::Outer }
}

/// Block factor of space axis `axis`.
pub(crate) const fn k(axis: usize) -> Factor {
    Factor { axis: axis as u8, part: Part::Block }
}

/// A validated rearrangement: the space-side axes, and the block-side axes
/// as groups of factors (outermost first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub space: Dims<SpaceAxis>,
    /// Block-side factor order; `groups` says how many consecutive factors
    /// make each block-side axis.
    pub order: SmallVec<[Factor; 2 * INLINE_RANK]>,
    pub groups: Dims<u8>,
}

/// Checked `a * b` in u64, worded for `op`.
pub(crate) fn mul(op: &'static str, what: &'static str, a: u64, b: u64) -> Result<u64> {
    a.checked_mul(b).ok_or_else(|| Error::Overflow { op, what, a: a.into(), b: b.into(), limit: "u64" })
}

/// Checked `a + b` in u64, worded for `op`.
pub(crate) fn add(op: &'static str, what: &'static str, a: u64, b: u64) -> Result<u64> {
    a.checked_add(b).ok_or_else(|| Error::Overflow { op, what, a: a.into(), b: b.into(), limit: "u64" })
}

/// Checked product of a shape.
/// Every framework keeps dims in signed 64-bit integers: a dim (or a padded
/// size) beyond `i64::MAX` is an overflow there, and an error here.
pub(crate) fn fits_i64(op: &'static str, what: &'static str, v: u64) -> Result<()> {
    if v > i64::MAX as u64 {
        return Err(Error::Overflow { op, what, a: v.into(), b: 1, limit: "i64" });
    }
    Ok(())
}

/// Checked product of a shape: zero if any dim is zero (a tensor with a zero
/// dim has no elements, however large its other dims).
pub(crate) fn product(op: &'static str, what: &'static str, dims: &[u64]) -> Result<u64> {
    product_of(op, what, dims.iter().copied())
}

/// [`product`] of dims given one by one.
pub(crate) fn product_of(op: &'static str, what: &'static str, dims: impl Iterator<Item = u64>) -> Result<u64> {
    let mut acc = 1u64;
    // The first product that overflowed: final unless a zero dim comes
    // later. (Kept as numbers, not as a `Result`, which every step would
    // copy and drop: this is on every plan's path.)
    let mut overflow = None;
    for d in dims {
        if d == 0 {
            return Ok(0);
        }
        if overflow.is_none() {
            match acc.checked_mul(d) {
                Some(p) => acc = p,
                None => overflow = Some((acc, d)),
            }
        }
    }
    match overflow {
        None => Ok(acc),
        Some((a, b)) => mul(op, what, a, b),
    }
}

/// Converts a u64 dimension back to usize (fails on 32-bit targets for huge dims).
pub(crate) fn to_usize(op: &'static str, what: &'static str, v: u64) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::Overflow { op, what, a: v.into(), b: 1, limit: "usize" })
}

impl SpaceAxis {
    /// Pushes onto `space` a space axis of `extent` values padded by
    /// `begin`/`end` and split into blocks of `block`, or returns why it
    /// cannot be one. The caller has already checked divisibility with the
    /// framework's wording; this re-checks it (and the sums) so a geometry
    /// is never inconsistent.
    ///
    /// The axis goes into `space` from registers: returned in a `Result`
    /// (built in memory, an `Error` being large) and taken out by `?`, it
    /// was moved in wider loads than the stores that wrote it, each waiting
    /// for them (half of TF space-to-batch's planning outside `Plan::new`).
    /// Measured, planning and running the per-call workloads (9 alternated
    /// runs): S1 258 -> 236 ns, S2 652 -> 631 ns, S3 277 -> 259 ns.
    #[inline]
    pub fn push(
        space: &mut ArrayVec<SpaceAxis, MAX_RANK>,
        op: &'static str,
        extent: u64,
        begin: u64,
        end: u64,
        block: u64,
    ) -> Result<()> {
        match Self::valid(extent, begin, end, block) {
            Some(axis) => {
                space.push(axis);
                Ok(())
            }
            None => Err(Self::invalid(op, extent, begin, end, block)),
        }
    }

    /// The axis [`SpaceAxis::push`] pushes, or its error.
    #[cfg(test)]
    pub fn new(op: &'static str, extent: u64, begin: u64, end: u64, block: u64) -> Result<Self> {
        Self::valid(extent, begin, end, block).ok_or_else(|| Self::invalid(op, extent, begin, end, block))
    }

    /// The axis, if [`SpaceAxis::push`]'s rules hold.
    #[inline]
    fn valid(extent: u64, begin: u64, end: u64, block: u64) -> Option<Self> {
        let padded = extent.checked_add(begin).and_then(|p| p.checked_add(end));
        match padded {
            Some(padded) if padded <= i64::MAX as u64 && block != 0 && padded.is_multiple_of(block) => {
                Some(SpaceAxis { extent, begin, end, block, outer: padded / block })
            }
            _ => None,
        }
    }

    /// The error of an axis [`SpaceAxis::valid`] refused.
    #[cold]
    #[inline(never)]
    fn invalid(op: &'static str, extent: u64, begin: u64, end: u64, block: u64) -> Error {
        match Self::checked(op, extent, begin, end, block) {
            Err(e) => e,
            Ok(axis) => unreachable!("{axis:?} is a valid axis: no error"),
        }
    }

    /// The axis, each of [`SpaceAxis::push`]'s rules checked in turn with
    /// its own error.
    fn checked(op: &'static str, extent: u64, begin: u64, end: u64, block: u64) -> Result<Self> {
        let padded = add(op, "padded dimension", extent, begin)?;
        let padded = add(op, "padded dimension", padded, end)?;
        fits_i64(op, "padded dimension", padded)?;
        if block == 0 || padded % block != 0 {
            return Err(Error::NotDivisible {
                op,
                what: format!("padded dimension {padded}"),
                size: padded,
                divisor_name: "block".into(),
                divisor: block,
            });
        }
        Ok(SpaceAxis { extent, begin, end, block, outer: padded / block })
    }

    /// An axis carried along unchanged (block 1, no padding). Its extent
    /// is an input or output dim, checked by [`Geometry::build`].
    pub fn plain(extent: u64) -> Self {
        SpaceAxis { extent, begin: 0, end: 0, block: 1, outer: extent }
    }
}

impl Geometry {
    /// A geometry with no axes, to [`Geometry::build`] in place.
    pub fn empty() -> Self {
        // Not `const`: a const-built inline array comes out zeroed, a
        // memset of it on every plan.
        Geometry { space: SmallVec::new(), order: SmallVec::new(), groups: SmallVec::new() }
    }

    /// A geometry of these space axes and block-side groups of factors
    /// (see [`Geometry::build`]).
    #[cfg(test)]
    pub fn new(op: &'static str, space: &[SpaceAxis], groups: &[&[Factor]]) -> Result<Self> {
        let mut g = Geometry::empty();
        g.build(op, space, groups, &mut Dims::new(), &mut Dims::new())?;
        Ok(g)
    }

    /// Assembles, into `self` (replacing what it held), a geometry from its
    /// space axes and block-side groups of factors, and writes the two
    /// sides' shapes into `space_shape` and `block_shape`. In place: built
    /// apart, the arrays would be copied into the plan.
    ///
    /// Every outer factor must appear exactly once; a block factor must appear
    /// exactly once when its block is > 1 (a block of 1 may be left out).
    /// Checks that both tensors' element counts fit in u64, and every dim in
    /// `i64` and `usize`; returns the two counts (space side, block side).
    #[inline]
    pub fn build(
        &mut self,
        op: &'static str,
        space: &[SpaceAxis],
        groups: &[&[Factor]],
        space_shape: &mut Dims<usize>,
        block_shape: &mut Dims<usize>,
    ) -> Result<(u64, u64)> {
        if space.len() > MAX_RANK || groups.len() > MAX_RANK {
            return Err(Error::RankTooLarge { op, rank: space.len().max(groups.len()), max: MAX_RANK });
        }
        self.space.clear();
        self.order.clear();
        self.groups.clear();
        // Extended, not `extend_from_slice` (which inserts: a memmove of
        // the empty tail, then a memcpy).
        self.space.extend(space.iter().copied());
        let mut seen = [[false; 2]; MAX_RANK];
        for group in groups {
            for f in *group {
                let slot = &mut seen[f.axis as usize][f.part as usize];
                assert!(!*slot, "factor {f:?} used twice in {op}");
                *slot = true;
                self.order.push(*f);
            }
            self.groups.push(group.len() as u8);
        }
        for (i, ax) in space.iter().enumerate() {
            assert!(seen[i][Part::Outer as usize], "outer factor of axis {i} unused in {op}");
            assert!(seen[i][Part::Block as usize] || ax.block == 1, "block factor of axis {i} unused in {op}");
        }
        // Both sides' element counts must be representable.
        let space_count = product_of(op, "input/output element count", space.iter().map(|a| a.extent))?;
        // The block side's: its axes hold every factor of the padded axes.
        let block_count = product_of(op, "padded element count", space.iter().map(|a| a.padded()))?;
        space_shape.clear();
        for ax in space {
            fits_i64(op, "dimension", ax.extent)?;
            space_shape.push(to_usize(op, "dimension", ax.extent)?);
        }
        block_shape.clear();
        self.for_each_block_dim(op, |d| {
            fits_i64(op, "output dimension", d)?;
            block_shape.push(to_usize(op, "dimension", d)?);
            Ok(())
        })?;
        Ok((space_count, block_count))
    }

    /// The size of one factor.
    pub fn factor_count(&self, f: Factor) -> u64 {
        self.space[f.axis as usize].count(f.part)
    }

    #[cfg(test)]
    /// Block-side shape in u64, checked.
    pub fn block_shape_u64(&self, op: &'static str) -> Result<Dims<u64>> {
        let mut out = Dims::new();
        self.for_each_block_dim(op, |d| {
            out.push(d);
            Ok(())
        })?;
        Ok(out)
    }

    /// Calls `f` with each block-side dim, checked, outermost first (no
    /// array is built: shape inference is on every call's path).
    pub fn for_each_block_dim(&self, op: &'static str, mut f: impl FnMut(u64) -> Result<()>) -> Result<()> {
        let mut at = 0;
        for &n in &self.groups {
            let mut size = 1u64;
            for factor in &self.order[at..at + n as usize] {
                size = mul(op, "output dimension", size, self.factor_count(*factor))?;
            }
            at += n as usize;
            f(size)?;
        }
        Ok(())
    }

    #[cfg(test)]
    /// The space-side shape (unpadded extents).
    pub fn space_shape(&self, op: &'static str) -> Result<Dims<usize>> {
        self.space.iter().map(|a| to_usize(op, "dimension", a.extent)).collect()
    }

    #[cfg(test)]
    /// The block-side shape.
    pub fn block_shape(&self, op: &'static str) -> Result<Dims<usize>> {
        self.block_shape_u64(op)?.iter().map(|&d| to_usize(op, "dimension", d)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_axis_checks_divisibility_and_sums() {
        let a = SpaceAxis::new("t", 4, 1, 1, 3).unwrap();
        assert_eq!((a.outer, a.padded()), (2, 6));
        assert!(matches!(SpaceAxis::new("t", 4, 0, 1, 2), Err(Error::NotDivisible { size: 5, divisor: 2, .. })));
        assert!(matches!(SpaceAxis::new("t", u64::MAX, 1, 0, 1), Err(Error::Overflow { .. })));
    }

    /// `SpaceAxis::push` checks its rules at once and words a failure by
    /// checking them in turn: both agree, on values around every limit.
    #[test]
    fn space_axis_is_checked_as_each_rule_checks_it() {
        let big = i64::MAX as u64;
        let values = [0, 1, 2, 3, 6, big - 1, big, big + 1, u64::MAX];
        // Errors by kind: sums beyond u64, padded sizes beyond i64, not divisible.
        let mut errors = [0; 3];
        for extent in values {
            for begin in values {
                for end in values {
                    for block in values {
                        let mut space = ArrayVec::new();
                        let fast = SpaceAxis::push(&mut space, "t", extent, begin, end, block).map(|()| space[0]);
                        let each = SpaceAxis::checked("t", extent, begin, end, block);
                        assert_eq!(fast, each, "{extent} {begin} {end} {block}");
                        // Pushed only when valid.
                        assert_eq!(space.len(), usize::from(fast.is_ok()));
                        match fast {
                            Ok(_) => {}
                            Err(Error::Overflow { limit: "u64", .. }) => errors[0] += 1,
                            Err(Error::Overflow { limit: "i64", .. }) => errors[1] += 1,
                            Err(Error::NotDivisible { .. }) => errors[2] += 1,
                            Err(e) => panic!("{e:?}"),
                        }
                    }
                }
            }
        }
        assert!(errors.iter().all(|&n| n > 100), "{errors:?}");
        let e = SpaceAxis::new("t", big, 1, 0, 1).unwrap_err();
        assert!(matches!(e, Error::Overflow { limit: "i64", .. }), "{e:?}");
        let e = SpaceAxis::new("t", 4, 0, 0, 0).unwrap_err();
        assert!(matches!(e, Error::NotDivisible { size: 4, divisor: 0, .. }), "{e:?}");
    }

    #[test]
    fn block_shape_merges_groups() {
        // NHWC space-to-depth of [1, 4, 6, 3] with block 2.
        let op = "t";
        let space = [
            SpaceAxis::plain(1),
            SpaceAxis::new(op, 4, 0, 0, 2).unwrap(),
            SpaceAxis::new(op, 6, 0, 0, 2).unwrap(),
            SpaceAxis::plain(3),
        ];
        let g = Geometry::new(op, &space, &[&[o(0)], &[o(1)], &[o(2)], &[k(1), k(2), o(3)]]).unwrap();
        assert_eq!(g.block_shape(op).unwrap().as_slice(), &[1, 2, 3, 12]);
        assert_eq!(g.space_shape(op).unwrap().as_slice(), &[1, 4, 6, 3]);
    }

    #[test]
    fn block_shape_overflow_is_an_error() {
        let op = "t";
        let big = 1u64 << 40;
        let space = [SpaceAxis::plain(1), SpaceAxis::new(op, big, 0, 0, big).unwrap()];
        // outer 1, block 2^40: fine alone; squared into one group overflows only with more.
        let space2 = [space[0], space[1], SpaceAxis::new(op, big, 0, 0, big).unwrap()];
        let err = Geometry::new(op, &space2, &[&[k(1), k(2), o(0)], &[o(1)], &[o(2)]]);
        assert!(matches!(err, Err(Error::Overflow { .. })), "{err:?}");
    }
}
