//! Inputs read as promised: a file is read up to the size it had when it
//! was opened and no further, and one that ends earlier is an error naming
//! the file and the offset (never a digest or tree of a shorter file);
//! inputs without a size (character devices, FIFOs) are refused before they
//! are read where the work has no end to stop at; block devices are sized
//! by seeking to their end; file names are printed as their bytes.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{Rng, expect_code, have_tool, mdu, run, scratch};

/// Runs `cmd` with `stdin` (or nothing) on its standard input, and panics
/// if it is still running after `secs` seconds (it is killed first).
fn run_within(cmd: &mut Command, stdin: Option<&[u8]>, secs: u64, what: &str) -> Output {
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let input = input.to_vec();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {secs} s (killed); stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn root_of(stdout: &[u8]) -> String {
    String::from_utf8_lossy(stdout)
        .lines()
        .find_map(|l| l.strip_prefix("Root hash:"))
        .expect("a Root hash line")
        .trim()
        .to_owned()
}

/// A regular file whose size (4096 on sysfs) overstates what a read gives
/// (a few bytes): what a file truncated while it is read looks like, made
/// deterministic. `None` (and a SKIPPED line) where there is none.
fn file_shorter_than_its_size(test: &str) -> Option<(PathBuf, u64, u64)> {
    for p in [
        "/sys/devices/system/cpu/online",
        "/sys/devices/system/cpu/possible",
        "/sys/kernel/mm/transparent_hugepage/enabled",
    ] {
        let p = PathBuf::from(p);
        let (Ok(meta), Ok(bytes)) = (std::fs::metadata(&p), std::fs::read(&p)) else {
            continue;
        };
        if meta.is_file() && (bytes.len() as u64) < meta.len() {
            return Some((p, meta.len(), bytes.len() as u64));
        }
    }
    eprintln!("SKIPPED {test}: no sysfs file whose size overstates its contents");
    None
}

#[test]
fn fsverity_digest_of_a_file_that_ends_before_its_size_is_an_error_naming_the_offset() {
    let test = "fsverity_digest_of_a_file_that_ends_before_its_size_is_an_error_naming_the_offset";
    let Some((short, size, real)) = file_shorter_than_its_size(test) else {
        return;
    };
    let dir = scratch();
    let good = dir.path().join("good");
    std::fs::write(&good, b"hello").unwrap();
    let offset = format!("at byte offset {real}");
    for mmap in [&[][..], &["--no-mmap"][..]] {
        let out = run(mdu().args(["fsverity", "digest"]).args(mmap).arg(&short));
        expect_code(&out, 1, &format!("digest {mmap:?} {}", short.display()));
        let err = stderr(&out);
        assert!(
            err.contains(&*short.to_string_lossy())
                && err.contains(&offset)
                && err.contains("unexpected end of file")
                && err.contains(&format!("{size} bytes")),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "a digest was printed");
    }
    // Among many files: the lines before it, then the error.
    let out = run(mdu().args(["fsverity", "digest"]).arg(&good).arg(&short));
    expect_code(&out, 1, "many files");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    let err = stderr(&out);
    assert!(err.contains("unexpected end of file"), "{err}");
    if have_tool("fsverity", test) {
        let theirs = run(Command::new("fsverity").arg("digest").arg(&short));
        assert!(!theirs.status.success());
        assert!(stderr(&theirs).contains("unexpected end-of-file"));
    }
}

#[test]
fn crypt_and_luks_of_a_file_that_ends_before_its_size_name_the_file_and_the_offset() {
    let test = "crypt_and_luks_of_a_file_that_ends_before_its_size_name_the_file_and_the_offset";
    let Some((short, size, real)) = file_shorter_than_its_size(test) else {
        return;
    };
    let dir = scratch();
    let d = dir.path();
    std::fs::write(
        d.join("key"),
        [0x5au8; 32]
            .iter()
            .chain(&[0xa5u8; 32])
            .copied()
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    std::fs::write(d.join("pass"), b"pw").unwrap();
    let name = short.to_string_lossy().into_owned();
    let runs: [&[&str]; 3] = [
        &["crypt", "encrypt", "--key-file", "key", &name, "out"],
        &["crypt", "decrypt", "--key-file", "key", &name, "out"],
        &[
            "luks",
            "encrypt",
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
            "--key-file",
            "pass",
            &name,
            "out",
        ],
    ];
    for args in runs {
        let out = run(mdu().args(args).current_dir(d));
        expect_code(&out, common::bad_input(args), &args.join(" "));
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "{name}: at byte offset {real}: unexpected end of file"
            )) && err.contains(&format!("to byte {size}"))
                && !err.contains("fill whole buffer"),
            "{args:?}: {err}"
        );
        assert_eq!(
            common::entries(d),
            ["key", "pass"],
            "{args:?} left an output"
        );
    }
}

