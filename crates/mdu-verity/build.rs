//! Crate-private cfg aliases, so that the source names what it means
//! instead of spelling out target conditions at every use:
//!
//! * `x86_simd`: the x86_64 backends (SHA-NI SHA-256, the SIMD FEC
//!   kernels) are compiled (x86_64, not Miri);
//! * `arm_simd`: the arm64 ones (SHA-2 instructions, NEON FEC) are
//!   compiled (aarch64 of either byte order, not Miri);
//! * `simd`: either of them.
//!
//! Under Miri only the portable backends are built: Miri cannot run the
//! vendor intrinsics.

fn main() {
    cfg_aliases::cfg_aliases! {
        x86_simd: { all(target_arch = "x86_64", not(miri)) },
        arm_simd: { all(target_arch = "aarch64", not(miri)) },
        simd: { any(x86_simd, arm_simd) },
    }
}
