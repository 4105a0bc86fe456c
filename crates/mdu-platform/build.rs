//! Names the target conditions of this crate's kernels (`cfg(x86_simd)`,
//! `cfg(arm_simd)`, ...): the table in `src/target.rs`, which the crates
//! above read through their own build scripts.

#[allow(unreachable_pub, dead_code)]
#[path = "src/target.rs"]
mod target;

fn main() {
    target::emit();
}
