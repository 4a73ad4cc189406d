//! The architecture layer, below every kernel: instruction-set detection
//! ([`isa`]), the caches' sizes and the first level's sets and ways
//! ([`cache`]), the per-ISA vector
//! registers ([`vector`]) and the memory primitives every kernel uses
//! ([`mem`]).
//!
//! Layer: arch (the lowest); imports nothing from the engine.

pub(crate) mod cache;
pub(crate) mod isa;
pub(crate) mod mem;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vector;

pub(crate) use isa::Isa;
