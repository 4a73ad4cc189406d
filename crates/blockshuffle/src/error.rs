//! The one error type of the crate.

use std::sync::Arc;

/// Everything that can go wrong, each variant carrying the numbers that broke
/// the rule and naming the operator (`"tf space-to-batch-nd"`, ...) whose rule
/// it is.
///
/// ```
/// use blockshuffle::{tf, Error, Operator};
///
/// let err = tf::SpaceToBatchNd::new(&[2, 2], &[[0, 1], [0, 0]])
///     .output_shape(&[1, 4, 4, 1])
///     .unwrap_err();
/// assert!(matches!(err, Error::NotDivisible { size: 5, divisor: 2, .. }));
/// assert_eq!(
///     err.to_string(),
///     "tf space-to-batch-nd: padded spatial dim 0 (input 4 + paddings 0 + 1 = 5) is not divisible by block_shape[0] = 2"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input has the wrong number of dimensions for the operator.
    #[error("{op}: input rank is {rank} but {rule}")]
    Rank {
        /// Operator whose rule this is.
        op: &'static str,
        /// The input's rank.
        rank: usize,
        /// The rule, worded with its bound (for example `must be >= 3 (1 + len(block_shape))`).
        rule: String,
    },

    /// A parameter list has the wrong length.
    #[error("{op}: {param} has {len} values but must have {expected} ({why})")]
    ParamLength {
        /// Operator whose rule this is.
        op: &'static str,
        /// The parameter (`block_shape`, `paddings`, `crops_begin`, ...).
        param: &'static str,
        /// How many values it has.
        len: usize,
        /// How many it must have.
        expected: usize,
        /// Where that number comes from.
        why: &'static str,
    },

    /// A block size is below the operator's minimum.
    #[error("{op}: {param}{index} = {value} must be >= {min}")]
    BlockTooSmall {
        /// Operator whose rule this is.
        op: &'static str,
        /// The parameter (`block_shape`, `block_size`, `upscale_factor`, ...).
        param: &'static str,
        /// `[i]` for a list entry, empty for a scalar parameter.
        index: Index,
        /// The value given.
        value: i64,
        /// The operator's minimum.
        min: i64,
    },

    /// A padding or crop amount is negative.
    #[error("{op}: {param}{index} = {value} must be >= 0")]
    Negative {
        /// Operator whose rule this is.
        op: &'static str,
        /// The parameter (`paddings`, `crops`, `pads_begin`, ...).
        param: &'static str,
        /// Which entry.
        index: Index,
        /// The value given.
        value: i64,
    },

    /// A dimension is not a multiple of what the operator divides it by.
    #[error("{op}: {what} is not divisible by {divisor_name} = {divisor}")]
    NotDivisible {
        /// Operator whose rule this is.
        op: &'static str,
        /// The dimension, worded with the numbers it is made of.
        what: String,
        /// Its size.
        size: u64,
        /// What it must be divided by, as the framework names it.
        divisor_name: String,
        /// The divisor.
        divisor: u64,
    },

    /// Crops remove more than the dimension holds.
    #[error("{op}: crops of spatial dim {axis} ({begin} + {end}) exceed its uncropped size {size}")]
    CropTooLarge {
        /// Operator whose rule this is.
        op: &'static str,
        /// Spatial dimension index (0-based, as the framework counts it).
        axis: usize,
        /// Uncropped size (input dim times block).
        size: u64,
        /// Crop at the start.
        begin: u64,
        /// Crop at the end.
        end: u64,
    },

    /// A parameter that this crate requires to be neutral is not (see the
    /// operator's documentation for why).
    #[error("{op}: {param}{index} = {value} but must be {required} ({why})")]
    Unsupported {
        /// Operator whose rule this is.
        op: &'static str,
        /// The parameter.
        param: &'static str,
        /// Which entry (empty for a scalar).
        index: Index,
        /// The value given.
        value: i64,
        /// The value required.
        required: i64,
        /// Why.
        why: &'static str,
    },

    /// TensorFlow's kernels handle at most four block dimensions once the
    /// leading and trailing ones with block 1 and no padding are set aside.
    #[error("{op}: {count} block dimensions remain after combining leading and trailing ones with block 1 and no padding, but TensorFlow allows at most {max}")]
    TooManyBlockDims {
        /// Operator whose rule this is.
        op: &'static str,
        /// Block dimensions left.
        count: usize,
        /// The maximum.
        max: usize,
    },

    /// A textual parameter (mode, data format) has a value the operator does not know.
    #[error("{op}: {param} = {value:?} is not one of {allowed}")]
    UnknownValue {
        /// Operator whose rule this is.
        op: &'static str,
        /// The parameter.
        param: &'static str,
        /// The value given.
        value: String,
        /// The accepted values.
        allowed: &'static str,
    },

    /// `NCHW_VECT_C` needs a last dimension of 4 (four int8 channels per element).
    #[error("{op}: NCHW_VECT_C needs the last input dim to be 4 (qint8 x 4), got {size}")]
    VectSize {
        /// Operator whose rule this is.
        op: &'static str,
        /// The last dimension's size.
        size: usize,
    },

    /// Shape arithmetic would leave the 64-bit (or address-space) range.
    #[error("{op}: {what} overflows ({a} * {b} or {a} + {b} does not fit in {limit})")]
    Overflow {
        /// Operator whose rule this is.
        op: &'static str,
        /// What was being computed.
        what: &'static str,
        /// One operand.
        a: u128,
        /// The other operand.
        b: u128,
        /// The range it must fit in.
        limit: &'static str,
    },

    /// More dimensions than the engine supports.
    #[error("{op}: rank {rank} exceeds the supported maximum {max}")]
    RankTooLarge {
        /// Operator whose rule this is.
        op: &'static str,
        /// The rank given.
        rank: usize,
        /// The maximum ([`crate::MAX_RANK`]).
        max: usize,
    },

    /// A buffer's length does not match its shape. Lengths count the
    /// slice's items, which `unit` names: elements of a typed buffer, bytes
    /// of a byte buffer (`run_bytes`, `run_bytes_into`, ...).
    #[error("{param} holds {len} {unit} but its shape {shape:?} needs {expected} {unit}")]
    BufferLength {
        /// `input` or `output`.
        param: &'static str,
        /// Items given.
        len: usize,
        /// Items needed.
        expected: usize,
        /// What the lengths count: `"elements"` or `"bytes"`.
        unit: &'static str,
        /// The shape.
        shape: Vec<usize>,
    },

    /// A strided view's strides do not match its rank.
    #[error("{param} has {len} strides but rank {rank}")]
    StrideCount {
        /// `input` or `output`.
        param: &'static str,
        /// Strides given.
        len: usize,
        /// The rank.
        rank: usize,
    },

    /// An axis number (numpy's `axes`) outside `-rank..rank`.
    #[error("{op}: {param}[{index}] = {axis} is out of bounds for an input of rank {rank} (axes run from -{rank} to {})", *.rank as i64 - 1)]
    AxisOutOfBounds {
        /// Operator whose rule this is.
        op: &'static str,
        /// The parameter (`axes`).
        param: &'static str,
        /// Which entry.
        index: usize,
        /// The value given.
        axis: i64,
        /// The input's rank.
        rank: usize,
    },

    /// An axis named twice in a permutation.
    #[error("{op}: {param}[{index}] = {axis} repeats axis {dim}, already {param}[{first}]")]
    RepeatedAxis {
        /// Operator whose rule this is.
        op: &'static str,
        /// The parameter (`axes`).
        param: &'static str,
        /// Which entry repeats.
        index: usize,
        /// The value given there.
        axis: i64,
        /// The axis it names (counted from 0).
        dim: usize,
        /// The entry that named it first.
        first: usize,
    },

    /// An einops pattern that einops rejects, whatever the input.
    #[error("{op}: pattern {pattern:?}: {problem}")]
    Pattern {
        /// Operator whose rule this is.
        op: &'static str,
        /// The pattern given.
        pattern: String,
        /// What is wrong, naming the axis, character or part of the pattern.
        problem: String,
    },

    /// An axis length given beside an einops pattern that einops rejects.
    #[error("{op}: size {name}={value} {problem}")]
    AxisSize {
        /// Operator whose rule this is.
        op: &'static str,
        /// The axis name given.
        name: String,
        /// The length given.
        value: u64,
        /// What is wrong with it.
        problem: &'static str,
    },

    /// An input axis whose length is not what the lengths given for its
    /// composition multiply to.
    #[error("{op}: input axis {axis} `{composition}` has length {length}, not {product} ({known})")]
    AxisLength {
        /// Operator whose rule this is.
        op: &'static str,
        /// The input axis (counted from 0).
        axis: usize,
        /// Its part of the pattern (`(h p1)`, `c`, `()`).
        composition: String,
        /// Its length.
        length: u64,
        /// The lengths given for its names (`h=2 * p1=3`; `a unit axis`).
        known: String,
        /// Their product, the length it must have.
        product: u64,
    },

    /// A command-line flag is missing, unknown, repeated or malformed.
    #[error("{op}: {flag} {problem}")]
    Flag {
        /// Operator whose flags these are.
        op: &'static str,
        /// The flag, as given.
        flag: String,
        /// What is wrong with it.
        problem: String,
    },

    /// No operator of that name in the catalogue ([`crate::catalog::CATALOG`] lists them).
    #[error("unknown operator {framework:?} {op:?}: the catalogue has no such framework and operator")]
    UnknownOperator {
        /// The framework given.
        framework: String,
        /// The operator given.
        op: String,
    },

    /// A `.npy` file that cannot be read or written as asked.
    #[error("{path}: {problem}")]
    Npy {
        /// The file.
        path: String,
        /// What is wrong, with the numbers involved.
        problem: String,
    },

    /// An I/O error on a file; [`std::error::Error::source`] gives the
    /// [`IoError`] whole (its kind, OS error code and message).
    ///
    /// ```
    /// use std::error::Error as _;
    /// let err = blockshuffle::npy::read(std::path::Path::new("/no/such/file.npy")).unwrap_err();
    /// let source = err.source().and_then(|s| s.downcast_ref::<blockshuffle::IoError>()).unwrap();
    /// assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
    /// assert!(err.to_string().starts_with("/no/such/file.npy: "), "{err}");
    /// ```
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: IoError,
    },

    /// The output does not fit in memory.
    #[error("cannot allocate {bytes} bytes for the output")]
    Allocation {
        /// Bytes asked for.
        bytes: u128,
    },

    /// An output shape given by the caller differs from the inferred one.
    #[error("output shape {given:?} differs from the operator's output shape {expected:?}")]
    OutputShape {
        /// The shape given.
        given: Vec<usize>,
        /// The shape the operator produces.
        expected: Vec<usize>,
    },
}