#[test]
fn a_directory_given_as_an_input_is_refused_as_a_directory() {
    let dir = scratch();
    let d = dir.path();
    std::fs::create_dir(d.join("dir")).unwrap();
    std::fs::write(d.join("data"), vec![3u8; 8192]).unwrap();
    std::fs::write(d.join("key"), (0..64u8).collect::<Vec<u8>>()).unwrap();
    std::fs::write(d.join("pass"), b"pw").unwrap();
    let formatted = run(mdu()
        .args(["verity", "format", "--salt", "-", "data", "hash"])
        .current_dir(d));
    expect_code(&formatted, 0, "verity format");
    let root = root_of(&formatted.stdout);
    let luks_encrypt: &[&str] = &[
        "luks",
        "encrypt",
        "--key-file",
        "pass",
        "--pbkdf",
        "pbkdf2",
        "--pbkdf-force-iterations",
        "1000",
        "dir",
        "out",
    ];
    let runs: [&[&str]; 12] = [
        &["fsverity", "digest", "dir"],
        &["fsverity", "digest", "--no-mmap", "dir"],
        &["fsverity", "digest", "data", "dir"],
        &["verity", "format", "dir", "out"],
        &["verity", "verify", "dir", "hash", &root],
        &["verity", "verify", "data", "dir", &root],
        &["verity", "dump", "dir"],
        &["crypt", "encrypt", "--key-file", "key", "dir", "out"],
        &["crypt", "decrypt", "--key-file", "key", "dir", "out"],
        luks_encrypt,
        &["luks", "dump", "dir"],
        &["luks", "check", "dir"],
    ];
    for args in runs {
        let out = run(mdu().args(args).current_dir(d));
        // A directory is a wrong device to cryptsetup (4), a failure to
        // fsverity (1).
        let code = match args[0] {
            "luks" => 4,
            "fsverity" => 1,
            _ => 2,
        };
        expect_code(&out, code, &args.join(" "));
        let err = stderr(&out);
        assert!(
            err.contains("dir: ") && err.contains("is a directory") && !err.contains("os error"),
            "{args:?}: {err}"
        );
        assert!(!d.join("out").exists(), "{args:?} wrote an output");
    }
}

#[test]
fn verity_format_and_verify_of_a_file_that_ends_before_its_size_are_errors() {
    let test = "verity_format_and_verify_of_a_file_that_ends_before_its_size_are_errors";
    let Some((short, size, real)) = file_shorter_than_its_size(test) else {
        return;
    };
    let dir = scratch();
    let d = dir.path();
    let hash = d.join("hash");
    for mmap in [&[][..], &["--no-mmap"][..]] {
        let out = run(mdu()
            .args(["verity", "format"])
            .args(mmap)
            .arg(&short)
            .arg(&hash));
        expect_code(&out, 2, &format!("format {mmap:?}"));
        let err = stderr(&out);
        assert!(
            err.contains("unexpected end of file") && err.contains(&format!("{size} bytes")),
            "{err}"
        );
        assert!(!hash.exists(), "a hash image was written");
    }
    // A one-block tree to verify the short file against.
    let block = d.join("block");
    std::fs::write(&block, vec![0u8; size as usize]).unwrap();
    let opts = ["--no-superblock", "--salt=-", "--data-blocks=1"];
    let out = run(mdu()
        .args(["verity", "format"])
        .args(opts)
        .arg(&block)
        .arg(&hash));
    expect_code(&out, 0, "format of a block");
    let root = root_of(&out.stdout);
    for mmap in [&[][..], &["--no-mmap"][..]] {
        let out = run(mdu()
            .args(["verity", "verify"])
            .args(opts)
            .args(mmap)
            .arg(&short)
            .arg(&hash)
            .arg(&root));
        expect_code(&out, 2, &format!("verify {mmap:?}"));
        let err = stderr(&out);
        assert!(
            err.contains("unexpected end of file")
                && err.contains(&format!("at byte offset {real}")),
            "{err}"
        );
    }
}

