//! The `.npy` reader on arbitrary bytes: never a panic, never an allocation
//! beyond what the bytes hold, and a successful read is self-consistent.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(a) = blockshuffle::npy::read_bytes(data) {
        let n: usize = a.shape().iter().product();
        assert_eq!(a.data().len(), n * a.elem_size());
        assert!(a.data().len() <= data.len());
    }
});
