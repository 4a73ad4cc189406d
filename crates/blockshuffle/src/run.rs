//! [`Plan`]: a validated operator on a given input shape, ready to run on data
//! any number of times, typed or as raw bytes, into new or caller-owned buffers.

use std::fmt;
use std::mem::{size_of, MaybeUninit};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use arrayvec::ArrayVec;

use crate::engine::arch::cache::cpu_stream_threshold;
use crate::engine::arch::mem::{advise_huge_pages, HUGE_PAGES_MIN};
use crate::engine::arch::Isa;
use crate::engine::exec::{self, Fill, Progress};
use crate::engine::geometry::{self, Dims, Geometry};
use crate::engine::plan::{CopyPlan, Layouts};
use crate::engine::Direction;
use crate::{Error, Result, MAX_RANK};

/// How many threads a plan may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Parallelism {
    /// Run on the calling thread (the default: predictable inside engines
    /// that do their own threading).
    #[default]
    Sequential,
    /// Split the work into this many parts on the current rayon pool.
    Threads(usize),
    /// As many parts as the current rayon pool has threads.
    Auto,
}

impl Parallelism {
    fn threads(self) -> usize {
        match self {
            Parallelism::Sequential => 1,
            Parallelism::Threads(n) => n.max(1),
            #[cfg(feature = "rayon")]
            Parallelism::Auto => rayon::current_num_threads(),
            #[cfg(not(feature = "rayon"))]
            Parallelism::Auto => 1,
        }
    }
}

/// Whether a plan writes its output with non-temporal (cache-bypassing)
/// stores and orders its loops for them.
///
/// `Auto` streams outputs of 16 MiB and more, which would not stay in the
/// cache anyway; streaming then saves reading each destination line before
/// writing it. `Always` and `Never` force the choice (for benchmarks, and so
/// that tests run both code paths on small tensors). Only row-major
/// layouts stream: a strided view on either side is copied through the
/// cache whatever this says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Streaming {
    /// Stream outputs of at least a quarter of the last-level cache, but no
    /// less than 1 MiB and no more than 16 MiB (16 MiB where the cache's
    /// size is not known).
    #[default]
    Auto,
    /// Always stream.
    Always,
    /// Never stream.
    Never,
}

/// Which copy kernels a plan may use.
///
/// `Auto` picks the fastest this CPU runs, detected when the plan is
/// compiled (on x86_64: AVX-512 with or without AVX512-VBMI, AVX2 or SSE2
/// vector kernels for short runs); `Avx512` goes no further than
/// AVX-512F/BW (without the VBMI byte permutes); `Avx2` no wider than AVX2;
/// `Baseline` stays with the target's baseline (SSE2 on x86_64); `Portable`
/// forces the plain-Rust kernels, which every target has. The last four
/// let tests run every kernel on one machine; none of them picks
/// instructions the CPU lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Kernels {
    /// The fastest this CPU runs.
    #[default]
    Auto,
    /// At most AVX-512F/BW, without AVX512-VBMI (on CPUs without VBMI, and
    /// on other targets, as `Auto`).
    Avx512,
    /// At most AVX2 (on CPUs without it, and on other targets, as `Auto`).
    Avx2,
    /// The target's baseline vector kernels, without runtime-detected extensions.
    Baseline,
    /// Only the portable kernels.
    Portable,
}

/// A validated operator applied to one input shape: the output shape is
/// known, and the data movement is ready to run.
///
/// Built by [`crate::Operator::plan`] without touching data or allocating;
/// run with [`Plan::run`], [`Plan::run_into`], [`Plan::run_bytes`] or
/// [`Plan::run_bytes_into`]. [`Plan::inverse`] gives the plan that undoes it.
///
/// ```
/// use blockshuffle::{onnx, Operator};
///
/// let plan = onnx::DepthToSpace::dcr(2).plan(&[1, 8, 2, 3])?;
/// assert_eq!(plan.output_shape(), &[1, 2, 4, 6]);
/// let x: Vec<f32> = (0..48).map(|v| v as f32).collect();
/// let y = plan.run(&x)?;
/// assert_eq!(&y[..6], &[0., 12., 1., 13., 2., 14.]);
/// // The inverse plan (space-to-depth, DCR) restores the input.
/// assert_eq!(plan.inverse().run(&y)?, x);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    op: &'static str,
    geom: Geometry,
    dir: Direction,
    parallelism: Parallelism,
    streaming: Streaming,
    kernels: Kernels,
    input_shape: Dims<usize>,
    output_shape: Dims<usize>,
    /// Element counts of the two shapes (`None`: beyond `usize`), computed
    /// once: every run checks its buffers against them.
    input_elems: Option<usize>,
    output_elems: Option<usize>,
    /// How many of the geometry's space axes each of the space side's own
    /// axes splits into (einops' elementary axes: see [`Plan::split`]);
    /// empty when they are the same axes.
    parts: Dims<u8>,
    /// The loop nest for row-major buffers, compiled by the first run and
    /// reused by every later run with the same element size.
    compiled: Compiled,
}

