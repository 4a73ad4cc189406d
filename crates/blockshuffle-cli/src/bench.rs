//! `blockshuffle bench`: each workload's operator time against a memcpy of
//! the same output bytes, measured in the same process.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use blockshuffle::catalog::OpSpec;
use blockshuffle::{Kernels, Operator, Parallelism, Streaming};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::{usage, Failure};

/// The workloads the binary carries (a copy of `shared/bench/workloads.json`).
const DEFAULT_WORKLOADS: &str = include_str!("../data/workloads.json");

const HELP: &str = "\
blockshuffle bench: time each workload's operator (into a preallocated output)
against copy_from_slice of the same byte count, in one process.

USAGE:
    blockshuffle bench [--workloads FILE] [--threads N] [--reps R] [--json FILE] [--filter ID,...]

    --workloads FILE  workloads in the format of shared/bench/workloads.json (default: built in);
                      any catalogue operator, numpy transpose and einops rearrange among them
                      (shared/bench/transpose.json: HPTT's transpositions)
    --threads N       threads for the operator and the copy; 0 or absent: all cores
    --reps R          timed repetitions per workload, after one warm-up (default 7); the median is reported
    --json FILE       also write the results as JSON
    --filter IDS      only these workload ids (comma-separated)
    --streaming MODE  auto (default), always or never: cache-bypassing stores for the output
    --kernels SET     auto (default: the widest this CPU runs), avx512, avx2, baseline or portable

After the large workloads, a table gives the distribution of the ratios to memcpy (geometric
mean, 90th percentile, maximum, counts above 1.10x and 1.5x), over all of them and per output
size class, with the allocating call's ratio beside it. tools/broad_workloads.py writes the
broad benchmark (640 workloads over every operator, element sizes 1 to 32 bytes, blocks 2 to 16).
";

#[derive(Deserialize)]
struct Workloads {
    #[serde(default)]
    large: Vec<Workload>,
    #[serde(default)]
    small: Vec<Workload>,
}

#[derive(Deserialize, Clone)]
struct Workload {
    id: String,
    framework: String,
    op: String,
    args: Vec<String>,
    dtype: String,
    shape: Vec<usize>,
}

#[derive(Serialize)]
struct Report {
    threads: usize,
    results: Vec<Row>,
}

#[derive(Serialize)]
struct Row {
    id: String,
    bytes_out: usize,
    op_s: f64,
    memcpy_s: f64,
    ratio: f64,
    alloc_s: f64,
}

fn elem_size(dtype: &str) -> Option<usize> {
    Some(match dtype {
        "bool" | "int8" | "uint8" => 1,
        "float16" | "bfloat16" | "int16" | "uint16" => 2,
        "float32" | "int32" | "uint32" => 4,
        "float64" | "int64" | "uint64" | "complex64" => 8,
        "complex128" => 16,
        // numpy's raw void types (`|V3`): the broad benchmark's odd sizes.
        v => v.strip_prefix('V')?.parse().ok().filter(|&n| n > 0)?,
    })
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64()
}

struct Options {
    workloads: Option<PathBuf>,
    threads: usize,
    reps: usize,
    json: Option<PathBuf>,
    filter: Option<Vec<String>>,
    streaming: Streaming,
    kernels: Kernels,
}

fn parse(args: &[String]) -> Result<Option<Options>, Failure> {
    let mut o = Options {
        workloads: None,
        threads: 0,
        reps: 7,
        json: None,
        filter: None,
        streaming: Streaming::Auto,
        kernels: Kernels::Auto,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--help" || arg == "-h" {
            out!("{HELP}");
            return Ok(None);
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (arg.as_str(), None),
        };
        let mut value =
            || inline.clone().or_else(|| it.next().cloned()).ok_or_else(|| usage(format!("{name} needs a value")));
        match name {
            "--workloads" => o.workloads = Some(value()?.into()),
            "--threads" => o.threads = value()?.parse().map_err(|_| usage("--threads takes a whole number"))?,
            "--reps" => {
                o.reps = value()?.parse().map_err(|_| usage("--reps takes a whole number"))?;
                if o.reps == 0 {
                    return Err(usage("--reps must be at least 1"));
                }
            }
            "--json" => o.json = Some(value()?.into()),
            "--filter" => o.filter = Some(value()?.split(',').map(str::to_string).collect()),
            "--streaming" => {
                o.streaming = match value()?.as_str() {
                    "auto" => Streaming::Auto,
                    "always" => Streaming::Always,
                    "never" => Streaming::Never,
                    other => return Err(usage(format!("--streaming {other:?} is not auto, always or never"))),
                }
            }
            "--kernels" => {
                o.kernels = match value()?.as_str() {
                    "auto" => Kernels::Auto,
                    "avx512" => Kernels::Avx512,
                    "avx2" => Kernels::Avx2,
                    "baseline" => Kernels::Baseline,
                    "portable" => Kernels::Portable,
                    other => {
                        return Err(usage(format!(
                            "--kernels {other:?} is not auto, avx512, avx2, baseline or portable"
                        )))
                    }
                }
            }
            _ => return Err(usage(format!("bench: unknown argument {arg:?}"))),
        }
    }
    Ok(Some(o))
}

