//! The plain-mode journal through the engine: every direction and data
//! move gives the bytes of a conversion into another file; a run stopped
//! between chunks, with its last chunk torn, resumes to the same bytes; a
//! damaged copy or another device is refused with the device untouched.

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use mdu_dmcrypt::{CipherSpec, Direction, Geometry, SectorCipher, WeakKeys};
use mdu_inplace::plain::{Params, Plain, PlainError};
use mdu_inplace::{Journal, Outcome, run};

const CHUNK: u64 = 64 << 10;

fn cipher() -> (SectorCipher, Vec<u8>) {
    let key: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(7) ^ 0x3c).collect();
    let spec = CipherSpec::parse("aes-xts-plain64").unwrap();
    let c = SectorCipher::new(
        spec,
        &key,
        Geometry::new(512, 0, false).unwrap(),
        WeakKeys::Refuse,
    )
    .unwrap();
    (c, key)
}

fn rw(path: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .unwrap()
}

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

/// (direction, in_base, out_base)
const CASES: [(Direction, u64, u64); 4] = [
    (Direction::Encrypt, 0, 0),
    (Direction::Encrypt, 0, 8192),
    (Direction::Decrypt, 8192, 0),
    (Direction::Decrypt, 0, 0),
];

fn params(dir: Direction, in_base: u64, out_base: u64, key: &[u8]) -> Params {
    Params {
        direction: dir,
        in_base,
        out_base,
        sector_size: 512,
        cipher: "aes-xts-plain64".into(),
        key_check: Params::key_check(key),
    }
}

/// The image before, and what a conversion into another file gives.
fn image(c: &SectorCipher, dir: Direction, in_base: u64, out_base: u64) -> (Vec<u8>, Vec<u8>) {
    // 5.5 chunks: a short chunk at one end.
    let len = (5 * CHUNK + CHUNK / 2) as usize;
    let mut before = vec![0u8; in_base as usize];
    before.extend(data(len));
    let mut conv = before[in_base as usize..].to_vec();
    c.crypt(dir, 0, &mut conv).unwrap();
    let mut after = vec![0u8; out_base as usize];
    after.extend(conv);
    (before, after)
}

/// A new image for the case in `dir` (and no journal): the image before,
/// after, and the paths of the image and the journal.
fn fresh(
    dir: &Path,
    c: &SectorCipher,
    d: Direction,
    i: u64,
    o: u64,
) -> (Vec<u8>, Vec<u8>, PathBuf, PathBuf) {
    let (before, after) = image(c, d, i, o);
    let (img, jp) = (dir.join("img"), dir.join("journal"));
    std::fs::write(&img, &before).unwrap();
    let _ = std::fs::remove_file(&jp);
    (before, after, img, jp)
}

#[test]
fn every_direction_and_move_equals_a_conversion_into_another_file() {
    let (c, key) = cipher();
    let dir = tempfile::tempdir().unwrap();
    for (d, i, o) in CASES {
        let (_, after, img, jp) = fresh(dir.path(), &c, d, i, o);
        let mut p = Plain::start(rw(&jp), rw(&img), &c, params(d, i, o, &key), CHUNK).unwrap();
        let mut seen = Vec::new();
        let out = run(&mut p, &mut |done, total| seen.push((done, total)), &|| {
            false
        })
        .unwrap();
        assert_eq!(out, Outcome::Finished);
        assert_eq!(seen.len(), 6, "{d:?} {i} {o}");
        assert_eq!(
            seen.last(),
            Some(&(after.len() as u64 - o, after.len() as u64 - o))
        );
        assert!(
            std::fs::read(&img).unwrap() == after,
            "{d:?} in {i} out {o}"
        );
        // The copies of plaintext are wiped.
        let j = std::fs::read(&jp).unwrap();
        assert!(j[12288..].iter().all(|&b| b == 0));
    }
}

/// Stops after `n` chunks: the journal then names chunk `n - 1` as hot.
fn stopped_after(p: &mut Plain<'_>, n: usize) {
    let count = Cell::new(0);
    let out = run(p, &mut |_, _| count.set(count.get() + 1), &|| {
        count.get() == n
    })
    .unwrap();
    assert!(matches!(out, Outcome::Interrupted { .. }));
}

