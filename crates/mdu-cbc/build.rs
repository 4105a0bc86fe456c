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
    println!("cargo::rustc-check-cfg=cfg(x86_simd, arm_simd, simd)");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let miri = std::env::var_os("CARGO_CFG_MIRI").is_some();
    let arch = var("CARGO_CFG_TARGET_ARCH");
    let little = var("CARGO_CFG_TARGET_ENDIAN") == "little";
    let x86 = !miri && arch == "x86_64";
    let arm = !miri && arch == "aarch64" && little;
    for (name, on) in [("x86_simd", x86), ("arm_simd", arm), ("simd", x86 || arm)] {
        if on {
            println!("cargo::rustc-cfg={name}");
        }
    }
}