/// Copies `src` into `dst` on `threads` threads (contiguous chunks).
fn parallel_copy(src: &[u8], dst: &mut [u8], threads: usize) {
    if threads <= 1 {
        dst.copy_from_slice(src);
        return;
    }
    let chunk = src.len().div_ceil(threads).max(1);
    dst.par_chunks_mut(chunk).zip(src.par_chunks(chunk)).for_each(|(d, s)| d.copy_from_slice(s));
}

pub fn main(args: &[String]) -> Result<(), Failure> {
    let Some(o) = parse(args)? else { return Ok(()) };
    let text = match &o.workloads {
        Some(p) => {
            std::fs::read_to_string(p).map_err(|e| Failure { message: format!("{}: {e}", p.display()), code: 1 })?
        }
        None => DEFAULT_WORKLOADS.to_string(),
    };
    let w: Workloads =
        serde_json::from_str(&text).map_err(|e| Failure { message: format!("workloads: {e}"), code: 1 })?;
    let threads = if o.threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { o.threads };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Failure { message: format!("thread pool: {e}"), code: 1 })?;
    let parallelism = if threads == 1 { Parallelism::Sequential } else { Parallelism::Threads(threads) };
    let keep = |wl: &Workload| o.filter.as_ref().is_none_or(|f| f.contains(&wl.id));

    outln!("threads: {threads}, reps: {} (median after one warm-up)", o.reps);
    outln!(
        "{:<5} {:>9} {:>11} {:>11} {:>7} {:>8} {:>10}  operator",
        "id",
        "MiB out",
        "op ms",
        "memcpy ms",
        "ratio",
        "GB/s",
        "alloc ms"
    );
    let mut rows = Vec::new();
    for wl in w.large.iter().filter(|wl| keep(wl)) {
        let row = pool.install(|| large(wl, parallelism, o.streaming, o.kernels, threads, o.reps))?;
        outln!(
            "{:<5} {:>9.1} {:>11.3} {:>11.3} {:>7.3} {:>8.2} {:>10.3}  {} {} {}",
            row.id,
            row.bytes_out as f64 / (1 << 20) as f64,
            row.op_s * 1e3,
            row.memcpy_s * 1e3,
            row.ratio,
            row.bytes_out as f64 / row.op_s / 1e9,
            row.alloc_s * 1e3,
            wl.framework,
            wl.op,
            wl.args.join(" ")
        );
        rows.push(row);
    }
    summary(&rows);
    let small: Vec<&Workload> = w.small.iter().filter(|wl| keep(wl)).collect();
    if !small.is_empty() {
        outln!(
            "{:<5} {:>9} {:>11} {:>11}  operator (per call, plan + run into a buffer)",
            "id",
            "bytes out",
            "op ns",
            "memcpy ns"
        );
    }
    for wl in small {
        let row = per_call(wl)?;
        outln!(
            "{:<5} {:>9} {:>11.1} {:>11.1}  {} {} {}",
            row.id,
            row.bytes_out,
            row.op_s * 1e9,
            row.memcpy_s * 1e9,
            wl.framework,
            wl.op,
            wl.args.join(" ")
        );
        rows.push(row);
    }
    if let Some(path) = &o.json {
        let report = Report { threads, results: rows };
        let text = serde_json::to_string_pretty(&report).expect("serialisable");
        std::fs::write(path, text).map_err(|e| Failure { message: format!("{}: {e}", path.display()), code: 1 })?;
    }
    Ok(())
}