/// A plan's compiled loop nest and the element size it is for, kept by its
/// second run (a plan run once, planned and run in one call, compiles on
/// the stack as it did before, without the allocation).
///
/// A cache, not part of the plan's value: a clone starts empty, and plans
/// compare equal whatever their caches hold.
#[derive(Default)]
struct Compiled {
    ran: AtomicBool,
    kept: OnceLock<Box<(usize, CopyPlan)>>,
}

impl Clone for Compiled {
    fn clone(&self) -> Self {
        Compiled::default()
    }
}

impl PartialEq for Compiled {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Compiled {}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.kept.get().is_some() { "Compiled" } else { "NotCompiled" })
    }
}

/// Element count of a shape, checked against `usize`.
#[allow(
    clippy::unnecessary_lazy_evaluations,
    reason = "an `Error` has drop glue: built eagerly, it is built and dropped on every success"
)]
fn element_count(op: &'static str, shape: &[usize]) -> Result<usize> {
    if shape.contains(&0) {
        return Ok(0);
    }
    shape.iter().try_fold(1usize, |acc, &d| {
        acc.checked_mul(d).ok_or_else(|| Error::Overflow {
            op,
            what: "element count",
            a: acc as u128,
            b: d as u128,
            limit: "usize",
        })
    })
}

/// The bytes of a value, as `MaybeUninit<u8>` (the padding fill pattern).
fn bytes_of<T>(value: &T) -> &[MaybeUninit<u8>] {
    // SAFETY: `size_of::<T>()` bytes behind a live reference, read as
    // `MaybeUninit<u8>`: any bit pattern, padding included, is valid for it.
    unsafe { std::slice::from_raw_parts((value as *const T).cast::<MaybeUninit<u8>>(), size_of::<T>()) }
}

/// An empty vector with room for `n` elements of `size` bytes, or an error
/// if the memory cannot be had (never an abort).
pub(crate) fn allocate<T>(n: usize, size: usize) -> Result<Vec<T>> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::Allocation { bytes: n as u128 * size as u128 })?;
    // The run's first touch of a large fresh buffer is mostly page faults:
    // huge pages make them 512 times fewer.
    let bytes = n.saturating_mul(size);
    if bytes >= HUGE_PAGES_MIN {
        advise_huge_pages(v.as_mut_ptr().cast(), bytes);
    }
    Ok(v)
}

/// Row-major strides in bytes for `shape` with `elem`-byte elements, into
/// `strides` (filled in place: returned, the array would be copied).
fn c_strides(shape: &[usize], elem: usize, strides: &mut ArrayVec<isize, MAX_RANK>) {
    strides.clear();
    strides.extend(shape.iter().map(|_| 0));
    let mut acc = elem as isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(d as isize);
    }
}

/// Whether byte strides `strides` lay `shape` out row-major with
/// `elem`-byte elements (axes of one element may have any stride).
fn is_row_major(shape: &[usize], strides: &[isize], elem: usize) -> bool {
    let mut expected = elem as isize;
    for (&d, &s) in shape.iter().zip(strides).rev() {
        if d != 1 && s != expected {
            return false;
        }
        expected = expected.wrapping_mul(d as isize);
    }
    true
}

/// Byte strides of `strides` (in elements) times `elem`, or the overflow
/// error naming `param`.
fn byte_strides(op: &'static str, strides: &[isize], elem: usize) -> Result<ArrayVec<isize, MAX_RANK>> {
    strides
        .iter()
        .map(|&s| {
            isize::try_from(elem).ok().and_then(|e| s.checked_mul(e)).ok_or(Error::Overflow {
                op,
                what: "stride in bytes",
                a: s.unsigned_abs() as u128,
                b: elem as u128,
                limit: "isize",
            })
        })
        .collect()
}

