//! `mdu fscrypt` against the running kernel: the kernel encrypts a tree on
//! a loop-mounted ext4 image; `mdu fscrypt extract` gives the same files,
//! modes, times and symlinks, and `mdu fscrypt ls` without a key gives the
//! no-key names `ls` showed. A wrong key is refused with both identifiers
//! and writes nothing.

mod common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use common::{expect_code, have_tool, mdu, run, scratch};
use mdu_testkit::tools::FSCRYPT_KERNEL_SCRIPT;
use mdu_testkit::unhex;
use serde_json::Value;
use sha2::{Digest, Sha256};

#[test]
fn extract_and_ls_give_what_the_kernel_shows() {
    let test = "fscrypt::extract_and_ls_give_what_the_kernel_shows";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    for (policy, v1) in [("v2-lblk64", false), ("v1-pad4", true)] {
        let dir = scratch();
        let image = dir.path().join("fs.img");
        let key = dir.path().join("key");
        std::fs::write(
            &key,
            (0u8..64).map(|i| i.wrapping_mul(29)).collect::<Vec<_>>(),
        )
        .unwrap();
        let json = dir.path().join("m.json");
        let out = run(Command::new("python3")
            .arg(FSCRYPT_KERNEL_SCRIPT)
            .arg("make")
            .arg(&image)
            .arg(&json)
            .args(["--policy", policy, "--seed", "5", "--key"])
            .arg(&key));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let m: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let key_arg: Vec<String> = if v1 {
            vec![
                "--key-v1".into(),
                format!("{}:{}", m["v1_descriptor"].as_str().unwrap(), key.display()),
            ]
        } else {
            vec!["--key".into(), key.display().to_string()]
        };

        // Extract, and compare every file, mode, time and symlink.
        let dest = dir.path().join("out");
        let out = run(mdu()
            .args(["fscrypt", "extract"])
            .arg(&image)
            .arg("vault")
            .args(&key_arg)
            .arg("--out")
            .arg(&dest));
        expect_code(&out, 0, "extract");
        let mut files = 0;
        for e in m["with_key"].as_array().unwrap() {
            let rel = unhex(e["path"].as_str().unwrap());
            let p = dest.join(std::ffi::OsStr::from_bytes(&rel));
            let what = format!("{policy}: {}", p.display());
            match e["type"].as_str().unwrap() {
                "file" => {
                    let data = std::fs::read(&p).unwrap_or_else(|err| panic!("{what}: {err}"));
                    assert_eq!(
                        Sha256::digest(&data).to_vec(),
                        unhex(e["sha256"].as_str().unwrap()),
                        "{what}"
                    );
                    let meta = std::fs::metadata(&p).unwrap();
                    // Less setuid and setgid: owners are not restored.
                    assert_eq!(
                        u64::from(meta.permissions().mode() & 0o7777),
                        e["mode"].as_u64().unwrap() & 0o1777,
                        "{what}"
                    );
                    let ns =
                        i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
                    assert_eq!(ns, i128::from(e["mtime_ns"].as_i64().unwrap()), "{what}");
                    files += 1;
                }
                "symlink" => {
                    let target = std::fs::read_link(&p).unwrap();
                    assert_eq!(
                        target.as_os_str().as_bytes(),
                        unhex(e["target"].as_str().unwrap()),
                        "{what}"
                    );
                }
                "dir" => assert!(p.is_dir(), "{what}"),
                // The tree's one special file: a FIFO, recreated.
                _ => {
                    use std::os::unix::fs::FileTypeExt;
                    let meta = std::fs::symlink_metadata(&p).unwrap();
                    assert!(meta.file_type().is_fifo(), "{what}");
                    assert_eq!(
                        u64::from(meta.mode()),
                        e["mode"].as_u64().unwrap(),
                        "{what}"
                    );
                }
            }
        }
        assert!(files > 80, "{policy}: {files} files compared");

        // Without a key: the no-key names of the top directory.
        let out = run(mdu().args(["fscrypt", "ls"]).arg(&image).arg("vault"));
        expect_code(&out, 0, "ls without a key");
        let mut got: Vec<&[u8]> = out
            .stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty() && *l != b"." && *l != b"..")
            .collect();
        let want_owned: Vec<Vec<u8>> = m["without_key"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| unhex(e["path"].as_str().unwrap()))
            .filter(|p| !p.contains(&b'/'))
            .collect();
        let mut want: Vec<&[u8]> = want_owned.iter().map(Vec::as_slice).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{policy}: no-key names");
        println!(
            "{policy}: {files} files extracted equal, {} no-key names equal",
            want.len()
        );

        // A wrong key: refused, naming both keys, nothing written.
        if !v1 {
            let wrong = dir.path().join("wrong");
            std::fs::write(&wrong, [7u8; 64]).unwrap();
            let dest = dir.path().join("never");
            let out = run(mdu()
                .args(["fscrypt", "extract"])
                .arg(&image)
                .arg("--key")
                .arg(&wrong)
                .arg("--out")
                .arg(&dest));
            expect_code(&out, 1, "extract with a wrong key");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(m["identifier"].as_str().unwrap()), "{err}");
            assert!(
                !Path::new(&dest).exists(),
                "a refused extract created its output"
            );
        }
    }
}

