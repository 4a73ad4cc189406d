//! Runs `examples/atrous.rs`, whose assertions check that space-to-batch,
//! convolution and batch-to-space equal the direct dilated convolution.

#[path = "../examples/atrous.rs"]
mod atrous;

#[test]
fn atrous_convolution_through_space_to_batch_equals_the_direct_one() {
    atrous::main().unwrap();
}