#[test]
fn a_stopped_run_with_its_last_chunk_torn_resumes_to_the_same_bytes() {
    let (c, key) = cipher();
    let dir = tempfile::tempdir().unwrap();
    for (d, i, o) in CASES {
        let (before, after, img, jp) = fresh(dir.path(), &c, d, i, o);
        let mut p = Plain::start(rw(&jp), rw(&img), &c, params(d, i, o, &key), CHUNK).unwrap();
        stopped_after(&mut p, 3);
        let (done, _) = p.progress();
        drop(p);
        if i == o {
            // Tear the last chunk written: its first sectors old again (a
            // write that did not reach the disk whole).
            let last = done - CHUNK;
            let f = rw(&img);
            use std::os::unix::fs::FileExt;
            let at = i + last;
            f.write_all_at(&before[at as usize..at as usize + 4096], at)
                .unwrap();
        }
        let mut p = Plain::resume(rw(&jp), rw(&img), &c, params(d, i, o, &key)).unwrap();
        assert_eq!(
            p.progress().0,
            done - CHUNK,
            "{d:?} {i} {o}: the hot chunk again"
        );
        run(&mut p, &mut |_, _| {}, &|| false).unwrap();
        assert!(
            std::fs::read(&img).unwrap() == after,
            "{d:?} in {i} out {o}"
        );
    }
}

#[test]
fn a_damaged_copy_another_device_or_other_parameters_are_refused() {
    let (c, key) = cipher();
    let dir = tempfile::tempdir().unwrap();
    let (before, _) = image(&c, Direction::Encrypt, 0, 0);
    let img = dir.path().join("img");
    let jp = dir.path().join("journal");
    std::fs::write(&img, &before).unwrap();
    let p0 = params(Direction::Encrypt, 0, 0, &key);
    let mut p = Plain::start(rw(&jp), rw(&img), &c, p0.clone(), CHUNK).unwrap();
    stopped_after(&mut p, 2);
    drop(p);
    use std::os::unix::fs::FileExt;
    // Chunk 1 half old, half new: it needs its copy.
    rw(&img)
        .write_all_at(&before[CHUNK as usize..CHUNK as usize + 512], CHUNK)
        .unwrap();
    let torn = std::fs::read(&img).unwrap();

    // Other parameters.
    let mut other = p0.clone();
    other.key_check = Params::key_check(b"another key");
    let e = Plain::resume(rw(&jp), rw(&img), &c, other).unwrap_err();
    assert!(matches!(e, PlainError::OtherRun), "{e}");

    // Another device: chunk 0 as written differs.
    let foreign = dir.path().join("foreign");
    let mut f = torn.clone();
    f[100] ^= 1;
    std::fs::write(&foreign, &f).unwrap();
    let e = Plain::resume(rw(&jp), rw(&foreign), &c, p0.clone()).unwrap_err();
    assert!(
        matches!(&e, PlainError::Refused(m) if m.contains("not the device")),
        "{e}"
    );
    assert!(std::fs::read(&foreign).unwrap() == f);

    // A damaged copy of chunk 1.
    let j = rw(&jp);
    let at = 12288 + CHUNK + 7;
    let mut b = [0u8; 1];
    j.read_exact_at(&mut b, at).unwrap();
    j.write_all_at(&[b[0] ^ 0x80], at).unwrap();
    let e = Plain::resume(rw(&jp), rw(&img), &c, p0.clone()).unwrap_err();
    assert!(
        matches!(&e, PlainError::Refused(m) if m.contains("copy in the journal is damaged")),
        "{e}"
    );
    assert!(std::fs::read(&img).unwrap() == torn, "nothing was changed");

    // A damaged header.
    j.write_all_at(b"X", 100).unwrap();
    let e = Plain::resume(rw(&jp), rw(&img), &c, p0).unwrap_err();
    assert!(
        matches!(&e, PlainError::Refused(m) if m.contains("header is damaged")),
        "{e}"
    );
}

#[test]
fn data_that_are_not_whole_sectors_are_refused_before_the_journal_is_written() {
    let (c, key) = cipher();
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("img");
    let jp = dir.path().join("journal");
    std::fs::write(&img, data(4096 + 100)).unwrap();
    let e = Plain::start(
        rw(&jp),
        rw(&img),
        &c,
        params(Direction::Encrypt, 0, 0, &key),
        CHUNK,
    )
    .unwrap_err();
    assert!(
        matches!(&e, PlainError::Data { offset: 4096, rule } if rule.contains("whole number")),
        "{e}"
    );
    assert_eq!(std::fs::metadata(&jp).unwrap().len(), 0);
}