#[test]
fn fscrypt_help_explains_keys_and_exit_status() {
    for sub in ["ls", "cat", "extract"] {
        let out = run(mdu().args(["fscrypt", sub, "--help"]));
        expect_code(&out, 0, sub);
        let help = String::from_utf8_lossy(&out.stdout).replace('\n', " ");
        assert!(
            help.contains("--key-v1")
                && help.contains("Exit status")
                && help.contains("checked only through the")
                && help.contains("What cannot be checked"),
            "{sub}: {help}"
        );
    }
}

/// Makes a key file of 64 bytes.
fn key_file(dir: &Path) -> std::path::PathBuf {
    let key = dir.join("key");
    std::fs::write(
        &key,
        (0u8..64).map(|i| i.wrapping_mul(29)).collect::<Vec<_>>(),
    )
    .unwrap();
    key
}

#[test]
fn an_image_that_needs_journal_recovery_is_refused_until_replayed() {
    let test = "fscrypt::an_image_that_needs_journal_recovery_is_refused_until_replayed";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    let dir = scratch();
    let key = key_file(dir.path());
    let image = dir.path().join("fs.img");
    let copy = dir.path().join("copy.img");
    let json = dir.path().join("m.json");
    let out = run(Command::new("python3")
        .arg(FSCRYPT_KERNEL_SCRIPT)
        .arg("dirty")
        .args([&image, &copy, &json])
        .args(["--policy", "v2-pad32", "--key"])
        .arg(&key));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let names = |v: &Value| -> Vec<Vec<u8>> {
        let mut n: Vec<Vec<u8>> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|e| unhex(e.as_str().unwrap()))
            .collect();
        n.sort();
        n
    };
    let written = names(&m["written"]);
    // The kernel replays the journal of a copy it mounts: every file is there.
    assert_eq!(names(&m["kernel_after_replay"]), written);

    // The copy taken while mounted: refused, saying what to do.
    let ls = |img: &Path| {
        run(mdu()
            .args(["fscrypt", "ls"])
            .arg(img)
            .arg("vault")
            .arg("--key")
            .arg(&key))
    };
    let out = ls(&copy);
    expect_code(&out, 1, "ls of an image that needs recovery");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs journal recovery")
            && err.contains("e2fsck -fy")
            && err.contains("unmount"),
        "{err}"
    );
    let out = run(mdu()
        .args(["fscrypt", "extract"])
        .arg(&copy)
        .arg("--key")
        .arg(&key)
        .arg("--out")
        .arg(dir.path().join("never")));
    expect_code(&out, 1, "extract of an image that needs recovery");
    assert!(!dir.path().join("never").exists());

    // What the message advises: e2fsck -fy replays the journal, and then
    // mdu lists what the kernel showed.
    let fsck = run(Command::new("e2fsck").arg("-fy").arg(&copy));
    assert!(
        matches!(fsck.status.code(), Some(0..=2)),
        "e2fsck: {}",
        String::from_utf8_lossy(&fsck.stdout)
    );
    let out = ls(&copy);
    expect_code(&out, 0, "ls after e2fsck");
    let mut listed: Vec<Vec<u8>> = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty() && *l != b"." && *l != b"..")
        .map(<[u8]>::to_vec)
        .collect();
    listed.sort();
    assert_eq!(listed, written, "after e2fsck");

    // The flag alone, set with debugfs on the clean image: refused too.
    let out = run(Command::new("debugfs")
        .args(["-w", "-R", "feature needs_recovery"])
        .arg(&copy));
    assert!(
        out.status.success(),
        "debugfs: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ls(&copy);
    expect_code(&out, 1, "ls after debugfs set needs_recovery");
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs journal recovery"));
    println!(
        "{} files written while mounted: the kernel shows all after replay; mdu refuses the copy, and lists all after e2fsck -fy",
        written.len()
    );
}