/// `mdu verity verify` of a character device or a pipe: finite, and a
/// verdict (0 or 1) rather than a refusal.
fn verify_stops_where_the_tree_does(d: &Path) {
    let (data, hash) = (d.join("data"), d.join("verify-hash"));
    let bytes = Rng::new("verify_stops_where_the_tree_does").bytes(6 * 4096);
    std::fs::write(&data, &bytes).unwrap();
    let out = run(mdu()
        .args(["verity", "format", "--salt=-"])
        .arg(&data)
        .arg(&hash));
    expect_code(&out, 0, "format");
    let root = root_of(&out.stdout);
    let verify = |input: &str, stdin: Option<&[u8]>, what: &str| {
        run_within(
            mdu()
                .args(["verity", "verify", input])
                .arg(&hash)
                .arg(&root),
            stdin,
            20,
            what,
        )
    };
    expect_code(&verify("/dev/zero", None, "/dev/zero"), 1, "/dev/zero");
    expect_code(&verify("/dev/null", None, "/dev/null"), 1, "/dev/null");
    expect_code(&verify("/dev/stdin", Some(&bytes), "a pipe"), 0, "a pipe");
    let mut bad = bytes.clone();
    bad[3 * 4096 + 5] ^= 1;
    expect_code(
        &verify("/dev/stdin", Some(&bad), "a bad pipe"),
        1,
        "a bad pipe",
    );
}

#[test]
fn inputs_without_a_size_are_refused_up_front_where_hashing_has_no_end() {
    let test = "inputs_without_a_size_are_refused_up_front_where_hashing_has_no_end";
    let dir = scratch();
    let d = dir.path();
    let hash = d.join("hash");
    let fifo = d.join("fifo");
    let empty = d.join("empty");
    std::fs::write(&empty, b"").unwrap();
    let made = run(Command::new("mkfifo").arg(&fifo)).status.success();
    let data = vec![7u8; 5 * 4096];
    let mut inputs: Vec<(PathBuf, &str, Option<&[u8]>)> = vec![
        ("/dev/zero".into(), "a character device", None),
        ("/dev/null".into(), "a character device", None),
        // A pipe with data in it: it ends, but has no size up front.
        ("/dev/stdin".into(), "a FIFO", Some(&data[..])),
    ];
    if made {
        // No writer: opening it would wait forever.
        inputs.push((fifo.clone(), "a FIFO", None));
    } else {
        eprintln!("SKIPPED {test} (its FIFO half): mkfifo failed");
    }
    for (input, kind, stdin) in &inputs {
        let name = input.display().to_string();
        let runs: [(&str, Vec<&std::ffi::OsStr>); 4] = [
            (
                "fsverity digest",
                vec!["fsverity".as_ref(), "digest".as_ref(), input.as_os_str()],
            ),
            (
                "fsverity digest --no-mmap",
                vec![
                    "fsverity".as_ref(),
                    "digest".as_ref(),
                    "--no-mmap".as_ref(),
                    input.as_os_str(),
                ],
            ),
            (
                "fsverity digest of many files",
                vec![
                    "fsverity".as_ref(),
                    "digest".as_ref(),
                    empty.as_os_str(),
                    input.as_os_str(),
                ],
            ),
            (
                "verity format",
                vec![
                    "verity".as_ref(),
                    "format".as_ref(),
                    input.as_os_str(),
                    hash.as_os_str(),
                ],
            ),
        ];
        for (what, args) in runs {
            if name == "/dev/null" && what.starts_with("fsverity") {
                // The null device reads as empty, always: its fs-verity
                // digest is the empty file's, as `fsverity digest` prints
                // (tests/verity/fsverity.rs).
                continue;
            }
            let what = format!("{what} {name}");
            let out = run_within(mdu().args(&args), *stdin, 20, &what);
            // fsverity's status for a file it cannot hash is 1.
            let code = if what.starts_with("fsverity") { 1 } else { 2 };
            expect_code(&out, code, &what);
            let err = stderr(&out);
            assert!(
                err.contains(&format!("{name}: ")) && err.contains(kind) && err.contains("no size"),
                "{what}: {err}"
            );
            if !what.contains("many") {
                assert!(out.stdout.is_empty(), "{what} printed a result");
            }
            assert!(!hash.exists(), "{what} wrote a hash image");
        }
    }
    // Verification is bounded by the tree: these are read only as far as
    // it goes (a character device that seeks counts as empty).
    verify_stops_where_the_tree_does(d);
    // The reference tools decide from the type and size up front too.
    if have_tool("veritysetup", test) {
        let out = run_within(
            Command::new("veritysetup")
                .args(["format", "/dev/zero"])
                .arg(&hash),
            None,
            20,
            "veritysetup format /dev/zero",
        );
        assert!(!out.status.success());
        assert!(stderr(&out).contains("not compatible"), "{}", stderr(&out));
    }
    if have_tool("fsverity", test) {
        // fsverity digest takes the size (0) and hashes an empty file.
        let out = run_within(
            Command::new("fsverity").args(["digest", "/dev/zero"]),
            None,
            20,
            "fsverity digest /dev/zero",
        );
        assert!(out.status.success());
    }
}

