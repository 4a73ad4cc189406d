//! Helpers shared by the integration tests.

pub mod differential;
pub mod golden;
pub mod guarded;
pub mod reference;