#[test]
fn wrong_v1_keys_are_refused_by_ls_cat_and_extract() {
    let test = "fscrypt::wrong_v1_keys_are_refused_by_ls_cat_and_extract";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    let dir = scratch();
    let image = dir.path().join("fs.img");
    let key = key_file(dir.path());
    let json = dir.path().join("m.json");
    let out = run(Command::new("python3")
        .arg(FSCRYPT_KERNEL_SCRIPT)
        .arg("make")
        .arg(&image)
        .arg(&json)
        .args(["--policy", "v1-pad4", "--seed", "5", "--key"])
        .arg(&key));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let descriptor = m["v1_descriptor"].as_str().unwrap().to_owned();
    let entries = m["with_key"].as_array().unwrap();
    let path_of = |want: &dyn Fn(&Value, &[u8]) -> bool| -> String {
        let e = entries
            .iter()
            .find(|e| want(e, &unhex(e["path"].as_str().unwrap())))
            .unwrap();
        format!(
            "vault/{}",
            String::from_utf8(unhex(e["path"].as_str().unwrap())).unwrap()
        )
    };
    // The smallest directory with names (64 bytes of them: alone, a wrong
    // key would pass them more often than not) and a file in it.
    let deep = path_of(&|e, p| e["type"] == "dir" && p.iter().filter(|&&b| b == b'/').count() == 1);
    let file =
        path_of(&|e, p| e["type"] == "file" && p.iter().filter(|&&b| b == b'/').count() == 2);
    let mut rng = common::Rng::new(test);
    let wrong = dir.path().join("wrong");
    let arg = format!("{descriptor}:{}", wrong.display());
    let (mut ls, mut cat, mut extract) = (0, 0, 0);
    let keys = 100;
    for i in 0..keys {
        std::fs::write(&wrong, rng.bytes(64)).unwrap();
        let out = run(mdu()
            .args(["fscrypt", "ls"])
            .arg(&image)
            .arg(if i % 2 == 0 { "vault" } else { &deep })
            .args(["--key-v1", &arg]));
        ls += usize::from(out.status.success());
        if out.status.code() == Some(1) {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("the key is wrong"), "{err}");
        }
        let dest = dir.path().join(format!("out{i}"));
        let out = run(mdu()
            .args(["fscrypt", "extract"])
            .arg(&image)
            .arg(&deep)
            .args(["--key-v1", &arg])
            .arg("--out")
            .arg(&dest));
        extract += usize::from(out.status.success());
        assert!(
            out.status.success() || !dest.exists(),
            "a refused extract wrote"
        );
        if i % 5 == 0 {
            let out = run(mdu()
                .args(["fscrypt", "cat"])
                .arg(&image)
                .arg(&file)
                .args(["--key-v1", &arg]));
            cat += usize::from(out.status.success());
        }
    }
    println!(
        "wrong v1 keys accepted: ls {ls} of {keys}, extract {extract} of {keys}, cat {cat} of {}",
        keys / 5
    );
    assert_eq!((ls, extract, cat), (0, 0, 0));
    // The right key still reads it.
    let out = run(mdu()
        .args(["fscrypt", "ls"])
        .arg(&image)
        .arg(&deep)
        .args(["--key-v1", &format!("{descriptor}:{}", key.display())]));
    expect_code(&out, 0, "ls with the right v1 key");
}

