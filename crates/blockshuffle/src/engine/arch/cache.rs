//! The sizes of the last-level cache ([`last_level_cache`]) and of the
//! second level ([`second_level_cache`]), and the first level's sets and
//! ways ([`first_level_sets`], [`shares_first_level_set`]), read once from
//! CPUID (with the sizes assumed where it does not tell), and the rule that
//! scales with the first: the output size from which stores stream past
//! the caches ([`stream_threshold`]).
//!
//! Layer: arch (the lowest); imports nothing from the engine.

use std::sync::OnceLock;

/// Destination bytes from which stores stream past the cache where the
/// last-level cache is larger than four times this, or its size unknown
/// (see [`stream_threshold`]).
pub(crate) const STREAM_THRESHOLD: usize = 16 << 20;

/// The fewest destination bytes [`stream_threshold`] streams, whatever
/// size CPUID reports: outputs this small stay in the second-level caches
/// of the CPUs measured (a guard against a hypervisor's odd report).
const MIN_STREAM_THRESHOLD: usize = 1 << 20;

/// Destination bytes from which stores stream past the cache, for a
/// last-level cache of `llc` bytes: a quarter of it, between
/// [`MIN_STREAM_THRESHOLD`] and [`STREAM_THRESHOLD`]. From there the output
/// and the source it is read from fill half the cache or more, so the
/// output would not stay cached anyway, and streaming saves reading every
/// destination line first.
///
/// Measured on an AMD EPYC (Zen 4, L3 32 MiB, so 8 MiB here, not 16) over
/// broad seed 26's 126 outputs of 4 to 16 MiB, one thread, medians of 5
/// alternated runs, time streamed over time through the cache: 4-6 MiB
/// 1.09, 6-8 MiB 0.99, 8-10 MiB 0.85, 10-12 MiB 0.93, 12-16 MiB 0.85 (two
/// threads: 1.19, 1.04, 0.98, 0.94, 0.95). On a 2-core Intel Xeon guest
/// (L3 260 MiB, shared with other guests) streaming paid from 16 MiB, which
/// is where the cap keeps it.
pub(crate) fn stream_threshold(llc: Option<usize>) -> usize {
    llc.map_or(STREAM_THRESHOLD, |bytes| (bytes / 4).clamp(MIN_STREAM_THRESHOLD, STREAM_THRESHOLD))
}

/// [`stream_threshold`] of this CPU's last-level cache
/// ([`last_level_cache`]).
pub(crate) fn cpu_stream_threshold() -> usize {
    stream_threshold(last_level_cache())
}

/// The bytes of this CPU's last-level data cache (the highest level of
/// data or unified cache CPUID describes; on x86_64 only), or `None` where
/// CPUID does not tell. Read once, then remembered.
pub(crate) fn last_level_cache() -> Option<usize> {
    detected().last
}

/// The second-level data cache's bytes assumed where CPUID does not tell
/// ([`second_level`]): that of the CPU measured (an AMD Zen 4's core;
/// other x86_64 cores of the last years have 512 KiB to a few MiB).
const SECOND_LEVEL_BYTES: usize = 1 << 20;

/// This CPU's second-level data cache's bytes ([`second_level_cache`]), or
/// [`SECOND_LEVEL_BYTES`] where CPUID does not tell.
pub(crate) fn second_level() -> usize {
    second_level_cache().unwrap_or(SECOND_LEVEL_BYTES)
}

/// The bytes of the second-level data cache (the data or unified cache of
/// level 2 CPUID describes, as the core that asks first sees it: one
/// core's, or on some CPUs a cluster's that its cores share; on x86_64
/// only), or `None` where CPUID does not tell. Read once, then remembered.
pub(crate) fn second_level_cache() -> Option<usize> {
    detected().second
}

/// How many of this CPU's first-level data cache's sets the lines of `n`
/// rows `stride` bytes apart from address `at` map to, counted up to
/// `most` ([`sets_of_rows`] of its [`Sets`] as CPUID describes them, or of
/// [`FIRST_LEVEL`]'s where it does not).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // its one caller is x86_64's
pub(crate) fn first_level_sets(at: usize, stride: isize, n: usize, most: usize) -> usize {
    sets_of_rows(first_level(), at, stride, n, most)
}

