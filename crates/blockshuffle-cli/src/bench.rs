//! `blockshuffle bench`: each workload's operator time against a memcpy of
//! the same output bytes, measured in the same process.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use blockshuffle::catalog::OpSpec;
use blockshuffle::{Kernels, Operator, Parallelism, Streaming};
use clap::builder::PossibleValuesParser;
use clap::{value_parser, Arg, ArgMatches, Command};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::CliError;

/// The workloads the binary carries (a copy of `shared/bench/workloads.json`).
const DEFAULT_WORKLOADS: &str = include_str!("../data/workloads.json");

/// The kernel sets `--kernels` accepts.
const KERNELS: &[(&str, Kernels)] = &[
    ("auto", Kernels::Auto),
    ("avx512", Kernels::Avx512),
    ("avx2", Kernels::Avx2),
    ("baseline", Kernels::Baseline),
    ("portable", Kernels::Portable),
];

/// The store modes `--streaming` accepts.
const STREAMING: &[(&str, Streaming)] =
    &[("auto", Streaming::Auto), ("always", Streaming::Always), ("never", Streaming::Never)];

/// `blockshuffle bench`'s arguments (`--threads` is the global one).
pub(crate) fn command() -> Command {
    Command::new("bench")
        .about(
            "Time each workload's operator (into a preallocated output) against copy_from_slice \
             of the same byte count, in one process",
        )
        .after_help(
            "After the large workloads, a table gives the distribution of the ratios to memcpy (geometric \
             mean, 90th percentile, maximum, counts above 1.10x and 1.5x), over all of them and per output \
             size class, with the allocating call's ratio beside it. tools/broad_workloads.py writes the \
             broad benchmark (640 workloads over every operator, element sizes 1 to 32 bytes, blocks 2 to 16).",
        )
        .arg(Arg::new("workloads").long("workloads").value_name("FILE").value_parser(value_parser!(PathBuf)).help(
            "Workloads in the format of shared/bench/workloads.json (default: built in); any catalogue \
                 operator, numpy transpose and einops rearrange among them (shared/bench/transpose.json: \
                 HPTT's transpositions)",
        ))
        .arg(
            Arg::new("reps")
                .long("reps")
                .value_name("R")
                .value_parser(value_parser!(u32).range(1..))
                .default_value("7")
                .help("Timed repetitions per workload, after one warm-up; the median is reported"),
        )
        .arg(
            Arg::new("json")
                .long("json")
                .value_name("FILE")
                .value_parser(value_parser!(PathBuf))
                .help("Also write the results as JSON"),
        )
        .arg(
            Arg::new("filter")
                .long("filter")
                .value_name("ID,..")
                .value_delimiter(',')
                .help("Only these workload ids (comma-separated); an id no workload has is an error"),
        )
        .arg(
            Arg::new("streaming")
                .long("streaming")
                .value_name("MODE")
                .value_parser(PossibleValuesParser::new(STREAMING.iter().map(|(n, _)| *n)))
                .default_value("auto")
                .help("Cache-bypassing stores for the output"),
        )
        .arg(
            Arg::new("kernels")
                .long("kernels")
                .value_name("SET")
                .value_parser(PossibleValuesParser::new(KERNELS.iter().map(|(n, _)| *n)))
                .default_value("auto")
                .help("Kernel set (auto: the widest this CPU runs)"),
        )
}

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

/// The value of `table` named by the word `arg` holds (clap has checked it
/// is one of them).
fn chosen<T: Copy>(m: &ArgMatches, arg: &'static str, table: &[(&str, T)]) -> Result<T, CliError> {
    let word = m.get_one::<String>(arg).map_or("auto", String::as_str);
    table.iter().find(|(n, _)| *n == word).map(|(_, v)| *v).ok_or_else(|| CliError::Usage {
        arg: format!("--{arg}"),
        problem: format!("{word:?} is not one of {}", table.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")),
    })
}

fn options(m: &ArgMatches) -> Result<Options, CliError> {
    Ok(Options {
        workloads: m.get_one::<PathBuf>("workloads").cloned(),
        threads: m.get_one::<usize>("threads").copied().unwrap_or(0),
        reps: m.get_one::<u32>("reps").map_or(7, |&r| r as usize),
        json: m.get_one::<PathBuf>("json").cloned(),
        filter: m.get_many::<String>("filter").map(|ids| ids.cloned().collect()),
        streaming: chosen(m, "streaming", STREAMING)?,
        kernels: chosen(m, "kernels", KERNELS)?,
    })
}

/// `--filter`'s ids that name no workload: a usage error listing them.
fn check_filter(filter: Option<&Vec<String>>, w: &Workloads) -> Result<(), CliError> {
    let Some(filter) = filter else { return Ok(()) };
    let ids: Vec<&str> = w.large.iter().chain(&w.small).map(|wl| wl.id.as_str()).collect();
    let unknown: Vec<&str> = filter.iter().map(String::as_str).filter(|f| !ids.contains(f)).collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(CliError::Usage {
        arg: "--filter".to_string(),
        problem: format!("names no workload: {} (the workloads are {})", unknown.join(", "), ids.join(", ")),
    })
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

pub(crate) fn main(m: &ArgMatches) -> Result<(), CliError> {
    let o = options(m)?;
    let text = match &o.workloads {
        Some(p) => std::fs::read_to_string(p).map_err(|source| CliError::Io { path: p.clone(), source })?,
        None => DEFAULT_WORKLOADS.to_string(),
    };
    let w: Workloads = serde_json::from_str(&text).map_err(|source| CliError::Json {
        path: o.workloads.clone().unwrap_or_else(|| "<built in>".into()),
        source,
    })?;
    check_filter(o.filter.as_ref(), &w)?;
    let threads = if o.threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { o.threads };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|source| CliError::Pool { threads, source })?;
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
        let text =
            serde_json::to_string_pretty(&report).map_err(|source| CliError::Json { path: path.clone(), source })?;
        std::fs::write(path, text).map_err(|source| CliError::Io { path: path.clone(), source })?;
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
    /// A size class: its name, and which output sizes it holds.
    type Class = (&'static str, fn(usize) -> bool);
    let classes: [Class; 4] = [
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

fn prepare(wl: &Workload) -> Result<(OpSpec, usize), CliError> {
    // A workload's flags come from its file, not the command line: a failure, not a usage error.
    let spec = OpSpec::parse(&wl.framework, &wl.op, &wl.args).map_err(CliError::Library)?;
    let esize = elem_size(&wl.dtype)
        .ok_or_else(|| CliError::Workload { id: wl.id.clone(), problem: format!("unknown dtype {:?}", wl.dtype) })?;
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
) -> Result<Row, CliError> {
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
) -> Result<Row, CliError> {
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

fn per_call(wl: &Workload) -> Result<Row, CliError> {
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
