//! einops: `einops.rearrange(x, pattern, **sizes)` with einops 0.8's
//! semantics, on the same engine as the block operators.
//!
//! A rearrangement splits each input axis into elementary axes (the names
//! of its composition on the left), permutes them and merges them into the
//! output axes (the compositions on the right): the engine's geometry with
//! the elementary axes as its space axes. Every block operator is one:
//! `pixel_shuffle` is `'... (c r1 r2) h w -> ... c (h r1) (w r2)'`, and
//! compiles to the same loop nest.
//!
//! | rule | checked by |
//! | --- | --- |
//! | the pattern's syntax (names, one-level parentheses, one `...` a side, unit axes `1` and `()`) | [`Rearrange::new`] |
//! | the same names on both sides, none twice on a side; `...` on both sides or neither, not parenthesised on the left | [`Rearrange::new`] |
//! | sizes name axes of the pattern, once each; at most one unknown length per composition on the left | [`Rearrange::new`] |
//! | input rank = the left side's axes (at least those besides `...`) | [`Operator::plan`] |
//! | a composition's length is its known lengths' product, or divisible by it (the unknown one inferred) | [`Operator::plan`] |
//!
//! Elementary and output axes are limited to [`crate::MAX_RANK`] each.

mod pattern;
#[cfg(test)]
mod tests;

use arrayvec::ArrayVec;

use self::pattern::{valid_name, Axis, Item, Pattern};
use crate::engine::geometry::{self, o, Factor, SpaceAxis};
use crate::ops::check_max_rank;
use crate::{Error, Operator, Plan, Result, MAX_RANK};

const OP: &str = "einops rearrange";

/// `einops.rearrange(x, pattern, **sizes)`: split the input's axes into
/// named ones, permute them, merge them.
///
/// The pattern is parsed and checked once, by [`Rearrange::new`]; what
/// depends on the input (its rank, its lengths against the compositions)
/// is checked by [`Operator::plan`].
///
/// ```
/// use blockshuffle::{einops, torch, Operator};
///
/// // Space-to-depth of NHWC images, by 2.
/// let s2d = einops::Rearrange::new("b (h h1) (w w1) c -> b h w (h1 w1 c)", &[("h1", 2), ("w1", 2)])?;
/// let x: Vec<u16> = (0..16).collect();
/// let (y, shape) = s2d.apply(&x, &[1, 4, 4, 1])?;
/// assert_eq!(shape.as_slice(), &[1, 2, 2, 4]);
/// assert_eq!(&y[..4], &[0, 1, 4, 5]);
///
/// // pixel_shuffle, written as a pattern.
/// let ps = einops::Rearrange::new("... (c r1 r2) h w -> ... c (h r1) (w r2)", &[("r1", 2), ("r2", 2)])?;
/// assert_eq!(ps.apply(&x, &[4, 2, 2])?, torch::PixelShuffle::new(2).apply(&x, &[4, 2, 2])?);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rearrange {
    text: String,
    pattern: Pattern,
    /// The sizes given, as given.
    sizes: Vec<(String, u64)>,
    /// Each name's length when given (indexed as `pattern.names`).
    known: Vec<Option<u64>>,
}

impl Rearrange {
    /// Parses `pattern` with the lengths `sizes` gives some of its axes,
    /// and checks both as einops does before it sees an input.
    ///
    /// ```
    /// use blockshuffle::einops::Rearrange;
    /// let err = Rearrange::new("b (h w) -> b h w", &[]).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "einops rearrange: pattern \"b (h w) -> b h w\": cannot infer both `h` and `w` of `(h w)`: give the lengths of all but one of them"
    /// );
    /// let err = Rearrange::new("b h -> h b", &[("c", 3)]).unwrap_err();
    /// assert_eq!(err.to_string(), "einops rearrange: size c=3 names no axis of the pattern");
    /// ```
    pub fn new(pattern: &str, sizes: &[(&str, usize)]) -> Result<Self> {
        let parsed = Pattern::parse(pattern).map_err(|problem| Error::Pattern {
            op: OP,
            pattern: pattern.to_string(),
            problem,
        })?;
        let mut known = vec![None; parsed.names.len()];
        let mut given = Vec::with_capacity(sizes.len());
        for (name, value) in sizes {
            let (name, value) = (*name, *value as u64);
            let size_error = |problem| Error::AxisSize { op: OP, name: name.to_string(), value, problem };
            if !valid_name(name) {
                return Err(size_error("is not a valid axis name"));
            }
            let Some(at) = parsed.names.iter().position(|n| n == name) else {
                return Err(size_error("names no axis of the pattern"));
            };
            if known[at].is_some() {
                return Err(size_error("is given twice"));
            }
            known[at] = Some(value);
            given.push((name.to_string(), value));
        }
        for axis in &parsed.left {
            let Axis::Group(items) = axis else { continue };
            let unknown: Vec<String> = items
                .iter()
                .filter_map(|i| match i {
                    Item::Name(n) if known[*n].is_none() => Some(format!("`{}`", parsed.names[*n])),
                    _ => None,
                })
                .collect();
            if unknown.len() > 1 {
                let (last, rest) = unknown.split_last().expect("two or more");
                return Err(Error::Pattern {
                    op: OP,
                    pattern: pattern.to_string(),
                    problem: format!(
                        "cannot infer both {} and {last} of `{}`: give the lengths of all but one of them",
                        rest.join(", "),
                        parsed.show(axis)
                    ),
                });
            }
        }
        Ok(Rearrange { text: pattern.to_string(), pattern: parsed, sizes: given, known })
    }

