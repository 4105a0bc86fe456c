//! Crate-private cfg aliases, so that the source names what it means
//! instead of spelling out target conditions at every use:
//!
//! * `x86_simd`: the x86_64 SHA-256 backend (SHA-NI) is compiled (x86_64,
//!   not Miri);
//! * `arm_simd`: the arm64 one (SHA-2 instructions) is compiled (aarch64,
//!   not Miri);
//! * `simd`: either of them.
//!
//! Under Miri only the portable backend is built: Miri cannot run the
//! vendor intrinsics.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(x86_simd, arm_simd, simd)");
    let miri = std::env::var_os("CARGO_CFG_MIRI").is_some();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let x86 = !miri && arch == "x86_64";
    let arm = !miri && arch == "aarch64";
    for (name, on) in [("x86_simd", x86), ("arm_simd", arm), ("simd", x86 || arm)] {
        if on {
            println!("cargo::rustc-cfg={name}");
        }
    }
}