/// Whether mkfs.ext4 and debugfs (e2fsprogs) run here; prints a `SKIPPED`
/// line naming `test` when they do not.
fn have_e2fsprogs(test: &str) -> bool {
    let ok = ["mkfs.ext4", "debugfs"].iter().all(|t| {
        Command::new(t)
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !ok {
        eprintln!("SKIPPED {test}: needs mkfs.ext4 and debugfs on PATH (e2fsprogs)");
    }
    ok
}

/// A fresh 64 MiB ext4 image of 4 KiB blocks (no journal, few inodes:
/// room for data), then `debugfs -w` commands on it.
fn e2fs_image(path: &Path, debugfs: &[String]) {
    e2fs_image_with(path, "^has_journal", debugfs);
}

/// As [`e2fs_image`], with the `mkfs.ext4 -O` features given.
fn e2fs_image_with(path: &Path, features: &str, debugfs: &[String]) {
    std::fs::File::create(path)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let out = run(Command::new("mkfs.ext4")
        .args(["-q", "-F", "-b", "4096", "-N", "128", "-O", features])
        .arg(path));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cmds = path.with_extension("debugfs");
    std::fs::write(&cmds, debugfs.join("\n") + "\n").unwrap();
    let out = run(Command::new("debugfs")
        .arg("-w")
        .arg("-f")
        .arg(&cmds)
        .arg(path));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `mdu` with `args` (stdout discarded) under `/usr/bin/time` and
/// returns its exit code, stderr and peak resident set in KiB (`None` when
/// `/usr/bin/time` is missing). Measured from a small parent: a child of
/// the test process would count the test's own memory, shared until exec.
fn run_measured(args: &[OsString]) -> (Option<i32>, String, Option<u64>) {
    let rss = scratch();
    let rss_file = rss.path().join("rss");
    let time = Path::new("/usr/bin/time");
    let mut cmd = if time.exists() {
        let mut c = Command::new(time);
        c.args(["-f", "%M", "-o"])
            .arg(&rss_file)
            .args(common::mdu_argv());
        c
    } else {
        mdu()
    };
    let out = run(cmd.args(args).stdout(std::process::Stdio::null()));
    let peak = std::fs::read_to_string(&rss_file)
        .ok()
        .and_then(|s| s.lines().last()?.trim().parse().ok());
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), err, peak)
}

/// Peak RSS allowed of `mdu` on a 64 MiB hostile image.
const RSS_BOUND_KIB: u64 = 96 << 10;

/// Runs `mdu fscrypt` with `args` on a hostile image: refused (exit 1,
/// stderr naming `rule`) in bounded memory.
fn refused_in_bounded_memory(args: &[OsString], rule: &str) {
    let (code, err, rss) = run_measured(args);
    println!(
        "{:?}: exit {code:?}, peak RSS {rss:?} KiB: {}",
        args[1],
        err.trim()
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(rule), "{err}");
    assert!(
        rss.is_none_or(|r| r < RSS_BOUND_KIB),
        "{:?}: peak RSS {rss:?} KiB",
        args[1]
    );
}

#[test]
fn a_huge_symlink_with_many_links_is_refused_in_bounded_memory() {
    let test = "fscrypt::a_huge_symlink_with_many_links_is_refused_in_bounded_memory";
    if !have_e2fsprogs(test) {
        return;
    }
    let dir = scratch();
    let image = dir.path().join("fs.img");
    // 58 MiB of data, then made a symlink, with forty more names.
    let big = dir.path().join("big");
    std::fs::write(&big, vec![b'a'; 58 << 20]).unwrap();
    let mut cmds = vec![
        format!("write {} big", big.display()),
        "sif big mode 0120777".into(),
        "sif big links_count 41".into(),
    ];
    cmds.extend((0..40).map(|i| format!("ln big l{i:02}")));
    e2fs_image(&image, &cmds);
    let out = dir.path().join("out");
    let os = |s: &str| OsString::from(s);
    refused_in_bounded_memory(
        &[
            os("fscrypt"),
            os("extract"),
            image.clone().into(),
            os("--out"),
            out.clone().into(),
        ],
        "symlink i_size",
    );
    assert!(!out.exists(), "a refused extract wrote");
}

#[test]
fn a_directory_mapping_one_block_many_times_is_refused_in_bounded_memory() {
    let test = "fscrypt::a_directory_mapping_one_block_many_times_is_refused_in_bounded_memory";
    if !have_e2fsprogs(test) {
        return;
    }
    let dir = scratch();
    let image = dir.path().join("fs.img");
    let d = hostile_directory(&image, dir.path());
    println!("directory inode {d}: one block mapped 462400 times");
    let out = dir.path().join("out");
    let os = |s: &str| OsString::from(s);
    refused_in_bounded_memory(
        &[os("fscrypt"), os("ls"), image.clone().into(), os("d")],
        "mapped twice",
    );
    refused_in_bounded_memory(
        &[
            os("fscrypt"),
            os("extract"),
            image.clone().into(),
            os("--out"),
            out.clone().into(),
        ],
        "mapped twice",
    );
    assert!(!out.exists(), "a refused extract wrote");
}

/// An image whose directory `d` maps its one block of 341 entries 462,400
/// times (4 index nodes of 340 leaves of 340 extents: 5.5 MB of metadata
/// for 157.7 million entries); returns its inode number.
fn hostile_directory(image: &Path, scratch: &Path) -> u32 {
    use mdu_fscrypt::ext4::{Ext4, ROOT_INO};
    use std::os::unix::fs::FileExt;
    // A directory, and 4 + 340 * 4 blocks to hold its extent tree (not
    // zeros: debugfs would write those as a hole).
    let filler = scratch.join("filler");
    std::fs::write(&filler, vec![0xa5u8; (4 + 4 * 340) * 4096]).unwrap();
    e2fs_image(
        image,
        &[
            "mkdir d".into(),
            format!("write {} filler", filler.display()),
        ],
    );
    let (d, block, nodes) = {
        let fs = Ext4::open(std::fs::File::open(image).unwrap()).unwrap();
        let root = fs.read_dir(&fs.inode(ROOT_INO).unwrap()).unwrap();
        let ino = |name: &[u8]| root.iter().find(|e| e.name == name).unwrap().ino;
        let d = fs.inode(ino(b"d")).unwrap();
        let block = fs.extents(&d).unwrap()[0].physical;
        let nodes: Vec<u64> = fs
            .extents(&fs.inode(ino(b"filler")).unwrap())
            .unwrap()
            .iter()
            .flat_map(|e| e.physical..e.physical + e.len)
            .collect();
        (d.ino, block, nodes)
    };
    assert_eq!(nodes.len(), 4 + 4 * 340);
    let out = run(Command::new("debugfs")
        .args(["-R", &format!("imap <{d}>")])
        .arg(image));
    let text = String::from_utf8_lossy(&out.stdout);
    let (at_block, at_offset) = text
        .split_once("located at block ")
        .and_then(|(_, r)| r.split_once(", offset 0x"))
        .map(|(b, o)| {
            let o: String = o.chars().take_while(char::is_ascii_hexdigit).collect();
            (
                b.trim().parse::<u64>().unwrap(),
                u64::from_str_radix(&o, 16).unwrap(),
            )
        })
        .unwrap_or_else(|| panic!("debugfs imap: {text}"));
    let img = std::fs::OpenOptions::new().write(true).open(image).unwrap();
    let header = |entries: u16, max: u16, depth: u16| -> Vec<u8> {
        [0xf30au16, entries, max, depth, 0, 0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    };
    // The directory's one block: 341 entries of 12 bytes.
    let mut entries = Vec::new();
    for i in 0..341u32 {
        let (ino, name): (u32, Vec<u8>) = match i {
            0 => (d, b".".to_vec()),
            1 => (ROOT_INO, b"..".to_vec()),
            _ => (d, format!("{i:04}").into_bytes()),
        };
        let rec: u16 = if i == 340 { 4096 - 12 * 340 } else { 12 };
        entries.extend_from_slice(&ino.to_le_bytes());
        entries.extend_from_slice(&rec.to_le_bytes());
        entries.extend_from_slice(&[name.len() as u8, 2]);
        entries.extend_from_slice(&name);
        entries.resize(entries.len() + (rec as usize - 8 - name.len()), 0);
    }
    img.write_all_at(&entries, block * 4096).unwrap();
    // Leaves: 340 extents each, every one mapping that block.
    for (n, &leaf) in nodes[4..].iter().enumerate() {
        let mut b = header(340, 340, 0);
        for m in 0..340u32 {
            b.extend_from_slice(&(n as u32 * 340 + m).to_le_bytes());
            b.extend_from_slice(&1u16.to_le_bytes());
            b.extend_from_slice(&0u16.to_le_bytes());
            b.extend_from_slice(&(block as u32).to_le_bytes());
        }
        img.write_all_at(&b, leaf * 4096).unwrap();
    }
    // Index nodes: 340 leaves each; the root in the inode: the 4 of them.
    let index = |b: &mut Vec<u8>, first: u32, child: u64| {
        b.extend_from_slice(&first.to_le_bytes());
        b.extend_from_slice(&(child as u32).to_le_bytes());
        b.extend_from_slice(&[0; 4]);
    };
    for j in 0..4u32 {
        let mut b = header(340, 340, 1);
        for k in 0..340 {
            let leaf = nodes[4 + (j * 340 + k) as usize];
            index(&mut b, (j * 340 + k) * 340, leaf);
        }
        img.write_all_at(&b, nodes[j as usize] * 4096).unwrap();
    }
    let mut root = header(4, 4, 2);
    for j in 0..4u32 {
        index(&mut root, j * 340 * 340, nodes[j as usize]);
    }
    let inode_at = at_block * 4096 + at_offset;
    img.write_all_at(&root, inode_at + 0x28).unwrap();
    let size = 4u64 * 340 * 340 * 4096;
    img.write_all_at(&(size as u32).to_le_bytes(), inode_at + 0x04)
        .unwrap();
    img.write_all_at(&((size >> 32) as u32).to_le_bytes(), inode_at + 0x6c)
        .unwrap();
    d
}

/// A tmpfs mounted for the life of the value (unmounted on drop).
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = scratch();
        let out = run(Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path()));
        assert!(
            out.status.success(),
            "mount -t tmpfs: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// The kernel's `special` tree (sparse files, setuid and setgid files,
/// FIFO, devices, socket) in an image, `cp -a` of it from the mount in
/// `tmpfs/kernel`, and its manifest's entries by path.
struct Special {
    _dir: tempfile::TempDir,
    image: std::path::PathBuf,
    key: std::path::PathBuf,
    entries: Vec<(Vec<u8>, Value)>,
}

fn special_scene(tmpfs: &Tmpfs) -> Special {
    let dir = scratch();
    let key = key_file(dir.path());
    let image = dir.path().join("fs.img");
    let json = dir.path().join("m.json");
    let out = run(Command::new("python3")
        .arg(FSCRYPT_KERNEL_SCRIPT)
        .arg("special")
        .args([&image, &json])
        .args(["--policy", "v2-pad32", "--key"])
        .arg(&key)
        .arg("--cp-to")
        .arg(tmpfs.path()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let entries = m["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (unhex(e["path"].as_str().unwrap()), e.clone()))
        .collect();
    Special {
        _dir: dir,
        image,
        key,
        entries,
    }
}

fn extract_special(s: &Special, out: &Path) -> std::process::Output {
    run(mdu()
        .args(["fscrypt", "extract"])
        .arg(&s.image)
        .arg("vault")
        .arg("--key")
        .arg(&s.key)
        .arg("--out")
        .arg(out))
}

#[test]
fn extract_keeps_holes_and_takes_the_space_cp_a_takes() {
    let test = "fscrypt::extract_keeps_holes_and_takes_the_space_cp_a_takes";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    // 16 MiB: a 100 MiB file with 4 KiB of data and a 1 TiB one fit only
    // with their holes kept.
    let tmpfs = Tmpfs::mount("16m");
    let s = special_scene(&tmpfs);
    let dest = tmpfs.path().join("mdu");
    let out = extract_special(&s, &dest);
    expect_code(&out, 0, "extract");
    let kernel = tmpfs.path().join("kernel");
    let (mut ours, mut theirs) = (0, 0);
    for (rel, e) in &s.entries {
        if e["mode"].as_u64().unwrap() & 0o170000 != 0o100000 {
            continue;
        }
        let rel = std::ffi::OsStr::from_bytes(rel);
        let (m, k) = (
            std::fs::metadata(dest.join(rel)).unwrap(),
            std::fs::metadata(kernel.join(rel)).unwrap(),
        );
        let what = rel.to_string_lossy();
        assert_eq!(m.len(), e["size"].as_u64().unwrap(), "{what}");
        // Never more than `cp -a` (which copies a preallocated range whole).
        assert!(
            m.blocks() <= k.blocks(),
            "{what}: {} blocks, cp -a {}",
            m.blocks(),
            k.blocks()
        );
        if what.starts_with("sparse") {
            assert_eq!(m.blocks(), k.blocks(), "{what}");
        }
        match e.get("sha256") {
            Some(sum) => assert_eq!(
                Sha256::digest(std::fs::read(dest.join(rel)).unwrap()).to_vec(),
                unhex(sum.as_str().unwrap()),
                "{what}"
            ),
            None => {
                use std::os::unix::fs::FileExt;
                let tail = |p: &Path| {
                    let mut b = vec![0u8; 8192];
                    std::fs::File::open(p)
                        .unwrap()
                        .read_exact_at(&mut b, m.len() - 8192)
                        .unwrap();
                    b
                };
                assert_eq!(tail(&dest.join(rel)), tail(&kernel.join(rel)), "{what}");
            }
        }
        println!(
            "{what}: {} bytes, {} KiB allocated (cp -a: {} KiB)",
            m.len(),
            m.blocks() / 2,
            k.blocks() / 2
        );
        ours += m.blocks();
        theirs += k.blocks();
    }
    println!(
        "regular files: {} KiB extracted, {} KiB by cp -a",
        ours / 2,
        theirs / 2
    );
}

/// Replaces the one occurrence of `from` in the image with `to`.
fn patch_unique(image: &Path, from: &[u8], to: &[u8]) {
    let mut data = std::fs::read(image).unwrap();
    let at: Vec<usize> = data
        .windows(from.len())
        .enumerate()
        .filter(|(_, w)| *w == from)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        at.len(),
        1,
        "{:?} in the image",
        String::from_utf8_lossy(from)
    );
    data[at[0]..at[0] + to.len()].copy_from_slice(to);
    std::fs::write(image, data).unwrap();
}

#[test]
fn extract_checks_the_whole_tree_before_writing_anything() {
    let test = "fscrypt::extract_checks_the_whole_tree_before_writing_anything";
    if !have_e2fsprogs(test) {
        return;
    }
    // A tree that writes fine up to a last directory that is damaged:
    // two entries of one name, or a NUL in a name.
    for (what, from, to) in [
        (
            "two entries of one name",
            &b"entry-named-twicf"[..],
            &b"entry-named-twice"[..],
        ),
        ("a NUL in a name", b"entry-with-a-Nul", b"entry-with-a-\0ul"),
    ] {
        let dir = scratch();
        let image = dir.path().join("fs.img");
        let small = dir.path().join("small");
        std::fs::write(&small, b"hello\n").unwrap();
        let w = |p: &str| format!("write {} {p}", small.display());
        e2fs_image(
            &image,
            &[
                "mkdir a".into(),
                w("a/first"),
                "symlink a/link first".into(),
                "mkdir z".into(),
                w("z/entry-named-twice"),
                w("z/entry-named-twicf"),
                w("z/entry-with-a-Nul"),
            ],
        );
        patch_unique(&image, from, to);
        let out_dir = dir.path().join("out");
        let out = run(mdu()
            .args(["fscrypt", "extract"])
            .arg(&image)
            .arg("--out")
            .arg(&out_dir));
        expect_code(&out, 1, what);
        let err = String::from_utf8_lossy(&out.stderr);
        println!("{what}: {}", err.trim());
        assert!(err.contains("directory inode"), "{err}");
        assert!(!out_dir.exists(), "{what}: OUT was created");
    }
}

#[test]
fn extract_without_a_needed_key_writes_nothing() {
    let test = "fscrypt::extract_without_a_needed_key_writes_nothing";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    let tmpfs = Tmpfs::mount("16m");
    let s = special_scene(&tmpfs);
    let dest = tmpfs.path().join("mdu");
    let out = run(mdu()
        .args(["fscrypt", "extract"])
        .arg(&s.image)
        .arg("vault")
        .arg("--out")
        .arg(&dest));
    expect_code(&out, 1, "extract without the key");
    assert!(
        !dest.exists(),
        "OUT was created: {:?}",
        std::fs::read_dir(&dest).map(|d| d.count())
    );
}

#[test]
fn extract_recreates_fifos_and_devices_as_cp_a_does() {
    let test = "fscrypt::extract_recreates_fifos_and_devices_as_cp_a_does";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    use std::os::unix::fs::FileTypeExt;
    let tmpfs = Tmpfs::mount("16m");
    let s = special_scene(&tmpfs);
    let dest = tmpfs.path().join("mdu");
    let out = extract_special(&s, &dest);
    expect_code(&out, 0, "extract");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("skipped socket (socket)"), "{err}");
    let kernel = tmpfs.path().join("kernel");
    for name in ["fifo", "chardev", "blockdev"] {
        let (m, k) = (
            std::fs::symlink_metadata(dest.join(name)).unwrap(),
            std::fs::symlink_metadata(kernel.join(name)).unwrap(),
        );
        let e = &s
            .entries
            .iter()
            .find(|(p, _)| p == name.as_bytes())
            .unwrap()
            .1;
        assert_eq!(u64::from(m.mode()), e["mode"].as_u64().unwrap(), "{name}");
        assert_eq!(m.mode(), k.mode(), "{name}");
        assert_eq!(m.rdev(), k.rdev(), "{name}");
        assert_eq!(m.rdev(), e["rdev"].as_u64().unwrap(), "{name}");
        assert_eq!(
            (
                m.file_type().is_fifo(),
                m.file_type().is_char_device(),
                m.file_type().is_block_device()
            ),
            (name == "fifo", name == "chardev", name == "blockdev")
        );
        assert_eq!(m.mtime(), k.mtime(), "{name}");
        println!(
            "{name}: mode {:o}, rdev {:#x}, as cp -a",
            m.mode(),
            m.rdev()
        );
    }
    assert!(!dest.join("socket").exists());
}

#[test]
fn directories_sharing_a_block_are_refused_before_writing() {
    let test = "fscrypt::directories_sharing_a_block_are_refused_before_writing";
    if !have_e2fsprogs(test) {
        return;
    }
    let dir = scratch();
    let image = dir.path().join("fs.img");
    e2fs_image(&image, &["mkdir d1".into(), "mkdir d2".into()]);
    let blocks = run(Command::new("debugfs")
        .args(["-R", "blocks d1"])
        .arg(&image));
    let block = String::from_utf8_lossy(&blocks.stdout).trim().to_owned();
    assert!(block.parse::<u64>().is_ok(), "debugfs blocks: {block:?}");
    // d2's one extent (i_block words 3..5) now starts at d1's block.
    let out = run(Command::new("debugfs")
        .args(["-w", "-R", &format!("sif d2 block[5] {block}")])
        .arg(&image));
    assert!(out.status.success());
    let out_dir = dir.path().join("out");
    let out = run(mdu()
        .args(["fscrypt", "extract"])
        .arg(&image)
        .arg("--out")
        .arg(&out_dir));
    expect_code(&out, 1, "extract");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("physical block {block} is mapped twice")),
        "{err}"
    );
    assert!(!out_dir.exists());
}

#[test]
fn extract_drops_setuid_and_setgid_bits() {
    let test = "fscrypt::extract_drops_setuid_and_setgid_bits";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    let tmpfs = Tmpfs::mount("16m");
    let s = special_scene(&tmpfs);
    let dest = tmpfs.path().join("mdu");
    let out = extract_special(&s, &dest);
    expect_code(&out, 0, "extract");
    let me = std::fs::metadata("/proc/self").unwrap().uid();
    for (name, image_mode, want) in [
        ("setuid", 0o4755, 0o755),
        ("setgid", 0o2755, 0o755),
        ("sub", 0o2775, 0o775),
        ("plain", 0o640, 0o640),
    ] {
        let e = &s
            .entries
            .iter()
            .find(|(p, _)| p == name.as_bytes())
            .unwrap()
            .1;
        assert_eq!(e["mode"].as_u64().unwrap() & 0o7777, image_mode, "{name}");
        let meta = std::fs::symlink_metadata(dest.join(name)).unwrap();
        assert_eq!(meta.mode() & 0o7777, want, "{name}");
        assert_eq!(meta.uid(), me, "{name}: owned by whoever extracts");
        println!(
            "{name}: {image_mode:o} in the image, {:o} extracted",
            meta.mode() & 0o7777
        );
    }
}

#[test]
fn an_encrypted_file_flagged_inline_is_refused() {
    let test = "fscrypt::an_encrypted_file_flagged_inline_is_refused";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    let tmpfs = Tmpfs::mount("16m");
    let s = special_scene(&tmpfs);
    let out = run(mdu()
        .args(["fscrypt", "ls", "--json"])
        .arg(&s.image)
        .arg("vault")
        .arg("--key")
        .arg(&s.key));
    expect_code(&out, 0, "ls");
    let ino = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice::<Value>(l).unwrap())
        .find(|e| e["name"] == "plain")
        .unwrap()["ino"]
        .as_u64()
        .unwrap();
    // Extents and encryption as the kernel wrote them, plus INLINE_DATA
    // and a size that i_block holds: its bytes (an extent header and one
    // extent, or whatever a hostile image puts there) would be the data.
    for set in ["flags 0x10080800", "size 40"] {
        let out = run(Command::new("debugfs")
            .args(["-w", "-R", &format!("sif <{ino}> {set}")])
            .arg(&s.image));
        assert!(out.status.success());
    }
    let cat = run(mdu()
        .args(["fscrypt", "cat"])
        .arg(&s.image)
        .arg("vault/plain")
        .arg("--key")
        .arg(&s.key));
    expect_code(&cat, 1, "cat");
    let err = String::from_utf8_lossy(&cat.stderr);
    assert!(
        err.contains(&format!("inode {ino}: encrypted and flagged inline data")),
        "{err}"
    );
    assert!(cat.stdout.is_empty());
    let dest = tmpfs.path().join("mdu");
    let out = extract_special(&s, &dest);
    expect_code(&out, 1, "extract");
    assert!(!dest.exists());
}

