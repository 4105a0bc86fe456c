//! Names the target conditions of this crate's kernels once (`cfg(x86_simd)`,
//! `cfg(arm_simd)`, ...): `mdu_platform::target` says what each holds.

fn main() {
    mdu_platform::target::emit();
}
