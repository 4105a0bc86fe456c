//! Hostile images refused in bounded memory and before anything is written:
//! huge symlinks, directories mapping one block many times or sharing one,
//! block maps naming one block twice.

use super::*;

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
    let test = "fscrypt::hostile::a_huge_symlink_with_many_links_is_refused_in_bounded_memory";
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
    let test =
        "fscrypt::hostile::a_directory_mapping_one_block_many_times_is_refused_in_bounded_memory";
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
    let test = "fscrypt::hostile::extract_checks_the_whole_tree_before_writing_anything";
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
fn directories_sharing_a_block_are_refused_before_writing() {
    let test = "fscrypt::hostile::directories_sharing_a_block_are_refused_before_writing";
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
fn a_block_map_naming_one_block_twice_is_refused() {
    let test = "fscrypt::hostile::a_block_map_naming_one_block_twice_is_refused";
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
