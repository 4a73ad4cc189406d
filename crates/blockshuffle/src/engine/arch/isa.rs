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
            if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw") {
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

    /// Whether `self` takes AVX512-VBMI's byte permutes and this CPU runs
    /// them (a plan's ISA may be asked for rather than detected).
    pub(crate) fn runs_vbmi(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        return self >= Isa::Avx512Vbmi && is_x86_feature_detected!("avx512vbmi");
        #[cfg(not(target_arch = "x86_64"))]
        return false;
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
