//! What machine the report ran on.

/// The CPU model name, from /proc/cpuinfo where there is one.
pub(crate) fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| format!("unknown ({})", std::env::consts::ARCH))
}

/// The number of threads the machine offers.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The instruction-set extensions that matter to mdu, as detected at run
/// time.
pub(crate) fn features() -> Vec<String> {
    #[allow(unused_mut)]
    let mut out: Vec<String> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! probe {
            ($($f:tt),*) => {$(
                if std::arch::is_x86_feature_detected!($f) {
                    out.push($f.to_string());
                }
            )*};
        }
        probe!(
            "sse4.1",
            "ssse3",
            "aes",
            "pclmulqdq",
            "sha",
            "avx",
            "avx2",
            "bmi2",
            "vaes",
            "vpclmulqdq",
            "avx512f",
            "avx512bw",
            "avx512vl",
            "avx512vbmi"
        );
    }
    #[cfg(target_arch = "aarch64")]
    {
        macro_rules! probe {
            ($($f:tt),*) => {$(
                if std::arch::is_aarch64_feature_detected!($f) {
                    out.push($f.to_string());
                }
            )*};
        }
        probe!("neon", "aes", "pmull", "sha2");
    }
    if out.is_empty() {
        out.push("none detected".to_string());
    }
    out
}