/// A loop device over a new file of `len` random bytes, detached on drop.
struct Loop {
    dev: PathBuf,
    backing: PathBuf,
}

impl Loop {
    fn new(dir: &Path, name: &str, bytes: &[u8], test: &str) -> Option<Loop> {
        let backing = dir.join(name);
        std::fs::write(&backing, bytes).unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&backing)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Loop {
                dev: PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
                backing,
            }),
            Ok(o) => {
                eprintln!(
                    "SKIPPED {test}: losetup failed (root and loop devices needed): {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("SKIPPED {test}: cannot run losetup: {e}");
                None
            }
        }
    }

    /// The device's bytes, read through the device.
    fn read(&self) -> Vec<u8> {
        std::fs::read(&self.dev).unwrap()
    }

    /// Writes `bytes` at `at` through the device, synced.
    fn write_at(&self, at: u64, bytes: &[u8]) {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.dev)
            .unwrap();
        f.write_all_at(bytes, at).unwrap();
        f.sync_all().unwrap();
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        let _ = std::fs::remove_file(&self.backing);
    }
}

#[test]
fn verity_format_of_a_block_device_onto_itself_refuses_an_overlap_and_allows_an_offset_past_the_data()
 {
    let test = "verity_format_of_a_block_device_onto_itself_refuses_an_overlap_and_allows_an_offset_past_the_data";
    let dir = scratch();
    let d = dir.path();
    let bytes = Rng::new(test).bytes(1 << 20);
    let Some(lo) = Loop::new(d, "backing", &bytes, test) else {
        return;
    };
    // A second node of the same device: another name, the same rdev.
    let alias = d.join("alias");
    let rdev = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&lo.dev).unwrap().rdev()
    };
    let (major, minor) = ((rdev >> 8) & 0xfff, (rdev & 0xff) | ((rdev >> 12) & !0xff));
    let have_alias = run(Command::new("mknod")
        .arg(&alias)
        .arg("b")
        .arg(major.to_string())
        .arg(minor.to_string()))
    .status
    .success();
    let mut hashes = vec![lo.dev.clone()];
    if have_alias {
        hashes.push(alias.clone());
    } else {
        eprintln!("SKIPPED {test} (its second device node): mknod failed");
    }
    let refused: [&[&str]; 3] = [
        &[],
        &["--hash-offset=524288"],
        &["--hash-offset=524288", "--data-blocks=129"],
    ];
    for hash in &hashes {
        for opts in refused {
            let what = format!("format {} {} {opts:?}", lo.dev.display(), hash.display());
            let out = run(mdu()
                .args(["verity", "format"])
                .args(opts)
                .arg(&lo.dev)
                .arg(hash));
            expect_code(&out, 2, &what);
            assert!(
                stderr(&out).contains("overlaps"),
                "{what}: {}",
                stderr(&out)
            );
            assert!(lo.read() == bytes, "{what}: the device was written");
        }
    }
    // The hash area after the data: allowed, as veritysetup allows it, and
    // the data is left as it was.
    let hash = hashes.last().unwrap();
    let out = run(mdu()
        .args([
            "verity",
            "format",
            "--hash-offset=524288",
            "--data-blocks=128",
            "--salt=-",
        ])
        .arg(&lo.dev)
        .arg(hash));
    expect_code(&out, 0, "hash area past the data");
    let after = lo.read();
    assert!(
        after[..524288] == bytes[..524288],
        "the data area was written"
    );
    assert!(
        after[524288..] != bytes[524288..],
        "no hash area was written"
    );
    let root = root_of(&out.stdout);
    let out = run(mdu()
        .args(["verity", "verify", "--hash-offset=524288"])
        .arg(&lo.dev)
        .arg(&lo.dev)
        .arg(&root));
    expect_code(&out, 0, "verify of the same device");
    if have_tool("veritysetup", test) {
        let out = run(Command::new("veritysetup")
            .args(["verify", "--hash-offset=524288"])
            .arg(&lo.dev)
            .arg(&lo.dev)
            .arg(&root));
        assert!(out.status.success(), "veritysetup: {}", stderr(&out));
    }
}

