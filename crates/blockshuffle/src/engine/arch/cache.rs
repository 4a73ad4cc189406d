//! The size of the last-level cache ([`last_level_cache`]), read once from
//! CPUID, and the rule that scales with it: the output size from which
//! stores stream past the caches ([`stream_threshold`]).
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
    static BYTES: OnceLock<Option<usize>> = OnceLock::new();
    *BYTES.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Option<usize> {
    use std::arch::x86_64::{__cpuid, __cpuid_count, CpuidResult};
    let vendor = __cpuid(0);
    // "AuthenticAMD" and "HygonGenuine" describe their caches in leaf
    // 0x8000_001D, Intel in leaf 4: the same layout.
    let amd = matches!(&vendor_bytes(&vendor), b"AuthenticAMD" | b"HygonGenuine");
    let (leaf, max) = if amd { (0x8000_001D, __cpuid(0x8000_0000).eax) } else { (4, vendor.eax) };
    if max < leaf {
        return None;
    }
    // Subleaves end with one of type 0; 16 is more levels than any CPU has.
    let subleaves = (0..16).map(|sub| {
        let CpuidResult { eax, ebx, ecx, .. } = __cpuid_count(leaf, sub);
        [eax, ebx, ecx]
    });
    largest_level(subleaves)
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Option<usize> {
    None
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
/// of type 0 (no more caches): ways (EBX 31:22) x partitions (EBX 21:12) x
/// line bytes (EBX 11:0) x sets (ECX), each stored less one. `None` if no
/// data or unified cache is described, or its size overflows.
fn largest_level(subleaves: impl IntoIterator<Item = [u32; 3]>) -> Option<usize> {
    let mut best: Option<(u32, usize)> = None;
    for [eax, ebx, ecx] in subleaves {
        let kind = eax & 0x1f;
        if kind == 0 {
            break;
        }
        // 1: data, 2: instructions, 3: unified.
        if kind == 2 {
            continue;
        }
        let level = (eax >> 5) & 0x7;
        let bytes = [ebx >> 22, (ebx >> 12) & 0x3ff, ebx & 0xfff, ecx]
            .into_iter()
            .try_fold(1usize, |acc, field| acc.checked_mul(field as usize + 1));
        if let Some(bytes) = bytes {
            if best.is_none_or(|(l, _)| level > l) {
                best = Some((level, bytes));
            }
        }
    }
    best.map(|(_, bytes)| bytes)
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
    fn the_detected_size_is_remembered() {
        let first = last_level_cache();
        assert_eq!(last_level_cache(), first);
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
