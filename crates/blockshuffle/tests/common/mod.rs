//! Helpers shared by the integration tests.

pub mod guarded;
pub mod reference;
