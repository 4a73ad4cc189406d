//! `npy::run_file_with_progress` works in bounded memory: the input is
//! mapped, not read, and the output is written through a map of its file,
//! so the process's own (anonymous) memory does not grow with the tensor.
//! Alone in its file, so that no other test allocates while it measures.

#![cfg(target_os = "linux")]

use blockshuffle::{npy, torch, Operator, Parallelism};

/// The process's resident anonymous memory, in bytes.
fn rss_anon() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("RssAnon:")).expect("RssAnon in /proc/self/status");
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

#[test]
fn running_a_file_does_not_hold_the_tensor_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("x.npy"), dir.path().join("y.npy"));
    let shape = vec![4, 64, 256, 384]; // 96 MiB of float32
    let len: usize = shape.iter().product::<usize>() * 4;
    {
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        npy::write(&input, &npy::NpyArray::from_bytes("<f4", shape.clone(), data).unwrap()).unwrap();
    }
    let op = torch::PixelShuffle::new(2);
    let base = rss_anon();
    let mut peak = base;
    let mut reports = 0;
    npy::run_file_with_progress(&op, &input, &output, Parallelism::Sequential, &mut |_, _| {
        peak = peak.max(rss_anon());
        reports += 1;
    })
    .unwrap();
    assert!(reports >= 2, "{reports} progress reports");
    let grown = peak.saturating_sub(base);
    assert!(grown < 16 << 20, "anonymous memory grew by {grown} bytes during a run over {len} bytes");

    // And the output is the operator's.
    let x = npy::read(&input).unwrap();
    let want = op.plan(x.shape()).unwrap().run_bytes(x.data(), 4).unwrap();
    let y = npy::read(&output).unwrap();
    assert_eq!(y.shape(), &[4, 16, 512, 768]);
    assert!(y.data() == want.as_slice(), "output differs from the in-memory run");
}