impl Plan {
    /// The plan of the geometry of `space` axes and block-side `groups`
    /// (see [`Geometry::build`]) run in `dir`, built in place.
    #[inline]
    pub(crate) fn new(
        op: &'static str,
        space: &[geometry::SpaceAxis],
        groups: &[&[geometry::Factor]],
        dir: Direction,
    ) -> Result<Self> {
        let mut plan = Plan {
            op,
            geom: Geometry::empty(),
            dir,
            parallelism: Parallelism::Sequential,
            streaming: Streaming::Auto,
            kernels: Kernels::Auto,
            input_shape: Dims::new(),
            output_shape: Dims::new(),
            input_elems: None,
            output_elems: None,
            parts: Dims::new(),
            compiled: Compiled::default(),
        };
        // The geometry and shapes are filled in place (built apart, these
        // arrays are copied into the plan). The plan itself is still copied
        // once, into the returned `Ok`.
        let Plan { geom, input_shape, output_shape, .. } = &mut plan;
        let (space_shape, block_shape) = match dir {
            Direction::Forward => (input_shape, output_shape),
            Direction::Backward => (output_shape, input_shape),
        };
        let (space_count, block_count) = geom.build(op, space, groups, space_shape, block_shape)?;
        let (input_count, output_count) = match dir {
            Direction::Forward => (space_count, block_count),
            Direction::Backward => (block_count, space_count),
        };
        plan.input_elems = usize::try_from(input_count).ok();
        plan.output_elems = usize::try_from(output_count).ok();
        debug_assert_eq!(plan.input_elems, element_count(op, &plan.input_shape).ok());
        debug_assert_eq!(plan.output_elems, element_count(op, &plan.output_shape).ok());
        Ok(plan)
    }

    /// The plan of a geometry whose space axes split the input's own axes
    /// further (einops' elementary axes), run forward: input axis `i` is
    /// `parts[i]` consecutive space axes (none for an axis of length 1),
    /// whose extents multiply to `input_shape[i]`. The plan keeps the
    /// input's own shape; strides given for it are split as each run
    /// compiles (an axis of stride `s` split into `(a, b)` has strides
    /// `(s * b, s)`), so strided inputs need no copy.
    pub(crate) fn split(
        op: &'static str,
        space: &[geometry::SpaceAxis],
        groups: &[&[geometry::Factor]],
        parts: &[u8],
        input_shape: &[usize],
    ) -> Result<Self> {
        let mut plan = Plan::new(op, space, groups, Direction::Forward)?;
        debug_assert_eq!(parts.iter().map(|&n| n as usize).sum::<usize>(), space.len());
        debug_assert_eq!(element_count(op, input_shape).ok(), plan.input_elems);
        let rank = input_shape.len().max(parts.len());
        if rank > MAX_RANK {
            return Err(Error::RankTooLarge { op, rank, max: MAX_RANK });
        }
        plan.input_shape.clear();
        plan.input_shape.extend_from_slice(input_shape);
        plan.parts.clear();
        plan.parts.extend_from_slice(parts);
        Ok(plan)
    }

    /// The space side's byte strides per geometry space axis, from strides
    /// per axis of the space side's own shape (see [`Plan::split`]).
    fn split_strides(&self, strides: &[isize], out: &mut ArrayVec<isize, MAX_RANK>) {
        out.clear();
        let mut at = 0;
        for (&n, &s) in self.parts.iter().zip(strides) {
            let axes = &self.geom.space[at..at + n as usize];
            let start = out.len();
            out.extend(axes.iter().map(|_| 0));
            let mut acc = s;
            for (slot, ax) in out[start..].iter_mut().zip(axes).rev() {
                *slot = acc;
                acc = acc.wrapping_mul(ax.extent as isize);
            }
            at += n as usize;
        }
    }

    /// The loop nest a contiguous run of `elem`-byte elements compiles to
    /// (tests compare front-ends' plans with it).
    #[cfg(test)]
    pub(crate) fn copy_plan(&self, elem: usize) -> CopyPlan {
        let mut plan = CopyPlan::placeholder();
        self.compile_contiguous(elem, &mut plan);
        plan
    }

