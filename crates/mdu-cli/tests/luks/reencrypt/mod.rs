//! `mdu luks reencrypt` against cryptsetup 2.6: a run of either tool is
//! finished by the other, a kill at any sync point loses no byte (killed
//! with strace's fault injection, resumed by mdu or by cryptsetup), and a
//! record that was tampered with is refused before anything moves.

mod crash;
mod data_shift;
mod interop;

use std::fmt::Write as _;

use crate::common::KillSweep;

use super::*;

/// Eight hotzones over the 8 MiB of data.
const HOTZONE: &str = "1048576";

/// The sweeps of shifted encryptions: every seventh sync point (each one
/// with `MDU_EXHAUSTIVE=1`).
const SHIFT_SWEEP: KillSweep = KillSweep {
    first: 1,
    stride: 7,
    tail: 0,
};

struct Volume {
    dir: tempfile::TempDir,
    key: String,
    plain: Vec<u8>,
    plain_path: String,
}

impl Volume {
    /// A key file and 8 MiB of random plaintext.
    fn new(test: &str) -> Volume {
        let mut rng = Rng::new(test);
        let dir = scratch();
        let key = dir.path().join("key");
        std::fs::write(&key, rng.bytes(24)).unwrap();
        let plain = rng.bytes(8 << 20);
        let plain_path = dir.path().join("plain");
        std::fs::write(&plain_path, &plain).unwrap();
        Volume {
            key: key.to_str().unwrap().to_owned(),
            plain_path: plain_path.to_str().unwrap().to_owned(),
            dir,
            plain,
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    /// A LUKS2 image (header in it, data at 16 MiB) of the plaintext.
    fn image(&self, name: &str) -> String {
        let img = self.path(name);
        let _ = std::fs::remove_file(&img);
        let out = run(mdu()
            .args(["luks", "encrypt", "--key-file", &self.key])
            .args(PBKDF2)
            .args([&self.plain_path, &img]));
        expect_code(&out, 0, "luks encrypt");
        img
    }

    /// A copy of the plaintext, to encrypt in place.
    fn data(&self, name: &str) -> String {
        let p = self.path(name);
        std::fs::write(&p, &self.plain).unwrap();
        p
    }

    /// `mdu luks decrypt` gives the plaintext back.
    fn assert_plain(&self, img: &str, what: &str) {
        let out_path = self.path("dec");
        let _ = std::fs::remove_file(&out_path);
        let out = run(mdu()
            .args(["luks", "decrypt", "--key-file", &self.key, img])
            .arg(&out_path));
        expect_code(&out, 0, &format!("{what}: decrypt"));
        assert!(
            std::fs::read(&out_path).unwrap() == self.plain,
            "{what}: the data changed"
        );
    }

    fn mdu_reencrypt(&self, args: &[&str]) -> Output {
        run(mdu()
            .args([
                "luks",
                "reencrypt",
                "--iter-time",
                "1",
                "--key-file",
                &self.key,
                "--hotzone-size",
                HOTZONE,
            ])
            .args(args))
    }

    fn cs(&self, args: &[&str]) -> Output {
        cryptsetup(self.dir.path(), args)
    }
}

/// The volume of a crash test, or `None` (said) where cryptsetup or
/// strace is missing or the run is emulated.
fn crash_volume(test: &str) -> Option<Volume> {
    if !have_tool("cryptsetup", test) || !have_tool("strace", test) {
        return None;
    }
    if emulated() {
        eprintln!(
            "SKIPPED: {test}: the crash sample runs on the host only (not under the emulator)"
        );
        return None;
    }
    Some(Volume::new(test))
}

/// Runs `argv` under strace, killed at its `n`-th fsync or fdatasync;
/// whether it ran to its end instead (fewer sync points).
fn killed_at(dir: &Path, n: usize, argv: &[String]) -> bool {
    assert!(
        n < 1000,
        "no run ended by itself before sync {n}: is strace tracing?"
    );
    // In `dir`: a killed cryptsetup leaves its temporary header
    // (`LUKS2-temp-*.new`) in its working directory.
    run(common::strace_kill(n, argv).current_dir(dir))
        .status
        .code()
        != Some(0)
}