/// This CPU's first-level data cache's [`Sets`], as CPUID describes them
/// (where [`plausible`]), or [`FIRST_LEVEL`]'s.
pub(crate) fn first_level() -> Sets {
    detected().first.unwrap_or(FIRST_LEVEL)
}

/// Whether the lines of `rows` rows `stride` bytes apart all map to one
/// set of this CPU's first-level data cache ([`first_level`]: their
/// stride a whole number of a way's bytes, its lines times its sets, 4
/// KiB on every x86_64 core of the last decade) and are more than its
/// ways: a walk that writes a few bytes of each row in turn then evicts
/// each line before the rest of it comes. (Not rows of no stride: one
/// row.)
pub(crate) fn shares_first_level_set(rows: usize, stride: isize) -> bool {
    let Sets { line, sets, ways } = first_level();
    let way = line.saturating_mul(sets);
    stride != 0 && way > 0 && stride.unsigned_abs().is_multiple_of(way) && rows > ways
}

/// Whether this CPU's first-level data cache can hold a line of each of
/// `n` rows `stride` bytes apart from address `at` at once: whether their
/// lines map to a set for each of its ways' worth of them
/// ([`first_level_sets`], at least `n` over the ways, rounded up), as an
/// even spread would fill. Rows a page apart: 8 of them, in 8 ways.
pub(crate) fn first_level_holds(at: usize, stride: isize, n: usize) -> bool {
    let l1 = first_level();
    let need = n.div_ceil(l1.ways.max(1));
    sets_of_rows(l1, at, stride, n, need) >= need
}

/// The sets and ways of a cache, as [`sets_of_rows`] counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sets {
    /// The bytes of a line (times its partitions, where it has more).
    pub line: usize,
    /// The sets.
    pub sets: usize,
    /// The lines each set holds.
    pub ways: usize,
}

/// The first-level data cache assumed where CPUID does not describe it:
/// 32 KiB, 64 sets of 8 ways of 64-byte lines (AMD's Zen 1 to 4, Intel's
/// Skylake; a way of 4 KiB, a page, as every x86_64 core of the last
/// decade has, whose first level is indexed by the address's bits within
/// a page).
pub(crate) const FIRST_LEVEL: Sets = Sets { line: 64, sets: 64, ways: 8 };

/// How many of a cache's `sets` the lines of `n` rows `stride` bytes apart
/// from address `at` map to (a line's set: its address over the line's
/// bytes, modulo the sets), counted up to `most` (at most `most` and `n`).
/// Rows a way's bytes apart (4 KiB in a first level of 64 sets of 64
/// bytes) all go to one set, and the cache holds `ways` of their lines;
/// rows 2 KiB apart, two; 4,100 bytes apart, 16 rows to a set; 4,160
/// apart, each to the next set. Rows whole lines apart are counted at
/// once (their sets step by the stride's lines, in a cycle of the sets
/// over their greatest common divisor with that step); others a row at a
/// time, until `most` are found. A cache of more sets than [`SEEN`]
/// counts, or of none, counts as `most`.
pub(crate) fn sets_of_rows(sets: Sets, at: usize, stride: isize, n: usize, most: usize) -> usize {
    let Sets { line, sets, .. } = sets;
    let most = most.min(n);
    if line == 0 || sets == 0 || sets > SEEN * 64 {
        return most;
    }
    let apart = stride.unsigned_abs();
    if apart.is_multiple_of(line) {
        return (sets / gcd(sets, apart / line % sets)).min(most);
    }
    // The sets seen, a bit each.
    let mut seen = [0u64; SEEN];
    let mut found = 0;
    let mut addr = at;
    for _ in 0..n {
        if found >= most {
            break;
        }
        let set = (addr / line) % sets;
        let (word, bit) = (set / 64, 1u64 << (set % 64));
        if seen[word] & bit == 0 {
            seen[word] |= bit;
            found += 1;
        }
        addr = addr.wrapping_add_signed(stride);
    }
    found
}

/// Words of [`sets_of_rows`]'s bits: caches of up to 512 sets (a first
/// level of 64 KiB in 2 ways of 64-byte lines, AMD's K8 and K10).
const SEEN: usize = 8;

