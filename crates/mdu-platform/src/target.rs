//! The target conditions of the mdu crates, each named once.
//!
//! A SIMD kernel is compiled where its architecture is, and never under
//! Miri, which cannot run vendor intrinsics (`cfg(miri)` switches every
//! SIMD path off there, leaving the portable ones to check). Rather than
//! spell that combination out at every module, variant and match arm, a
//! crate's build script calls [`emit`] and its code says `#[cfg(x86_simd)]`:
//!
//! | name       | holds where                                                         |
//! |------------|---------------------------------------------------------------------|
//! | `x86_simd` | `all(target_arch = "x86_64", not(miri))`: the x86_64 kernels and CPUID |
//! | `arm_simd` | `all(target_arch = "aarch64", target_endian = "little", not(miri))`: the arm64 kernels over the register layer |
//! | `arm_cpu`  | `all(target_arch = "aarch64", not(miri))`: arm64 code that holds for either byte order (CPU detection, base64's NEON) |
//! | `simd`     | `any(x86_simd, arm_simd)` |
//!
//! This file is also the build script of `mdu-platform` itself (through
//! `include!`), so the crates and the layer they stand on read one table.

/// The names [`emit`] declares, in the order of [`conditions`].
pub const NAMES: [&str; 4] = ["x86_simd", "arm_simd", "arm_cpu", "simd"];

/// Which of [`NAMES`] hold for a target architecture and byte order, as
/// Cargo spells them (`CARGO_CFG_TARGET_ARCH`, `CARGO_CFG_TARGET_ENDIAN`),
/// and whether the build is for Miri.
///
/// ```
/// use mdu_platform::target::conditions;
///
/// assert_eq!(conditions("x86_64", "little", false), [true, false, false, true]);
/// assert_eq!(conditions("aarch64", "little", false), [false, true, true, true]);
/// assert_eq!(conditions("aarch64", "big", false), [false, false, true, false]);
/// // Under Miri, and on every other architecture, none holds.
/// assert_eq!(conditions("x86_64", "little", true), [false; 4]);
/// assert_eq!(conditions("riscv64", "little", false), [false; 4]);
/// ```
pub fn conditions(arch: &str, endian: &str, miri: bool) -> [bool; 4] {
    let x86 = arch == "x86_64" && !miri;
    let arm = arch == "aarch64" && !miri;
    let arm_le = arm && endian == "little";
    [x86, arm_le, arm, x86 || arm_le]
}

/// Tells Cargo, from a build script, which of [`NAMES`] hold for the
/// target being built (each declared to `check-cfg` as well, so a
/// misspelt name is a warning). Cargo gives a build script the target's
/// `cfg`s as `CARGO_CFG_*`; `cargo miri` adds `CARGO_CFG_MIRI`.
///
/// ```no_run
/// // All that `main` of the build.rs of a crate with SIMD kernels does
/// // (`mdu-platform`, feature `std`, among its [build-dependencies]):
/// mdu_platform::target::emit();
/// ```
pub fn emit() {
    let var = |name| std::env::var(name).unwrap_or_default();
    let miri = std::env::var_os("CARGO_CFG_MIRI").is_some();
    let holds = conditions(
        &var("CARGO_CFG_TARGET_ARCH"),
        &var("CARGO_CFG_TARGET_ENDIAN"),
        miri,
    );
    std::println!("cargo::rerun-if-changed=build.rs");
    for (name, holds) in NAMES.iter().zip(holds) {
        std::println!("cargo::rustc-check-cfg=cfg({name})");
        if holds {
            std::println!("cargo::rustc-cfg={name}");
        }
    }
}