#[test]
fn a_block_map_naming_one_block_twice_is_refused() {
    let test = "fscrypt::a_block_map_naming_one_block_twice_is_refused";
    if !have_e2fsprogs(test) {
        return;
    }
    let dir = scratch();
    let image = dir.path().join("fs.img");
    let data = dir.path().join("data");
    std::fs::write(&data, vec![0x5au8; 3 * 4096]).unwrap();
    // Without extents: a block map, whose second pointer is made the first.
    e2fs_image_with(
        &image,
        "^has_journal,^extent,^64bit",
        &[format!("write {} f", data.display())],
    );
    let stat = run(Command::new("debugfs").args(["-R", "stat f"]).arg(&image));
    let text = String::from_utf8_lossy(&stat.stdout);
    let first: u64 = text
        .split_once("BLOCKS:\n(0")
        .and_then(|(_, r)| r.split_once(':'))
        .and_then(|(_, r)| r.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .unwrap_or_else(|| panic!("debugfs stat: {text}"));
    let out = run(Command::new("debugfs")
        .args(["-w", "-R", &format!("sif f block[1] {first}")])
        .arg(&image));
    assert!(out.status.success());
    let out = run(mdu().args(["fscrypt", "cat"]).arg(&image).arg("f"));
    expect_code(&out, 1, "cat");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("physical block {first} is mapped twice")),
        "{err}"
    );
}