/// The greatest common divisor of `a` and `b` (`gcd(a, 0) == a`).
fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Whether CPUID's first level is one [`sets_of_rows`] counts by: at least
/// 2 ways and 2 sets, lines of 16 bytes or more, ways of 1 to 32 KiB
/// (a hypervisor's odd report, or a fully associative cache, would make
/// every stride look crowded: [`FIRST_LEVEL`] is assumed instead).
fn plausible(s: &Sets) -> bool {
    s.ways >= 2 && s.sets >= 2 && s.line >= 16 && (1 << 10..=32 << 10).contains(&s.line.saturating_mul(s.sets))
}

/// The cache sizes CPUID describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Caches {
    /// The highest level's bytes ([`largest_level`]).
    last: Option<usize>,
    /// Level 2's bytes ([`level_bytes`]).
    second: Option<usize>,
    /// Level 1's sets and ways ([`level_sets`]).
    first: Option<Sets>,
}

/// This CPU's [`Caches`], read once.
fn detected() -> Caches {
    static CACHES: OnceLock<Caches> = OnceLock::new();
    *CACHES.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Caches {
    use std::arch::x86_64::{__cpuid, __cpuid_count, CpuidResult};
    let vendor = __cpuid(0);
    // "AuthenticAMD" and "HygonGenuine" describe their caches in leaf
    // 0x8000_001D, Intel in leaf 4: the same layout.
    let amd = matches!(&vendor_bytes(&vendor), b"AuthenticAMD" | b"HygonGenuine");
    let (leaf, max) = if amd { (0x8000_001D, __cpuid(0x8000_0000).eax) } else { (4, vendor.eax) };
    if max < leaf {
        return Caches::default();
    }
    // Subleaves end with one of type 0; 16 is more levels than any CPU has.
    let subleaves: [[u32; 3]; 16] = std::array::from_fn(|sub| {
        let CpuidResult { eax, ebx, ecx, .. } = __cpuid_count(leaf, sub as u32);
        [eax, ebx, ecx]
    });
    Caches {
        last: largest_level(subleaves),
        second: level_bytes(subleaves, 2),
        first: level_sets(subleaves, 1).filter(plausible),
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Caches {
    Caches::default()
}

/// CPUID leaf 0's vendor string (EBX, EDX, ECX).
#[cfg(target_arch = "x86_64")]
fn vendor_bytes(r: &std::arch::x86_64::CpuidResult) -> [u8; 12] {
    let mut v = [0; 12];
    for (chunk, reg) in v.chunks_exact_mut(4).zip([r.ebx, r.edx, r.ecx]) {
        chunk.copy_from_slice(&reg.to_le_bytes());
    }
    v
}

/// The bytes of the highest-level data or unified cache among `subleaves`
/// (EAX, EBX, ECX of CPUID leaf 4 or 0x8000_001D, in order), up to the first
/// of type 0 (no more caches; see [`data_levels`]). `None` if no data or
/// unified cache is described, or its size overflows.
fn largest_level(subleaves: impl IntoIterator<Item = [u32; 3]>) -> Option<usize> {
    // The first of the highest level, as `level_bytes` takes the first.
    let highest = |best: Option<(u32, usize)>, (level, bytes)| match best {
        Some((l, _)) if l >= level => best,
        _ => Some((level, bytes)),
    };
    data_levels(subleaves).map(|(level, bytes, _)| (level, bytes)).fold(None, highest).map(|(_, bytes)| bytes)
}

/// The bytes of the data or unified cache of `level` among `subleaves` (as
/// [`largest_level`]'s), the first described; `None` if none is.
fn level_bytes(subleaves: impl IntoIterator<Item = [u32; 3]>, level: u32) -> Option<usize> {
    data_levels(subleaves).find(|&(l, ..)| l == level).map(|(_, bytes, _)| bytes)
}

/// The [`Sets`] of the data or unified cache of `level` among `subleaves`
/// (the first described, as [`level_bytes`]).
fn level_sets(subleaves: impl IntoIterator<Item = [u32; 3]>, level: u32) -> Option<Sets> {
    data_levels(subleaves).find(|&(l, ..)| l == level).map(|(.., sets)| sets)
}

/// The level, bytes and [`Sets`] of each data or unified cache among
/// `subleaves`, up to the first of type 0 (no more caches): ways (EBX
/// 31:22) x partitions (EBX 21:12) x line bytes (EBX 11:0) x sets (ECX),
/// each stored less one; those whose size overflows left out.
fn data_levels(subleaves: impl IntoIterator<Item = [u32; 3]>) -> impl Iterator<Item = (u32, usize, Sets)> {
    subleaves
        .into_iter()
        .take_while(|[eax, ..]| eax & 0x1f != 0)
        // 1: data, 2: instructions, 3: unified.
        .filter(|[eax, ..]| eax & 0x1f != 2)
        .filter_map(|[eax, ebx, ecx]| {
            let field = |v: u32| (v as usize).checked_add(1);
            // A set's line is its partitions' (1 on every CPU described).
            let sets = Sets {
                line: field(ebx & 0xfff)?.checked_mul(field((ebx >> 12) & 0x3ff)?)?,
                sets: field(ecx)?,
                ways: field(ebx >> 22)?,
            };
            let bytes = sets.line.checked_mul(sets.sets)?.checked_mul(sets.ways)?;
            Some(((eax >> 5) & 0x7, bytes, sets))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One subleaf: `kind` (1 data, 2 instructions, 3 unified) at `level`,
    /// of `ways` x `line` bytes x `sets`, one partition.
    fn sub(kind: u32, level: u32, ways: u32, line: u32, sets: u32) -> [u32; 3] {
        [kind | level << 5, (ways - 1) << 22 | (line - 1), sets - 1]
    }

    #[test]
    fn the_highest_data_or_unified_level_wins() {
        // An AMD Zen 4's leaf 0x8000_001D: L1d 32 KiB, L1i 32 KiB, L2
        // 1 MiB, L3 32 MiB (16 ways x 64 bytes x 32768 sets).
        let zen4 =
            [sub(1, 1, 8, 64, 64), sub(2, 1, 8, 64, 64), sub(3, 2, 8, 64, 2048), sub(3, 3, 16, 64, 32768), [0, 0, 0]];
        assert_eq!(largest_level(zen4), Some(32 << 20));
        // Subleaves after the first of type 0 are not caches.
        assert_eq!(largest_level([sub(1, 1, 8, 64, 64), [0, 0, 0], sub(3, 3, 16, 64, 32768)]), Some(32 << 10));
        // Partitions multiply.
        let two = [1 | 1 << 5, (8 - 1) << 22 | 1 << 12 | 63, 63];
        assert_eq!(largest_level([two]), Some(64 << 10));
        // An instruction cache alone is no data cache.
        assert_eq!(largest_level([sub(2, 3, 16, 64, 32768)]), None);
        assert_eq!(largest_level([]), None);
        // Levels in any order: the highest, not the last.
        assert_eq!(largest_level([sub(3, 3, 12, 64, 4096), sub(3, 2, 16, 64, 2048)]), Some(3 << 20));
    }

    #[test]
    fn the_second_level_is_its_data_or_unified_cache() {
        // The Zen 4's: its unified L2 of 1 MiB.
        let zen4 =
            [sub(1, 1, 8, 64, 64), sub(2, 1, 8, 64, 64), sub(3, 2, 8, 64, 2048), sub(3, 3, 16, 64, 32768), [0, 0, 0]];
        assert_eq!(level_bytes(zen4, 2), Some(1 << 20));
        assert_eq!(level_bytes(zen4, 1), Some(32 << 10));
        // An instruction cache of level 2 is none; nor is one past the end.
        assert_eq!(level_bytes([sub(2, 2, 8, 64, 2048), sub(1, 2, 16, 64, 2048)], 2), Some(2 << 20));
        assert_eq!(level_bytes([sub(1, 1, 8, 64, 64), [0, 0, 0], sub(3, 2, 8, 64, 2048)], 2), None);
        assert_eq!(level_bytes([sub(3, 3, 16, 64, 32768)], 2), None);
        // The first of two of the level, as for the highest.
        let twice = [sub(3, 2, 8, 64, 2048), sub(3, 2, 16, 64, 2048)];
        assert_eq!(level_bytes(twice, 2), Some(1 << 20));
        assert_eq!(largest_level(twice), Some(1 << 20));
        // A size that overflows is left out.
        assert_eq!(level_bytes([[3 | 2 << 5, u32::MAX, u32::MAX]], 2), None);
    }

    #[test]
    fn the_first_level_has_its_sets_and_ways() {
        // The Zen 4's L1d: 64 sets of 8 ways of 64-byte lines.
        let zen4 =
            [sub(1, 1, 8, 64, 64), sub(2, 1, 8, 64, 64), sub(3, 2, 8, 64, 2048), sub(3, 3, 16, 64, 32768), [0, 0, 0]];
        assert_eq!(level_sets(zen4, 1), Some(FIRST_LEVEL));
        // Intel's Golden Cove: L1d 48 KiB in 12 ways (its instruction
        // cache, described first here, is no data cache), L2 1.25 MiB in
        // 10.
        let golden = [sub(2, 1, 8, 64, 64), sub(1, 1, 12, 64, 64), sub(3, 2, 10, 64, 2048)];
        assert_eq!(level_sets(golden, 1), Some(Sets { line: 64, sets: 64, ways: 12 }));
        assert_eq!(level_sets(golden, 2), Some(Sets { line: 64, sets: 2048, ways: 10 }));
        // Which reports are taken: these; AMD's K8 (64 KiB in 2 ways);
        // not one set, one way, 8-byte lines or ways of 64 KiB.
        assert!(plausible(&FIRST_LEVEL) && plausible(&Sets { line: 64, sets: 64, ways: 12 }));
        assert!(plausible(&Sets { line: 64, sets: 512, ways: 2 }));
        assert!(!plausible(&Sets { line: 64, sets: 1, ways: 512 }) && !plausible(&Sets { ways: 1, ..FIRST_LEVEL }));
        assert!(!plausible(&Sets { line: 8, sets: 512, ways: 8 }) && !plausible(&Sets { sets: 1024, ..FIRST_LEVEL }));
        assert_eq!(level_sets([sub(3, 2, 8, 64, 2048)], 1), None);
        // Partitions make a set's line longer.
        let two = [1 | 1 << 5, (8 - 1) << 22 | 1 << 12 | 63, 63];
        assert_eq!(level_sets([two], 1), Some(Sets { line: 128, sets: 64, ways: 8 }));
    }

    #[test]
    fn rows_lines_go_to_the_sets_their_addresses_name() {
        let l1 = FIRST_LEVEL;
        let sets = |at: usize, stride: isize, n: usize| sets_of_rows(l1, at, stride, n, 64);
        // A page apart: one set, however many rows, either way.
        assert_eq!((sets(0, 4096, 256), sets(0, 16384, 9), sets(0, -4096, 9), sets(0, 0, 9)), (1, 1, 1, 1));
        // Half a page: two sets; a quarter, four; an eighth, eight.
        assert_eq!((sets(0, 2048, 256), sets(0, 1024, 256), sets(0, 512, 256)), (2, 4, 8));
        // A line past a page: a set each row, all 64; 4 bytes past, the
        // rows' lines creep a line every 16 rows.
        assert_eq!((sets(0, 4160, 10), sets(0, 4160, 256)), (10, 64));
        assert_eq!((sets(0, 4100, 16), sets(0, 4100, 17), sets(0, 4100, 256)), (1, 2, 16));
        // Where the rows start in their line counts: from 48 bytes in, the
        // fifth row is in the next set.
        assert_eq!((sets(48, 4100, 4), sets(48, 4100, 5)), (1, 2));
        // Strides of no power of two spread.
        assert_eq!((sets(0, 2000, 256), sets(0, 6000, 256)), (64, 64));
        // The count stops at `most`, and at the rows.
        assert_eq!((sets_of_rows(l1, 0, 64, 256, 3), sets(0, 64, 0), sets(0, 64, 5)), (3, 0, 5));
        // More sets than are counted, no line bytes or no sets: `most`, or
        // the rows where fewer.
        assert_eq!(sets_of_rows(Sets { sets: 2048, ..l1 }, 0, 1 << 17, 100, 3), 3);
        assert_eq!(sets_of_rows(Sets { line: 0, ..l1 }, 0, 4096, 2, 3), 2);
        assert_eq!(sets_of_rows(Sets { sets: 0, ..l1 }, 0, 4096, 9, 3), 3);
        // K8's 512 sets: rows 32 KiB apart share one, 64 bytes apart
        // spread over all.
        let k8 = Sets { line: 64, sets: 512, ways: 2 };
        assert_eq!((sets_of_rows(k8, 0, 32 << 10, 99, 512), sets_of_rows(k8, 0, 64, 999, 999)), (1, 512));
        // Against a count of every row's set, strides of whole lines (counted
        // at once) and not, from a line's start and inside one.
        let naive = |at: usize, stride: isize, n: usize| {
            let mut seen = std::collections::BTreeSet::new();
            for i in 0..n {
                seen.insert(at.wrapping_add_signed(stride * i as isize) / 64 % 64);
            }
            seen.len()
        };
        for stride in [0, 64, 128, 192, 1024, 2048, 2112, 4096, 6144, 12288, -4096, -2048, 100, 4100, -4097, 2000] {
            for (at, n, most) in [(0, 1, 64), (0, 7, 3), (40, 64, 64), (0, 65, 64), (4096, 300, 64), (40, 300, 5)] {
                let want = naive(at, stride, n).min(most);
                assert_eq!(sets_of_rows(l1, at, stride, n, most), want, "{stride} {at} {n} {most}");
            }
        }
        // A twelve-way first level of 64 sets (Intel's Golden Cove) maps
        // as one of eight ways does.
        let golden = Sets { line: 64, sets: 64, ways: 12 };
        assert_eq!(sets_of_rows(golden, 0, 2048, 256, 64), 2);
    }

    #[test]
    fn the_first_level_holds_as_many_rows_as_its_sets_and_ways() {
        // This CPU's (a way of 4 KiB, a page, on every x86_64 core).
        let Sets { line, sets, ways } = first_level();
        let way = (line * sets) as isize;
        // A way apart, one set: its ways.
        assert!(first_level_holds(0, way, ways) && !first_level_holds(0, way, ways + 1));
        assert!(first_level_holds(0, -2 * way, ways) && !first_level_holds(0, -2 * way, ways + 1));
        // Half a way, two sets; a line apart, every set.
        assert!(first_level_holds(0, way / 2, 2 * ways) && !first_level_holds(0, way / 2, 2 * ways + 1));
        assert!(first_level_holds(0, line as isize, sets * ways) && !first_level_holds(0, way, 2 * ways));
        assert!(first_level_holds(0, way, 0));
    }

    #[test]
    fn rows_share_a_set_a_whole_number_of_ways_apart_past_its_ways() {
        // This CPU's first level (a way of 4 KiB and 8 ways on AMD's Zen 1
        // to 4 and Intel's to Skylake: rows 4 KiB apart share a set past 8).
        let Sets { line, sets, ways } = first_level();
        let way = (line * sets) as isize;
        for (rows, stride, shares) in [
            (ways + 1, way, true),
            (2 * ways, -2 * way, true),
            (ways + 1, 3 * way, true),
            (ways, way, false),
            (ways + 1, way + line as isize, false),
            (2 * ways, way / 2, false),
            (ways + 1, 3 * way / 2, false),
            (ways + 1, 0, false),
        ] {
            assert_eq!(shares_first_level_set(rows, stride), shares, "{rows} rows {stride} apart");
        }
    }

    #[test]
    fn the_detected_size_is_remembered() {
        let first = last_level_cache();
        assert_eq!(last_level_cache(), first);
        assert_eq!(second_level_cache(), second_level_cache());
        assert_eq!(cpu_stream_threshold(), stream_threshold(first));
        if let Some(bytes) = first {
            assert!(bytes >= 4 << 10, "{bytes}");
        }
    }

    #[test]
    fn outputs_stream_from_a_quarter_of_the_last_level_cache() {
        const MIB: usize = 1 << 20;
        // Unknown: the fixed threshold.
        assert_eq!(stream_threshold(None), STREAM_THRESHOLD);
        // A quarter, below the cap and above the floor.
        assert_eq!(stream_threshold(Some(32 * MIB)), 8 * MIB);
        assert_eq!(stream_threshold(Some(36 * MIB)), 9 * MIB);
        assert_eq!(stream_threshold(Some(64 * MIB - 4)), 16 * MIB - 1);
        // The cap: a large (shared) cache streams from 16 MiB.
        assert_eq!(stream_threshold(Some(64 * MIB)), 16 * MIB);
        assert_eq!(stream_threshold(Some(260 * MIB)), 16 * MIB);
        assert_eq!(stream_threshold(Some(usize::MAX)), 16 * MIB);
        // The floor: a small or odd report streams from 1 MiB.
        assert_eq!(stream_threshold(Some(4 * MIB)), MIB);
        assert_eq!(stream_threshold(Some(2 * MIB)), MIB);
        assert_eq!(stream_threshold(Some(0)), MIB);
    }
}
