//! Builds the C baselines the report measures beside mdu.

fn main() {
    println!("cargo:rerun-if-changed=csrc/kernel_base64.c");
    cc::Build::new()
        .file("csrc/kernel_base64.c")
        // The kernel builds with -O2; so do the baselines.
        .opt_level(2)
        .warnings(true)
        .compile("mdu_kernel_base64");
}