/// The distribution of the ratios to memcpy, over all workloads and per
/// size class: geometric mean, 90th percentile, maximum, and how many are
/// above 1.10x (the goal for outputs of 16 MiB and more) and 1.5x (the goal
/// for smaller ones); the allocating call's ratio beside it.
fn summary(rows: &[Row]) {
    if rows.is_empty() {
        return;
    }
    const MIB: usize = 1 << 20;
    let classes: [(&str, fn(usize) -> bool); 4] = [
        ("all", |_| true),
        ("< 1 MiB", |b| b < MIB),
        ("1-16 MiB", |b| (MIB..16 * MIB).contains(&b)),
        (">= 16 MiB", |b| b >= 16 * MIB),
    ];
    outln!(
        "{:<10} {:>5} {:>8} {:>7} {:>7} {:>7} {:>7}  {:>11} {:>9}",
        "size",
        "count",
        "geomean",
        "p90",
        "max",
        ">1.10x",
        ">1.5x",
        "alloc gmean",
        "alloc max"
    );
    for (name, keep) in classes {
        let class: Vec<&Row> = rows.iter().filter(|r| keep(r.bytes_out)).collect();
        if class.is_empty() {
            continue;
        }
        let ratios: Vec<f64> = class.iter().map(|r| r.ratio).collect();
        let allocs: Vec<f64> = class.iter().map(|r| r.alloc_s / r.memcpy_s).collect();
        let d = Distribution::of(&ratios);
        let a = Distribution::of(&allocs);
        outln!(
            "{:<10} {:>5} {:>8.3} {:>7.3} {:>7.3} {:>7} {:>7}  {:>11.3} {:>9.3}",
            name,
            class.len(),
            d.geomean,
            d.p90,
            d.max,
            ratios.iter().filter(|&&r| r > 1.10).count(),
            ratios.iter().filter(|&&r| r > 1.5).count(),
            a.geomean,
            a.max
        );
    }
}

/// Geometric mean, 90th percentile (nearest rank) and maximum of positive values.
struct Distribution {
    geomean: f64,
    p90: f64,
    max: f64,
}

impl Distribution {
    fn of(values: &[f64]) -> Self {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let geomean = (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
        let rank = (v.len() * 9).div_ceil(10).max(1);
        Distribution { geomean, p90: v[rank - 1], max: v[v.len() - 1] }
    }
}

fn prepare(wl: &Workload) -> Result<(OpSpec, usize), Failure> {
    let spec = OpSpec::parse(&wl.framework, &wl.op, &wl.args)?;
    let esize = elem_size(&wl.dtype)
        .ok_or_else(|| Failure { message: format!("{}: unknown dtype {:?}", wl.id, wl.dtype), code: 1 })?;
    Ok((spec, esize))
}

fn filled(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(7)).collect()
}

