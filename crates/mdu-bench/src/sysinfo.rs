//! What machine the report ran on.

/// The CPU model name, from /proc/cpuinfo where there is one.
pub(crate) fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| cpu_model_of(&s))
        .unwrap_or_else(|| format!("unknown ({})", std::env::consts::ARCH))
}

/// The core clock in GHz, measured now: the time of a dependent chain of
/// register-to-register adds, which retire one per cycle (an add of an
/// immediate is not used: recent Intel cores can fold those at rename).
/// The best of several runs, so a preempted run does not count; `None`
/// where there is no such loop for the architecture.
pub(crate) fn clock_ghz() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        let run = || {
            let n: u64 = 20_000_000;
            let t = std::time::Instant::now();
            let mut x: u64 = 1;
            // SAFETY: register arithmetic only; the loop ends when `n`
            // reaches zero (it is a multiple of 4).
            unsafe {
                core::arch::asm!(
                    "2:",
                    "add {x}, {y}",
                    "add {x}, {y}",
                    "add {x}, {y}",
                    "add {x}, {y}",
                    "sub {n}, 4",
                    "jnz 2b",
                    x = inout(reg) x,
                    y = in(reg) 3u64,
                    n = inout(reg) n => _,
                    options(nomem, nostack),
                );
            }
            std::hint::black_box(x);
            n as f64 / t.elapsed().as_secs_f64() / 1e9
        };
        return (0..7).map(|_| run()).reduce(f64::max);
    }
    #[allow(unreachable_code)]
    None
}

/// The running kernel's release (`/proc/sys/kernel/osrelease`), or
/// `unknown`.
pub(crate) fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!("Linux {}", s.trim()))
        .unwrap_or_else(|_| format!("unknown ({})", std::env::consts::OS))
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

/// Why the figures of this run would mean nothing because the CPU is
/// emulated, if it is: an arm64 build whose `/proc/cpuinfo` describes an x86
/// CPU runs under a user-mode emulator such as qemu-user.
pub(crate) fn emulation() -> Option<String> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    emulation_of(std::env::consts::ARCH, &cpuinfo)
}

/// [`emulation`] as a pure function of the build's architecture and the text
/// of `/proc/cpuinfo`.
pub(crate) fn emulation_of(arch: &str, cpuinfo: &str) -> Option<String> {
    let has = |key: &str| cpuinfo.lines().any(|l| l.starts_with(key));
    let x86_host = has("vendor_id") || has("model name");
    let arm_host = has("CPU implementer");
    (arch == "aarch64" && x86_host && !arm_host).then(|| {
        format!(
            "this {arch} build runs under an emulator (/proc/cpuinfo describes \
             {}, an x86 CPU)",
            cpu_model_of(cpuinfo).unwrap_or_else(|| "the host".to_string())
        )
    })
}

fn cpu_model_of(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name") || l.starts_with("Model"))
        .and_then(|l| l.split(':').nth(1))
        .map(|m| m.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZEN4: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\n\
                        model name\t: AMD EPYC 9R14\nflags\t\t: fpu sse aes\n";
    const NEOVERSE: &str = "processor\t: 0\nBogoMIPS\t: 2100.00\n\
                            Features\t: fp asimd aes pmull sha2\n\
                            CPU implementer\t: 0x41\nCPU part\t: 0xd40\n";

    #[test]
    fn an_arm64_build_on_an_x86_cpu_is_emulated() {
        let why = emulation_of("aarch64", ZEN4).expect("emulated");
        assert!(why.contains("AMD EPYC 9R14"), "{why}");
    }

    #[test]
    fn native_runs_are_not_emulated() {
        assert_eq!(emulation_of("aarch64", NEOVERSE), None);
        assert_eq!(emulation_of("x86_64", ZEN4), None);
        // Without /proc/cpuinfo nothing can be told.
        assert_eq!(emulation_of("aarch64", ""), None);
    }
}