impl Error {
    /// An [`Error::Io`] on the file at `path`.
    ///
    /// ```
    /// let e = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
    /// let err = blockshuffle::Error::io("out.npy", e);
    /// assert_eq!(err.to_string(), "out.npy: permission denied");
    /// ```
    pub fn io(path: impl Into<String>, error: std::io::Error) -> Error {
        Error::Io { path: path.into(), source: IoError(Arc::new(error)) }
    }
}

/// A [`std::io::Error`] kept whole, shared so that [`Error`] stays `Clone`.
/// Two are equal when their kinds, OS error codes and messages are.
///
/// ```
/// use blockshuffle::IoError;
/// let e = IoError::from(std::io::Error::from_raw_os_error(2));
/// assert_eq!((e.kind(), e.raw_os_error()), (std::io::ErrorKind::NotFound, Some(2)));
/// assert_eq!(e, IoError::from(std::io::Error::from_raw_os_error(2)));
/// ```
#[derive(Debug, Clone)]
pub struct IoError(Arc<std::io::Error>);

impl IoError {
    /// The error itself.
    ///
    /// ```
    /// let e = blockshuffle::IoError::from(std::io::Error::other("disk on fire"));
    /// assert_eq!(e.get().to_string(), "disk on fire");
    /// ```
    pub fn get(&self) -> &std::io::Error {
        &self.0
    }
}

impl std::ops::Deref for IoError {
    type Target = std::io::Error;

    fn deref(&self) -> &std::io::Error {
        &self.0
    }
}

impl From<std::io::Error> for IoError {
    fn from(e: std::io::Error) -> Self {
        IoError(Arc::new(e))
    }
}

impl PartialEq for IoError {
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind()
            && self.raw_os_error() == other.raw_os_error()
            && self.to_string() == other.to_string()
    }
}

impl Eq for IoError {}

impl std::fmt::Display for IoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for IoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// An optional list position in an error message: `[3]`, or nothing for a scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Index(pub Option<usize>);

impl std::fmt::Display for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(i) => write!(f, "[{i}]"),
            None => Ok(()),
        }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