fn large(
    wl: &Workload,
    parallelism: Parallelism,
    streaming: Streaming,
    kernels: Kernels,
    threads: usize,
    reps: usize,
) -> Result<Row, Failure> {
    let (spec, esize) = prepare(wl)?;
    let plan = spec.plan(&wl.shape)?.with_parallelism(parallelism).with_streaming(streaming).with_kernels(kernels);
    let input = filled(plan.input_len() * esize);
    let out_bytes = plan.output_len() * esize;
    let mut out = vec![1u8; out_bytes];
    let copy_src = filled(out_bytes);
    let mut copy_dst = vec![1u8; out_bytes];

    plan.run_bytes_into(&input, esize, &mut out)?;
    parallel_copy(&copy_src, &mut copy_dst, threads);
    let mut op_times = Vec::with_capacity(reps);
    let mut copy_times = Vec::with_capacity(reps);
    for _ in 0..reps {
        // Interleave the two so that both see the same machine state.
        let t = Instant::now();
        plan.run_bytes_into(&input, esize, &mut out)?;
        op_times.push(t.elapsed());
        let t = Instant::now();
        parallel_copy(&copy_src, &mut copy_dst, threads);
        copy_times.push(t.elapsed());
    }
    std::hint::black_box((&out, &copy_dst));
    drop(out);
    row(wl, &plan, &input, esize, op_times, copy_times)
}

/// The report row: medians, the allocating call's of three runs.
fn row(
    wl: &Workload,
    plan: &blockshuffle::Plan,
    input: &[u8],
    esize: usize,
    op_times: Vec<Duration>,
    copy_times: Vec<Duration>,
) -> Result<Row, Failure> {
    let mut alloc_times = Vec::with_capacity(3);
    let mut bytes_out = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let fresh = plan.run_bytes(input, esize)?;
        alloc_times.push(t.elapsed());
        bytes_out = std::hint::black_box(fresh).len();
    }
    let alloc_s = median(alloc_times);
    let op_s = median(op_times);
    let memcpy_s = median(copy_times);
    Ok(Row { id: wl.id.clone(), bytes_out, op_s, memcpy_s, ratio: op_s / memcpy_s, alloc_s })
}

fn per_call(wl: &Workload) -> Result<Row, Failure> {
    let (spec, esize) = prepare(wl)?;
    let plan = spec.plan(&wl.shape)?;
    let input = filled(plan.input_len() * esize);
    let out_bytes = plan.output_len() * esize;
    let mut out = vec![0u8; out_bytes];
    let copy_src = filled(out_bytes);
    let mut copy_dst = vec![0u8; out_bytes];
    let iters = 200_000u32;
    let mut op_times = Vec::new();
    let mut copy_times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..iters {
            let plan = std::hint::black_box(&spec).plan(std::hint::black_box(&wl.shape))?;
            plan.run_bytes_into(std::hint::black_box(&input), esize, &mut out)?;
        }
        op_times.push(t.elapsed() / iters);
        let t = Instant::now();
        for _ in 0..iters {
            copy_dst.copy_from_slice(std::hint::black_box(&copy_src));
            std::hint::black_box(&mut copy_dst);
        }
        copy_times.push(t.elapsed() / iters);
    }
    row(wl, &plan, &input, esize, op_times, copy_times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_is_geomean_nearest_rank_p90_and_max() {
        let d = Distribution::of(&[8.0, 1.0, 2.0, 4.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0]);
        assert!((d.geomean - 2f64.powf(4.5)).abs() < 1e-9, "{}", d.geomean);
        assert_eq!((d.p90, d.max), (256.0, 512.0));
        let one = Distribution::of(&[1.25]);
        assert_eq!((one.geomean, one.p90, one.max), (1.25, 1.25, 1.25));
    }

    #[test]
    fn void_dtypes_give_their_size() {
        assert_eq!(elem_size("V3"), Some(3));
        assert_eq!(elem_size("V32"), Some(32));
        assert_eq!(elem_size("complex128"), Some(16));
        assert_eq!(elem_size("V0"), None);
        assert_eq!(elem_size("Vx"), None);
        assert_eq!(elem_size("float128"), None);
    }
}