    /// The operator this plan runs, as `"framework op"`.
    pub fn op(&self) -> &'static str {
        self.op
    }

    /// The input shape the plan was built for.
    pub fn input_shape(&self) -> &[usize] {
        &self.input_shape
    }

    /// The output shape.
    pub fn output_shape(&self) -> &[usize] {
        &self.output_shape
    }

    /// Whether this plan moves data from the space side to the block side
    /// (space-to-batch / space-to-depth) or back.
    pub fn direction(&self) -> Direction {
        self.dir
    }

    /// The plan that undoes this one: the same geometry run the other way.
    /// For a batch-to-space plan it is the space-to-batch whose paddings are
    /// the crops (the cropped values come back as zeros).
    ///
    /// ```
    /// use blockshuffle::{tf, Operator};
    /// let s2b = tf::SpaceToBatchNd::new(&[2], &[[1, 1]]).plan(&[1, 2, 1])?;
    /// let b2s = s2b.inverse();
    /// assert_eq!(b2s.input_shape(), s2b.output_shape());
    /// assert_eq!(b2s.run(&s2b.run(&[7, 8])?)?, vec![7, 8]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn inverse(&self) -> Plan {
        Plan {
            op: self.op,
            geom: self.geom.clone(),
            dir: self.dir.reverse(),
            parallelism: self.parallelism,
            streaming: self.streaming,
            kernels: self.kernels,
            input_shape: self.output_shape.clone(),
            output_shape: self.input_shape.clone(),
            input_elems: self.output_elems,
            output_elems: self.input_elems,
            parts: self.parts.clone(),
            compiled: Compiled::default(),
        }
    }

    /// Sets how many threads runs of this plan may use.
    ///
    /// ```
    /// use blockshuffle::{torch, Operator, Parallelism};
    /// let plan = torch::PixelShuffle::new(2).plan(&[1, 4, 1, 1])?.with_parallelism(Parallelism::Auto);
    /// assert_eq!(plan.run(&[1u8, 2, 3, 4])?, vec![1, 2, 3, 4]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn with_parallelism(mut self, parallelism: Parallelism) -> Self {
        self.parallelism = parallelism;
        self
    }

    /// Sets whether runs stream their output past the cache (see [`Streaming`]).
    ///
    /// ```
    /// use blockshuffle::{onnx, Operator, Streaming};
    /// let plan = onnx::SpaceToDepth::new(2).plan(&[1, 1, 2, 2])?.with_streaming(Streaming::Always);
    /// assert_eq!(plan.run(&[1u32, 2, 3, 4])?, vec![1, 2, 3, 4]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn with_streaming(mut self, streaming: Streaming) -> Self {
        self.streaming = streaming;
        self.compiled = Compiled::default();
        self
    }

    /// Sets which kernels runs may use (see [`Kernels`]).
    ///
    /// ```
    /// use blockshuffle::{torch, Kernels, Operator};
    /// let plan = torch::PixelUnshuffle::new(2).plan(&[1, 2, 2])?.with_kernels(Kernels::Portable);
    /// assert_eq!(plan.run(&[1u8, 2, 3, 4])?, vec![1, 2, 3, 4]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn with_kernels(mut self, kernels: Kernels) -> Self {
        self.kernels = kernels;
        self.compiled = Compiled::default();
        self
    }

    /// Compiles the loop nest for `elem`-byte elements and these byte
    /// strides into `plan` (built in place: plans are kilobytes).
    ///
    /// Streaming stores (and the kernels that go with them, which read and
    /// write whole rows and lines) are for row-major layouts only: another
    /// layout (a strided, permuted or broadcast view on either side) is
    /// copied through the cache, by kernels that touch only the elements
    /// the strides address.
    fn compile_strided(&self, elem: usize, space: &[isize], block: &[isize], plan: &mut CopyPlan) {
        // Checked on the space side's own shape and strides (before a
        // split, which keeps a layout row-major or not).
        let (space_shape, block_shape) = match self.dir {
            Direction::Forward => (&self.input_shape, &self.output_shape),
            Direction::Backward => (&self.output_shape, &self.input_shape),
        };
        let row_major = is_row_major(space_shape, space, elem) && is_row_major(block_shape, block, elem);
        self.compile(elem, space, block, row_major, plan)
    }

    /// [`Plan::compile_strided`] of strides known to be row-major or not.
    fn compile(&self, elem: usize, space: &[isize], block: &[isize], row_major: bool, plan: &mut CopyPlan) {
        let mut split = ArrayVec::new();
        let space = if self.parts.is_empty() {
            space
        } else {
            self.split_strides(space, &mut split);
            &split
        };
        plan.build(
            &self.geom,
            self.dir,
            elem,
            &Layouts { space, block },
            row_major && self.streams(elem),
            match self.kernels {
                Kernels::Auto => Isa::detect(),
                Kernels::Avx512 => Isa::detect().min(Isa::Avx512),
                Kernels::Avx2 => Isa::detect().min(Isa::Avx2),
                Kernels::Baseline => Isa::baseline(),
                Kernels::Portable => Isa::Portable,
            },
        )
    }

    /// Whether a run with `elem`-byte elements streams its output.
    fn streams(&self, elem: usize) -> bool {
        match self.streaming {
            Streaming::Always => true,
            Streaming::Never => false,
            Streaming::Auto => self.output_len().saturating_mul(elem) >= cpu_stream_threshold(),
        }
    }

    /// The plan's parallelism setting.
    pub fn parallelism(&self) -> Parallelism {
        self.parallelism
    }

    /// Elements in the input.
    pub fn input_len(&self) -> usize {
        // Shape inference checked that the count fits in 64 bits.
        self.input_elems.unwrap_or(usize::MAX)
    }

    /// Elements in the output.
    pub fn output_len(&self) -> usize {
        self.output_elems.unwrap_or(usize::MAX)
    }

    /// Elements in the output (`output`) or the input, or the overflow error.
    fn count(&self, output: bool) -> Result<usize> {
        let (shape, elems) =
            if output { (&self.output_shape, self.output_elems) } else { (&self.input_shape, self.input_elems) };
        // `None` only when the count overflows: produce that error.
        elems.map_or_else(|| element_count(self.op, shape), Ok)
    }

    /// Bytes of the output (`output`) or the input for `per_elem`-byte
    /// elements, or the overflow error.
    #[allow(
        clippy::unnecessary_lazy_evaluations,
        reason = "an `Error` has drop glue: built eagerly, it is built and dropped on every success"
    )]
    fn byte_count(&self, output: bool, per_elem: usize) -> Result<usize> {
        let elems = self.count(output)?;
        elems.checked_mul(per_elem).ok_or_else(|| Error::Overflow {
            op: self.op,
            what: "byte count",
            a: elems as u128,
            b: per_elem as u128,
            limit: "usize",
        })
    }

    /// Checks that `param` holds the shape's elements of `per_elem` items
    /// each (items are elements of a typed buffer: `per_elem` 1; bytes of
    /// a byte buffer: `per_elem` the element size).
    ///
    /// Inlined, with the error built out of line: on every run's path (a
    /// prepared run of the 64-byte S1 workload spent a tenth of its time
    /// here, comparing `param` with "input" among others).
    #[inline(always)]
    fn check_len(&self, param: &'static str, len: usize, per_elem: usize, unit: &'static str) -> Result<()> {
        let elems = if param == "input" { self.input_elems } else { self.output_elems };
        match elems.and_then(|n| n.checked_mul(per_elem)) {
            Some(expected) if len == expected && expected <= isize::MAX as usize => Ok(()),
            _ => self.len_error(param, len, per_elem, unit),
        }
    }

    /// [`Plan::check_len`]'s error (or `Ok` should the length be right after all).
    #[cold]
    #[inline(never)]
    fn len_error(&self, param: &'static str, len: usize, per_elem: usize, unit: &'static str) -> Result<()> {
        let output = param != "input";
        let shape = if output { &self.output_shape } else { &self.input_shape };
        let expected = self.byte_count(output, per_elem)?;
        if len != expected || expected > isize::MAX as usize {
            return Err(Error::BufferLength { param, len, expected, unit, shape: shape.to_vec() });
        }
        Ok(())
    }

    /// Calls `f` with the loop nest for row-major buffers of `elem`-byte
    /// elements: from the plan's second run on, the one kept for this
    /// element size (the first element size run twice); otherwise compiled
    /// for this run alone.
    fn with_compiled<R>(&self, elem: usize, f: impl FnOnce(&CopyPlan) -> R) -> R {
        let cache = &self.compiled;
        let kept = match cache.kept.get() {
            Some(kept) => Some(kept),
            // Plain loads and stores, not a read-modify-write: two first
            // runs at once may both compile on the stack, which is harmless.
            None if cache.ran.load(Ordering::Relaxed) => Some(cache.kept.get_or_init(|| {
                let mut kept = Box::new((elem, CopyPlan::placeholder()));
                self.compile_contiguous(elem, &mut kept.1);
                kept
            })),
            None => {
                cache.ran.store(true, Ordering::Relaxed);
                None
            }
        };
        if let Some(kept) = kept.filter(|kept| kept.0 == elem) {
            return f(&kept.1);
        }
        let mut plan = CopyPlan::placeholder();
        self.compile_contiguous(elem, &mut plan);
        f(&plan)
    }

    /// Compiles the loop nest for row-major buffers of `elem`-byte elements.
    fn compile_contiguous(&self, elem: usize, plan: &mut CopyPlan) {
        let (space, block) = match self.dir {
            Direction::Forward => (&self.input_shape, &self.output_shape),
            Direction::Backward => (&self.output_shape, &self.input_shape),
        };
        let (mut space_strides, mut block_strides) = (ArrayVec::new(), ArrayVec::new());
        c_strides(space, elem, &mut space_strides);
        c_strides(block, elem, &mut block_strides);
        self.compile(elem, &space_strides, &block_strides, true, plan)
    }

    /// Runs into a new vector. Padding positions get `T::default()`, which is
    /// zero for every numeric type (the frameworks pad with zeros).
    ///
    /// ```
    /// use blockshuffle::{tf, Operator};
    /// let plan = tf::SpaceToBatch::new(2, [[0, 0], [0, 0]]).plan(&[1, 2, 2, 1])?;
    /// assert_eq!(plan.run(&[1, 2, 3, 4])?, vec![1, 2, 3, 4]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn run<T: Copy + Default>(&self, input: &[T]) -> Result<Vec<T>> {
        self.check_len("input", input.len(), 1, "elements")?;
        let n = self.count(true)?;
        let mut out: Vec<T> = allocate(n, size_of::<T>())?;
        self.run_uninit(input, &mut out.spare_capacity_mut()[..n])?;
        // SAFETY: `run_uninit` succeeded, so it wrote every one of the `n`
        // output elements (each is a copied input element or padding).
        unsafe { out.set_len(n) };
        Ok(out)
    }

    /// Runs into `output`, which must hold exactly [`Plan::output_len`]
    /// elements. Allocates nothing.
    ///
    /// ```
    /// use blockshuffle::{torch, Operator};
    /// let plan = torch::PixelUnshuffle::new(2).plan(&[1, 2, 2])?;
    /// let mut out = [0i16; 4];
    /// plan.run_into(&[1, 2, 3, 4], &mut out)?;
    /// assert_eq!(out, [1, 2, 3, 4]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn run_into<T: Copy + Default>(&self, input: &[T], output: &mut [T]) -> Result<()> {
        // SAFETY: `&mut [T]` viewed as `[MaybeUninit<T>]`: same layout, and we
        // only write initialised `T` values (copies of input elements or T::default()).
        let out = unsafe { &mut *(output as *mut [T] as *mut [MaybeUninit<T>]) };
        self.run_uninit(input, out)
    }

    /// Runs into possibly uninitialised memory, which it fully initialises on success.
    pub fn run_uninit<T: Copy + Default>(&self, input: &[T], output: &mut [MaybeUninit<T>]) -> Result<()> {
        self.check_len("input", input.len(), 1, "elements")?;
        self.check_len("output", output.len(), 1, "elements")?;
        let elem = size_of::<T>();
        let default = T::default();
        let pattern = bytes_of(&default);
        self.with_compiled(elem, |plan| {
            // SAFETY: both buffers hold exactly the row-major shapes the plan
            // was compiled for (checked above); `&[T]` and `&mut
            // [MaybeUninit<T>]` cannot overlap.
            unsafe {
                exec::execute(
                    plan,
                    input.as_ptr().cast(),
                    output.as_mut_ptr().cast(),
                    Fill::Pattern(pattern),
                    self.parallelism.threads(),
                    None,
                )
            }
        });
        Ok(())
    }

    /// Runs on raw bytes: `input` holds [`Plan::input_len`] elements of
    /// `elem_size` bytes each, row-major. Padding is zero bytes.
    ///
    /// ```
    /// use blockshuffle::{tf, Operator, DataFormat};
    /// // Three-byte elements (say RGB pixels) are as good as any.
    /// let plan = tf::SpaceToDepth::new(2, DataFormat::Nhwc).plan(&[1, 2, 2, 1])?;
    /// let y = plan.run_bytes(b"aaabbbcccddd", 3)?;
    /// assert_eq!(y, b"aaabbbcccddd");
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn run_bytes(&self, input: &[u8], elem_size: usize) -> Result<Vec<u8>> {
        self.check_len("input", input.len(), elem_size, "bytes")?;
        let n = self.byte_count(true, elem_size)?;
        let mut out: Vec<u8> = allocate(n, 1)?;
        self.run_bytes_uninit(input, elem_size, &mut out.spare_capacity_mut()[..n])?;
        // SAFETY: every output byte was written (see `run`).
        unsafe { out.set_len(n) };
        Ok(out)
    }

    /// [`Plan::run_bytes`] into a caller's buffer of exactly
    /// `output_len() * elem_size` bytes. Allocates nothing.
    ///
    /// ```
    /// use blockshuffle::{openvino, Operator};
    /// let plan = openvino::DepthToSpace::depth_first(2).plan(&[1, 4, 1])?;
    /// let mut out = [0u8; 8];
    /// plan.run_bytes_into(&[1, 0, 2, 0, 3, 0, 4, 0], 2, &mut out)?;
    /// assert_eq!(out, [1, 0, 2, 0, 3, 0, 4, 0]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn run_bytes_into(&self, input: &[u8], elem_size: usize, output: &mut [u8]) -> Result<()> {
        // SAFETY: `&mut [u8]` as `[MaybeUninit<u8>]`, written only with bytes.
        let out = unsafe { &mut *(output as *mut [u8] as *mut [MaybeUninit<u8>]) };
        self.run_bytes_uninit(input, elem_size, out)
    }

    /// [`Plan::run_bytes_into`] into possibly uninitialised memory.
    pub fn run_bytes_uninit(&self, input: &[u8], elem_size: usize, output: &mut [MaybeUninit<u8>]) -> Result<()> {
        self.bytes_uninit(input, elem_size, output, None)
    }

    /// [`Plan::run_bytes_uninit`], reporting progress: the run goes in chunks
    /// of about 16 MiB of output (as finely as the plan's loop nest can be
    /// cut, which may be coarser), and after each `progress` gets the output
    /// bytes done so far and the total (the last call has both equal; a run
    /// of one chunk makes just that call, an empty output none). For
    /// front-ends that show a progress bar on long runs.
    ///
    /// ```
    /// use std::mem::MaybeUninit;
    /// use blockshuffle::{onnx, Operator};
    /// let plan = onnx::SpaceToDepth::new(2).plan(&[1, 1, 2, 2])?;
    /// let mut out = [MaybeUninit::<u8>::uninit(); 4];
    /// let mut seen = Vec::new();
    /// plan.run_bytes_uninit_with_progress(&[1, 2, 3, 4], 1, &mut out, &mut |done, total| seen.push((done, total)))?;
    /// assert_eq!(seen.last(), Some(&(4, 4)));
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn run_bytes_uninit_with_progress(
        &self,
        input: &[u8],
        elem_size: usize,
        output: &mut [MaybeUninit<u8>],
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<()> {
        self.bytes_uninit(input, elem_size, output, Some(progress))
    }

    fn bytes_uninit(
        &self,
        input: &[u8],
        elem_size: usize,
        output: &mut [MaybeUninit<u8>],
        progress: Option<Progress<'_>>,
    ) -> Result<()> {
        self.check_len("input", input.len(), elem_size, "bytes")?;
        self.check_len("output", output.len(), elem_size, "bytes")?;
        self.with_compiled(elem_size, |plan| {
            // SAFETY: lengths checked above against the row-major shapes the
            // plan was compiled for.
            unsafe {
                let (src, dst) = (input.as_ptr(), output.as_mut_ptr().cast());
                exec::execute(plan, src, dst, Fill::Zero, self.parallelism.threads(), progress)
            }
        });
        Ok(())
    }

    /// [`Plan::run_bytes_uninit`] from a strided source: element `index` of the
    /// input is at byte `base + elem_size * Σ index·stride` of `input`
    /// (strides in elements, possibly negative or zero), where `input`
    /// begins at the view's lowest-addressed element: `base` is `elem_size *
    /// Σ (dim - 1)·|stride|` over the negative strides (0 when none is).
    /// Every addressed element must lie inside `input`; this is checked.
    /// A layout other than row-major is copied through the cache whatever
    /// [`Streaming`] says (see [`Plan::with_streaming`]).
    ///
    /// A view with negative strides (rows reversed, as numpy's `x[::-1]`):
    ///
    /// ```
    /// use std::mem::MaybeUninit;
    /// use blockshuffle::{onnx, Operator};
    /// // 1 2 / 3 4 with both axes reversed is stored as 4 3 2 1.
    /// let plan = onnx::SpaceToDepth::new(2).plan(&[1, 1, 2, 2])?;
    /// let mut out = [MaybeUninit::<u8>::uninit(); 4];
    /// plan.run_bytes_strided_uninit(&[4, 3, 2, 1], &[4, 4, -2, -1], 1, &mut out)?;
    /// // SAFETY: the successful run initialised every output byte.
    /// assert_eq!(out.map(|b| unsafe { b.assume_init() }), [1, 2, 3, 4]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    ///
    /// A Fortran-order view:
    ///
    /// ```
    /// use std::mem::MaybeUninit;
    /// use blockshuffle::{onnx, Operator};
    /// // A Fortran-order (column-major) [1, 1, 2, 2] input: 1 2 / 3 4 stored as 1 3 2 4.
    /// let plan = onnx::SpaceToDepth::new(2).plan(&[1, 1, 2, 2])?;
    /// let mut out = [MaybeUninit::<u8>::uninit(); 4];
    /// plan.run_bytes_strided_uninit(&[1, 3, 2, 4], &[1, 1, 1, 2], 1, &mut out)?;
    /// // SAFETY: the successful run initialised every output byte.
    /// assert_eq!(out.map(|b| unsafe { b.assume_init() }), [1, 2, 3, 4]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn run_bytes_strided_uninit(
        &self,
        input: &[u8],
        input_strides: &[isize],
        elem_size: usize,
        output: &mut [MaybeUninit<u8>],
    ) -> Result<()> {
        self.bytes_strided_uninit(input, input_strides, elem_size, output, None)
    }

    /// [`Plan::run_bytes_strided_uninit`], reporting progress as
    /// [`Plan::run_bytes_uninit_with_progress`] does.
    ///
    /// ```
    /// use std::mem::MaybeUninit;
    /// use blockshuffle::{onnx, Operator};
    /// let plan = onnx::SpaceToDepth::new(2).plan(&[1, 1, 2, 2])?;
    /// let mut out = [MaybeUninit::<u8>::uninit(); 4];
    /// let mut last = None;
    /// plan.run_bytes_strided_uninit_with_progress(&[1, 3, 2, 4], &[1, 1, 1, 2], 1, &mut out, &mut |d, t| {
    ///     last = Some((d, t))
    /// })?;
    /// assert_eq!(last, Some((4, 4)));
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn run_bytes_strided_uninit_with_progress(
        &self,
        input: &[u8],
        input_strides: &[isize],
        elem_size: usize,
        output: &mut [MaybeUninit<u8>],
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<()> {
        self.bytes_strided_uninit(input, input_strides, elem_size, output, Some(progress))
    }

    fn bytes_strided_uninit(
        &self,
        input: &[u8],
        input_strides: &[isize],
        elem_size: usize,
        output: &mut [MaybeUninit<u8>],
        progress: Option<Progress<'_>>,
    ) -> Result<()> {
        if input_strides.len() != self.input_shape.len() {
            return Err(Error::StrideCount { param: "input", len: input_strides.len(), rank: self.input_shape.len() });
        }
        self.check_len("output", output.len(), elem_size, "bytes")?;
        let strides = byte_strides(self.op, input_strides, elem_size)?;
        // The buffer begins at the view's lowest-addressed element: element
        // 0 is `base` bytes in (negative strides reach back from it).
        let mut base = 0usize;
        if self.input_shape.iter().all(|&d| d > 0) {
            let (mut lo, mut hi) = (0i128, 0i128);
            for (&d, &s) in self.input_shape.iter().zip(&strides) {
                let reach = (d as i128 - 1) * s as i128;
                if reach < 0 {
                    lo += reach;
                } else {
                    hi += reach;
                }
            }
            let end = hi - lo + elem_size as i128;
            if end > input.len() as i128 {
                return Err(Error::BufferLength {
                    param: "input",
                    len: input.len(),
                    expected: usize::try_from(end).unwrap_or(usize::MAX),
                    unit: "bytes",
                    shape: self.input_shape.to_vec(),
                });
            }
            // `-lo` is at most `end`, which fits the buffer's length.
            base = (-lo) as usize;
        }
        let mut out_strides = ArrayVec::new();
        c_strides(&self.output_shape, elem_size, &mut out_strides);
        let (space, block) = match self.dir {
            Direction::Forward => (strides, out_strides),
            Direction::Backward => (out_strides, strides),
        };
        let mut plan = CopyPlan::placeholder();
        self.compile_strided(elem_size, &space, &block, &mut plan);
        // SAFETY: every input element addressed by the strides from
        // element 0 at `base` lies inside `input` (checked above); the
        // output holds exactly the row-major output shape; the two cannot
        // overlap.
        unsafe {
            let (src, dst) = (input.as_ptr().add(base), output.as_mut_ptr().cast());
            exec::execute(&plan, src, dst, Fill::Zero, self.parallelism.threads(), progress)
        };
        Ok(())
    }

    /// Runs from a strided source into a strided destination (strides in
    /// elements, possibly negative), for views such as ndarray's.
    ///
    /// # Safety
    /// For every in-range index of the input shape, `input + Σ index·stride`
    /// must be a readable `T`, and likewise writable (and not overlapping the
    /// input) for the output; distinct output indices must address distinct
    /// elements.
    pub unsafe fn run_strided<T: Copy + Default>(
        &self,
        input: *const T,
        input_strides: &[isize],
        output: *mut T,
        output_strides: &[isize],
    ) -> Result<()> {
        let rank_check = |param, strides: &[isize], shape: &[usize]| {
            if strides.len() != shape.len() {
                return Err(Error::StrideCount { param, len: strides.len(), rank: shape.len() });
            }
            Ok(())
        };
        rank_check("input", input_strides, &self.input_shape)?;
        rank_check("output", output_strides, &self.output_shape)?;
        let elem = size_of::<T>();
        let (input_strides, output_strides) =
            (byte_strides(self.op, input_strides, elem)?, byte_strides(self.op, output_strides, elem)?);
        let (space, block) = match self.dir {
            Direction::Forward => (input_strides, output_strides),
            Direction::Backward => (output_strides, input_strides),
        };
        let mut plan = CopyPlan::placeholder();
        self.compile_strided(elem, &space, &block, &mut plan);
        let default = T::default();
        let pattern = bytes_of(&default);
        // SAFETY: the caller guarantees the views; the plan only produces offsets
        // of in-range indices.
        unsafe {
            exec::execute(&plan, input.cast(), output.cast(), Fill::Pattern(pattern), self.parallelism.threads(), None)
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{numpy, Operator, Streaming};

    use super::*;

    /// `Streaming::Auto` streams outputs from `cpu_stream_threshold`, the
    /// threshold of this CPU's last-level cache (in bytes, whatever the
    /// element's size); `Always` and `Never` whatever the size.
    #[test]
    fn auto_streams_from_the_threshold_of_this_cpus_cache() {
        let at = cpu_stream_threshold();
        for elem in [1, 4] {
            let plan = |n: usize| numpy::Transpose::new(&[1, 0]).plan(&[2, n / 2]).unwrap();
            assert!(plan(at / elem).streams(elem), "{elem}");
            assert!(!plan(at / elem - 2).streams(elem), "{elem}");
            assert!(!plan(at / elem).with_streaming(Streaming::Never).streams(elem), "{elem}");
            assert!(plan(64).with_streaming(Streaming::Always).streams(elem), "{elem}");
        }
    }
}