#[test]
fn fec_verify_of_a_block_device_without_a_superblock_corrects_it_like_veritysetup() {
    let test = "fec_verify_of_a_block_device_without_a_superblock_corrects_it_like_veritysetup";
    let dir = scratch();
    let d = dir.path();
    let bytes = Rng::new(test).bytes(64 * 4096);
    let Some(lo) = Loop::new(d, "backing", &bytes, test) else {
        return;
    };
    let (hash, fec) = (d.join("hash"), d.join("fec"));
    let opts = [
        "--no-superblock".to_owned(),
        "--salt=-".to_owned(),
        format!("--fec-device={}", fec.display()),
        "--fec-roots=4".to_owned(),
    ];
    let out = run(mdu()
        .args(["verity", "format"])
        .args(&opts)
        .arg(&lo.dev)
        .arg(&hash));
    expect_code(&out, 0, "format");
    let root = root_of(&out.stdout);
    lo.write_at(5 * 4096 + 17, &[bytes[5 * 4096 + 17] ^ 0x5a]);
    let out = run(mdu()
        .args(["verity", "verify"])
        .args(&opts)
        .arg(&lo.dev)
        .arg(&hash)
        .arg(&root));
    expect_code(&out, 0, "verify --fec-device of the device");
    let err = stderr(&out);
    assert!(err.contains("FEC corrected 1 bytes"), "{err}");
    if have_tool("veritysetup", test) {
        let out = run(Command::new("veritysetup")
            .arg("verify")
            .args(&opts)
            .arg(&lo.dev)
            .arg(&hash)
            .arg(&root));
        assert!(out.status.success(), "veritysetup: {}", stderr(&out));
    }
}

#[test]
fn fec_of_data_from_a_pipe_or_with_a_short_parity_is_verification_failed() {
    let test = "fec_of_data_from_a_pipe_or_with_a_short_parity_is_verification_failed";
    let dir = scratch();
    let d = dir.path();
    let bytes = Rng::new(test).bytes(40 * 4096);
    let (data, hash, fec) = (d.join("data"), d.join("hash"), d.join("fec"));
    std::fs::write(&data, &bytes).unwrap();
    let fec_opt = format!("--fec-device={}", fec.display());
    let out = run(mdu()
        .args(["verity", "format", "--salt=-", &fec_opt])
        .arg(&data)
        .arg(&hash));
    expect_code(&out, 0, "format");
    let root = root_of(&out.stdout);
    let mut bad = bytes.clone();
    bad[7 * 4096 + 3] ^= 0x11;
    // From a pipe: read once, so FEC cannot read it again; the failure stands.
    let out = run_within(
        mdu()
            .args(["verity", "verify", &fec_opt, "/dev/stdin"])
            .arg(&hash)
            .arg(&root),
        Some(&bad),
        20,
        "a pipe",
    );
    expect_code(&out, 1, "corrupt data from a pipe with --fec-device");
    let err = stderr(&out);
    assert!(err.contains("data block 7"), "{err}");
    // A parity file cut short: damage, not bad usage.
    std::fs::write(&data, &bad).unwrap();
    let parity = std::fs::read(&fec).unwrap();
    std::fs::write(&fec, &parity[..parity.len() / 3]).unwrap();
    let out = run(mdu()
        .args(["verity", "verify", &fec_opt])
        .arg(&data)
        .arg(&hash)
        .arg(&root));
    expect_code(&out, 1, "a short parity");
    let err = stderr(&out);
    assert!(err.contains("parity ends"), "{err}");
    std::fs::write(&fec, b"").unwrap();
    let out = run(mdu()
        .args(["verity", "verify", &fec_opt])
        .arg(&data)
        .arg(&hash)
        .arg(&root));
    expect_code(&out, 1, "an empty parity");
}

