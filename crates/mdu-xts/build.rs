//! Crate-private cfg aliases, so that the source names what it means
//! instead of spelling out target conditions at every use:
//!
//! * `x86_simd`: the x86_64 SIMD backends are compiled (x86_64, not Miri);
//! * `arm_simd`: the arm64 SIMD backend is compiled (little-endian aarch64,
//!   not Miri);
//! * `simd`: either of them.
//!
//! Under Miri only the portable backend is built: Miri cannot run the
//! vendor intrinsics.

fn main() {
    cfg_aliases::cfg_aliases! {
        x86_simd: { all(target_arch = "x86_64", not(miri)) },
        arm_simd: { all(target_arch = "aarch64", target_endian = "little", not(miri)) },
        simd: { any(x86_simd, arm_simd) },
    }
}
