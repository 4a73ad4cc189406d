//! Instruction-set detection: [`Isa`], the set of vector kernels a plan
//! uses, chosen once by runtime feature detection ([`Isa::detect`]).
//!
//! Layer: arch (the lowest); imports nothing from the engine.

/// The instruction set a plan's short-run kernels use, narrowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Isa {
    /// The portable kernels only.
    Portable,
    /// SSE2, the x86_64 baseline.
    Sse2,
    /// AVX2 (detected at run time).
    Avx2,
    /// AVX-512F and AVX-512BW (detected at run time).
    Avx512,
    /// AVX-512 with AVX512-VBMI's byte permutes across a whole register
    /// (detected at run time), for [`deinterleave_carried`] and
    /// [`interleave_carried`].
    Avx512Vbmi,
}

impl Isa {
    /// The widest vector kernels this CPU runs.
    pub(crate) fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            // AVX-512 plans run AVX2's kernels too (three streams, short
            // runs: `fitting`), so AVX-512 counts only beside AVX2.
            if is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx2")
            {
                if is_x86_feature_detected!("avx512vbmi") {
                    return Isa::Avx512Vbmi;
                }
                return Isa::Avx512;
            }
            if is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
            Isa::Sse2
        }
        #[cfg(not(target_arch = "x86_64"))]
        Isa::Portable
    }

    /// The widest of `self`'s vector kernels whose vector a run of `bytes`
    /// fills: a run shorter than a 64-byte vector goes by AVX2's 32-byte
    /// ones, shorter than that by SSE2's 16-byte ones (`Portable` below
    /// 16 bytes). Narrower kernels do the whole run where the wider ones
    /// would leave it all to the portable loop.
    pub(crate) fn fitting(self, bytes: usize) -> Isa {
        let widest = match bytes {
            0..=15 => Isa::Portable,
            16..=31 => Isa::Sse2,
            32..=63 => Isa::Avx2,
            _ => Isa::Avx512Vbmi,
        };
        self.min(widest)
    }

    /// Whether `self` takes AVX512-VBMI's byte permutes and this CPU runs
    /// them (a plan's ISA may be asked for rather than detected).
    pub(crate) fn runs_vbmi(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        return self >= Isa::Avx512Vbmi && is_x86_feature_detected!("avx512vbmi");
        #[cfg(not(target_arch = "x86_64"))]
        return false;
    }

    /// Every kernel set this CPU runs, narrowest first (tests force each).
    #[cfg(test)]
    pub(crate) fn every_runnable() -> impl Iterator<Item = Isa> {
        let all = [Isa::Portable, Isa::Sse2, Isa::Avx2, Isa::Avx512, Isa::Avx512Vbmi];
        all.into_iter().filter(|&isa| isa <= Isa::detect())
    }

    /// The target's baseline vector kernels (no runtime-detected extensions).
    pub(crate) fn baseline() -> Isa {
        if cfg!(target_arch = "x86_64") {
            Isa::Sse2
        } else {
            Isa::Portable
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Isa;

    #[test]
    fn fitting_narrows_to_the_widest_vector_a_run_fills() {
        for isa in [Isa::Portable, Isa::Sse2, Isa::Avx2, Isa::Avx512, Isa::Avx512Vbmi] {
            for (bytes, widest) in [
                (0, Isa::Portable),
                (15, Isa::Portable),
                (16, Isa::Sse2),
                (31, Isa::Sse2),
                (32, Isa::Avx2),
                (63, Isa::Avx2),
                (64, Isa::Avx512Vbmi),
                (1 << 40, Isa::Avx512Vbmi),
            ] {
                assert_eq!(isa.fitting(bytes), isa.min(widest), "{isa:?} {bytes}");
            }
        }
    }
}