#[test]
fn non_utf8_file_names_are_printed_as_their_bytes_like_fsverity_digest_and_veritysetup() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let test =
        "non_utf8_file_names_are_printed_as_their_bytes_like_fsverity_digest_and_veritysetup";
    let dir = scratch();
    let d = dir.path();
    let name = d.join(OsStr::from_bytes(b"caf\xe9-\xff"));
    std::fs::write(&name, b"some bytes").unwrap();
    let mut want = b"sha256:".to_vec();
    let out = run(mdu().args(["fsverity", "digest"]).arg(&name));
    expect_code(&out, 0, "digest");
    let line = &out.stdout;
    let mut tail = b" ".to_vec();
    tail.extend_from_slice(name.as_os_str().as_bytes());
    tail.push(b'\n');
    assert!(line.ends_with(&tail), "{:?}", String::from_utf8_lossy(line));
    assert!(line.starts_with(&want));
    for many in [false, true] {
        let mut cmd = mdu();
        cmd.args(["fsverity", "digest"]).arg(&name);
        if many {
            cmd.arg(&name);
        }
        let out = run(&mut cmd);
        expect_code(&out, 0, "digest");
        let mut lines = out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty());
        assert!(lines.all(|l| l.ends_with(name.as_os_str().as_bytes())));
        if have_tool("fsverity", test) {
            let mut theirs = Command::new("fsverity");
            theirs.arg("digest").arg(&name);
            if many {
                theirs.arg(&name);
            }
            let theirs = run(&mut theirs);
            assert!(theirs.status.success());
            assert_eq!(out.stdout, theirs.stdout, "many: {many}");
        }
    }
    // --json stays valid JSON (U+FFFD for the bad bytes).
    let out = run(mdu().args(["fsverity", "digest", "--json"]).arg(&name));
    expect_code(&out, 0, "digest --json");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(v["file"], name.to_string_lossy().as_ref());
    // veritysetup's summary names the hash device as its bytes too.
    let data = d.join("data");
    std::fs::write(&data, vec![1u8; 8 * 4096]).unwrap();
    let hash = d.join(OsStr::from_bytes(b"hash-\xfe"));
    let out = run(mdu().args(["verity", "format"]).arg(&data).arg(&hash));
    expect_code(&out, 0, "verity format");
    want = b"VERITY header information for ".to_vec();
    want.extend_from_slice(hash.as_os_str().as_bytes());
    want.push(b'\n');
    assert!(
        out.stdout.starts_with(&want),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    if have_tool("veritysetup", test) {
        let theirs = run(Command::new("veritysetup")
            .arg("format")
            .arg(&data)
            .arg(&hash));
        assert!(theirs.status.success());
        assert!(theirs.stdout.starts_with(&want));
    }
    let out = run(mdu()
        .args(["verity", "format", "--json"])
        .arg(&data)
        .arg(&hash));
    expect_code(&out, 0, "verity format --json");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(v["hash_device"], hash.to_string_lossy().as_ref());
}

/// `mdu luks format /dev/stdout > FILE` is refused for what it is: an
/// output written as a stream through a descriptor (whatever it is open
/// on), not a FIFO or character device when it is a file.
#[test]
fn luks_format_to_stdout_is_refused_as_a_stream_not_as_a_device() {
    let dir = scratch();
    let d = dir.path();
    std::fs::write(d.join("pass"), b"pw").unwrap();
    // Through a shell, as a user types it: only mdu holds the file open.
    let argv = common::mdu_argv().join(" ");
    let out = run(Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec {argv} luks format --key-file pass --pbkdf pbkdf2 \
             --pbkdf-force-iterations 1000 /dev/stdout > img"
        ))
        .current_dir(d));
    // A stream is a wrong device to cryptsetup (4).
    expect_code(&out, 4, "luks format /dev/stdout > img");
    let err = stderr(&out);
    assert!(
        err.contains("/dev/stdout: is written as a stream through this process's descriptor")
            && !err.contains("FIFO"),
        "{err}"
    );
    assert_eq!(std::fs::metadata(d.join("img")).unwrap().len(), 0);
}