    /// The pattern, as given.
    ///
    /// ```
    /// let r = blockshuffle::einops::Rearrange::new("a b -> b a", &[("a", 2)])?;
    /// assert_eq!((r.pattern(), r.sizes()), ("a b -> b a", &[("a".to_string(), 2)][..]));
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn pattern(&self) -> &str {
        &self.text
    }

    /// The axis lengths given, as given.
    pub fn sizes(&self) -> &[(String, u64)] {
        &self.sizes
    }
}

impl Operator for Rearrange {
    fn name(&self) -> &'static str {
        OP
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let p = &self.pattern;
        let rank = input_shape.len();
        check_max_rank(OP, rank)?;
        let others = p.left.len() - usize::from(p.ellipsis);
        if p.ellipsis && rank < others {
            let rule = format!("must be >= {others} (the pattern's left side has {others} axes besides `...`)");
            return Err(Error::Rank { op: OP, rank, rule });
        }
        if !p.ellipsis && rank != others {
            return Err(Error::Rank { op: OP, rank, rule: format!("must be {others} (the pattern's left side)") });
        }
        let ellipsis = rank - others;
        let elementary = p.names.len() + ellipsis;
        let outputs: usize = p.right.iter().map(|a| if *a == Axis::Ellipsis { ellipsis } else { 1 }).sum();
        for rank in [elementary, outputs] {
            check_max_rank(OP, rank)?;
        }

        // The elementary axes, in the left side's order, and where each
        // name and each of the ellipsis' axes is among them.
        let mut space: ArrayVec<SpaceAxis, MAX_RANK> = ArrayVec::new();
        let mut parts: ArrayVec<u8, MAX_RANK> = ArrayVec::new();
        let mut at_name = [0usize; MAX_RANK];
        let mut at_ellipsis: ArrayVec<usize, MAX_RANK> = ArrayVec::new();
        let mut dims = input_shape.iter().map(|&d| d as u64).enumerate();
        for axis in &p.left {
            match axis {
                Axis::Ellipsis => {
                    for (_, length) in dims.by_ref().take(ellipsis) {
                        at_ellipsis.push(space.len());
                        space.push(SpaceAxis::plain(length));
                        parts.push(1);
                    }
                }
                Axis::Group(items) => {
                    let (dim, length) = dims.next().expect("rank checked above");
                    let lengths = self.lengths(axis, items, dim, length)?;
                    for (item, length) in items.iter().zip(lengths) {
                        let Item::Name(n) = item else { unreachable!("no `...` in a left composition") };
                        at_name[*n] = space.len();
                        space.push(SpaceAxis::plain(length));
                    }
                    parts.push(items.len() as u8);
                }
            }
        }

        // The output axes, each a group of elementary axes.
        // (At most MAX_RANK of them, each of at most MAX_RANK axes: checked above.)
        let mut groups: ArrayVec<ArrayVec<Factor, MAX_RANK>, MAX_RANK> = ArrayVec::new();
        for axis in &p.right {
            match axis {
                Axis::Ellipsis => {
                    for &e in &at_ellipsis {
                        groups.push([o(e)].into_iter().collect());
                    }
                }
                Axis::Group(items) => {
                    let mut group = ArrayVec::new();
                    for item in items {
                        match item {
                            Item::Name(n) => group.push(o(at_name[*n])),
                            Item::Ellipsis => group.extend(at_ellipsis.iter().map(|&e| o(e))),
                        }
                    }
                    groups.push(group);
                }
            }
        }
        let refs: ArrayVec<&[Factor], MAX_RANK> = groups.iter().map(|g| g.as_slice()).collect();
        Plan::split(OP, &space, &refs, &parts, input_shape)
    }
}

impl Rearrange {
    /// The lengths of the names of left composition `axis` (`items`), input
    /// axis `dim` of `length`: the known ones, and the unknown one inferred.
    /// Allocates only to word an error.
    fn lengths(&self, axis: &Axis, items: &[Item], dim: usize, length: u64) -> Result<ArrayVec<u64, MAX_RANK>> {
        let p = &self.pattern;
        let name = |item: &Item| match item {
            Item::Name(n) => *n,
            Item::Ellipsis => unreachable!("no `...` in a left composition (Pattern::parse)"),
        };
        let mut lengths: ArrayVec<u64, MAX_RANK> = ArrayVec::new();
        let (mut product, mut unknown) = (1u64, None);
        for (slot, item) in items.iter().enumerate() {
            let known = self.known[name(item)];
            match known {
                Some(v) => product = geometry::mul(OP, "product of a composition's lengths", product, v)?,
                None => unknown = Some(slot),
            }
            lengths.push(known.unwrap_or(0));
        }
        // The names whose lengths were given, `a * b` or with the lengths.
        let given = |with_lengths: bool| {
            let words: Vec<String> = items
                .iter()
                .filter_map(|i| self.known[name(i)].map(|v| (&p.names[name(i)], v)))
                .map(|(n, v)| if with_lengths { format!("{n}={v}") } else { n.clone() })
                .collect();
            words.join(" * ")
        };
        match unknown {
            None if length != product => Err(Error::AxisLength {
                op: OP,
                axis: dim,
                composition: p.show(axis),
                length,
                known: if items.is_empty() { "a unit axis".into() } else { given(true) },
                product,
            }),
            None => Ok(lengths),
            Some(_) if product == 0 || !length.is_multiple_of(product) => Err(Error::NotDivisible {
                op: OP,
                what: format!("input axis {dim} `{}` of length {length}", p.show(axis)),
                size: length,
                divisor_name: given(false),
                divisor: product,
            }),
            Some(slot) => {
                lengths[slot] = length / product;
                Ok(lengths)
            }
        }
    }
}
