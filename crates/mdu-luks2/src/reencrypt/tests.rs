//! Table tests of state recognition: every state each kind of run passes
//! through is recognised as itself, and each way a record can lie about
//! where a run is gets its refusal.

use super::classify::State;
use super::*;
use crate::{KdfParams, format};
use std::fs::OpenOptions;
use std::path::Path;

const PASS: &[u8] = b"pw";
const BLOCK: u64 = 4096;

fn params(data_offset: u64) -> FormatParams {
    FormatParams {
        kdf: KdfParams::Pbkdf2 {
            hash: Hash::Sha256,
            iterations: 1000,
        },
        digest_iterations: 1000,
        data_offset,
        sector_size: 4096,
        ..FormatParams::default()
    }
}

fn rw(p: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(p)
        .unwrap()
}

fn options(hotzone: u64) -> Options {
    Options {
        hotzone_size: Some(hotzone),
        ..Options::default()
    }
}

/// A volume with its header inside: 1 MiB of header, `data` bytes of data.
fn volume(dir: &Path, data: u64) -> std::path::PathBuf {
    let key: Vec<u8> = (0..64u8).collect();
    let mut img = format(&params(1 << 20), PASS, &key, &mut os_random).unwrap();
    img.resize(((1 << 20) + data) as usize, 0);
    let p = dir.join("volume");
    std::fs::write(&p, &img).unwrap();
    p
}

/// 8 blocks encrypted under a detached header: (header, data).
fn detached(dir: &Path, name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let data = dir.join(format!("{name}.data"));
    let hdr = dir.join(format!("{name}.header"));
    std::fs::write(&data, vec![5u8; 8 * BLOCK as usize]).unwrap();
    let plan = Plan::Encrypt(params(1 << 20));
    let mut r = Reencryption::init(rw(&hdr), rw(&data), PASS, &plan, &options(8 * BLOCK)).unwrap();
    r.run(&mut |_, _| {}, &|| false).unwrap();
    (hdr, data)
}

/// The kinds of run, each started on a fresh image (its first record
/// written), with its name.
fn runs(dir: &Path) -> Vec<(&'static str, Reencryption)> {
    let mut out = Vec::new();
    // Forward: a new key, 8 blocks in hotzones of 2.
    let v = volume(dir, 8 * BLOCK);
    let plan = Plan::new_key(&Image::load(&rw(&v)).unwrap(), None).unwrap();
    out.push((
        "reencrypt",
        Reencryption::init(rw(&v), rw(&v), PASS, &plan, &options(2 * BLOCK)).unwrap(),
    ));
    // Forward: an encryption with a detached header.
    let data = dir.join("plain");
    std::fs::write(&data, vec![7u8; 8 * BLOCK as usize]).unwrap();
    let hdr = dir.join("detached");
    let plan = Plan::Encrypt(params(1 << 20));
    out.push((
        "encrypt",
        Reencryption::init(rw(&hdr), rw(&data), PASS, &plan, &options(3 * BLOCK)).unwrap(),
    ));
    // Forward: a decryption with a detached header; and backward, as
    // cryptsetup decrypts one (the same record walked from the end).
    let plan = Plan::Decrypt { key_slot: None };
    let (hdr, data) = detached(dir, "decrypt");
    out.push((
        "decrypt",
        Reencryption::init(rw(&hdr), rw(&data), PASS, &plan, &options(2 * BLOCK)).unwrap(),
    ));
    let (hdr, data) = detached(dir, "decrypt-backward");
    let mut r = Reencryption::init(rw(&hdr), rw(&data), PASS, &plan, &options(2 * BLOCK)).unwrap();
    r.meta.reencrypt.as_mut().unwrap().direction = ReencryptDirection::Backward;
    out.push(("decrypt backward", r));
    // Moving the data up by 1 MiB (the header put at the start), and
    // back down (the header exported to a file of its own).
    let dev = dir.join("shift");
    std::fs::write(&dev, vec![3u8; 5 << 20]).unwrap();
    let plan = Plan::EncryptShift(params(1 << 20));
    out.push((
        "encrypt, data moved up",
        Reencryption::init(rw(&dev), rw(&dev), PASS, &plan, &options(1 << 20)).unwrap(),
    ));
    let dev = dir.join("shift-down");
    std::fs::write(&dev, vec![3u8; 5 << 20]).unwrap();
    let mut r = Reencryption::init(rw(&dev), rw(&dev), PASS, &plan, &options(1 << 20)).unwrap();
    r.run(&mut |_, _| {}, &|| false).unwrap();
    let plan = Plan::DecryptShift { key_slot: None };
    let hdr = dir.join("exported");
    out.push((
        "decrypt, data moved down",
        Reencryption::init(rw(&hdr), rw(&dev), PASS, &plan, &options(1 << 20)).unwrap(),
    ));
    out
}

/// Every state of `r`'s walk: each hotzone flagged, and each clean state
/// between, with what it must be recognised as.
fn walk(r: &mut Reencryption) -> Vec<(Metadata, State)> {
    let mut states = Vec::new();
    let mut done = 0;
    loop {
        r.done = done;
        states.push((r.metadata_at(r.clean_o(), 0), State::Clean { done }));
        if done == r.size {
            break;
        }
        let (o, l) = r.hotzone_at(done);
        done += l;
        states.push((r.metadata_at(o, l), State::Hot { o, l, done }));
    }
    r.done = 0;
    states
}

#[test]
fn every_state_of_every_kind_of_run_is_recognised() {
    let dir = tempfile::tempdir().unwrap();
    for (name, mut r) in runs(dir.path()) {
        let states = walk(&mut r);
        assert!(states.len() >= 5, "{name}: {} states", states.len());
        for (m, want) in states {
            assert_eq!(r.classify(&m).ok(), Some(want), "{name}: {want:?}");
        }
    }
}

/// The active segments of `m`, by id, to change.
fn active(m: &mut Metadata) -> Vec<&mut Segment> {
    m.segments.values_mut().filter(|s| !s.is_backup()).collect()
}

#[test]
fn each_lie_about_where_a_forward_run_is_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, r) = runs(dir.path()).remove(0);
    let (o, l) = r.hotzone_at(2 * BLOCK);
    let hot = r.metadata_at(o, l);
    let clean = r.metadata_at(2 * BLOCK, 0);
    let cases: Vec<(&str, Metadata)> = vec![
        ("the hot flag on the last segment", {
            let mut m = hot.clone();
            let mut a = active(&mut m);
            a[1].flags.clear();
            a[2].flags.push(HOT.into());
            m
        }),
        ("the hotzone past the end", {
            let mut m = hot.clone();
            active(&mut m)[1].size = Some(r.size);
            m
        }),
        ("a hotzone of no bytes", {
            let mut m = hot.clone();
            active(&mut m)[1].size = Some(0);
            m
        }),
        ("a hotzone without a size", {
            let mut m = hot.clone();
            active(&mut m)[1].size = None;
            m
        }),
        ("a hotzone off the block grid", {
            let mut m = hot.clone();
            active(&mut m)[1].offset += 512;
            m
        }),
        ("a hotzone before the data", {
            let mut m = hot.clone();
            active(&mut m)[1].offset = 0;
            m
        }),
        ("a hotzone whose length overflows", {
            let mut m = hot.clone();
            active(&mut m)[1].size = Some(u64::MAX - 4095);
            m
        }),
        ("a converted part without a size", {
            let mut m = clean.clone();
            active(&mut m)[0].size = None;
            m
        }),
        ("a gap between the converted part and the rest", {
            let mut m = clean.clone();
            active(&mut m)[1].offset += BLOCK;
            m
        }),
        ("a converted part off the block grid", {
            let mut m = clean.clone();
            let mut a = active(&mut m);
            a[0].size = Some(2 * BLOCK + 512);
            a[1].offset += 512;
            m
        }),
        ("a converted part bound to the old key", {
            let mut m = clean.clone();
            let old = r.old.digest.unwrap();
            m.digests.get_mut(&old).unwrap().segments.push(0);
            m
        }),
        ("a converted part of the whole data and a rest", {
            let mut m = clean.clone();
            let mut a = active(&mut m);
            a[0].size = Some(r.size);
            a[1].offset = r.new.segment.offset + r.size;
            m
        }),
        ("three segments and no hotzone", {
            let mut m = hot.clone();
            active(&mut m)[1].flags.clear();
            m
        }),
        ("no active segment", {
            let mut m = clean.clone();
            m.segments.retain(|_, s| s.is_backup());
            m
        }),
    ];
    assert!(r.classify(&hot).is_ok() && r.classify(&clean).is_ok());
    for (what, m) in cases {
        let e = r.classify(&m).expect_err(what);
        assert!(matches!(e, Error::Reencrypt { .. }), "{what}: {e}");
    }
}

#[test]
fn each_lie_about_where_a_run_that_moves_the_data_is_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = runs(dir.path());
    for (name, r) in [all.remove(5), all.remove(4), all.remove(3)] {
        let (o, l) = r.hotzone_at(r.size / 2 / BLOCK * BLOCK);
        let hot = r.metadata_at(o, l);
        assert!(r.classify(&hot).is_ok(), "{name}");
        let h = active(&mut hot.clone())
            .iter()
            .position(|s| s.has_flag(HOT))
            .unwrap();
        let cases: Vec<(&str, Metadata)> = vec![
            ("another IV tweak", {
                let mut m = hot.clone();
                active(&mut m)[h].iv_tweak += 1;
                m
            }),
            ("a hotzone one block longer", {
                let mut m = hot.clone();
                let s = &mut active(&mut m)[h];
                s.size = s.size.map(|n| n + BLOCK);
                m
            }),
            ("a hotzone one block further", {
                let mut m = hot.clone();
                active(&mut m)[h].offset += BLOCK;
                m
            }),
            ("a segment more", {
                let mut m = hot.clone();
                let extra = active(&mut m)[h].clone();
                let id = m.segments.keys().max().unwrap() + 1;
                m.segments.insert(id, extra);
                m
            }),
            ("no hotzone and no linear segment where one must be", {
                let mut m = hot.clone();
                active(&mut m)[h].flags.clear();
                m
            }),
        ];
        for (what, m) in cases {
            let e = r.classify(&m).expect_err(&format!("{name}: {what}"));
            assert!(matches!(e, Error::Reencrypt { .. }), "{name}: {what}: {e}");
        }
    }
}

/// Keyslots this crate cannot open survive a reencryption as cryptsetup
/// leaves them: one bound to the old key goes with it (its area wiped),
/// one of another type bound to no digest stays, and neither id is taken
/// by the new keyslot.
#[test]
fn unusable_keyslots_go_with_the_old_key_and_others_stay() {
    let dir = tempfile::tempdir().unwrap();
    let v = volume(dir.path(), 8 * BLOCK);
    let mut img = std::fs::read(&v).unwrap();
    let hdr = 16384;
    for at in [0, hdr] {
        let area = &img[at + 4096..at + hdr];
        let end = area.iter().position(|&b| b == 0).unwrap();
        let mut j: serde_json::Value = serde_json::from_slice(&area[..end]).unwrap();
        let mut k = j["keyslots"]["0"].clone();
        k["area"]["offset"] = serde_json::json!("290816");
        k["kdf"]["type"] = serde_json::json!("argon2");
        j["keyslots"]["1"] = k;
        j["keyslots"]["2"] = serde_json::json!({"type": "mdu-test", "key_size": 32,
            "area": {"type": "raw", "offset": "548864", "size": "4096"}});
        j["digests"]["0"]["keyslots"] = serde_json::json!(["0", "1"]);
        let text = j.to_string();
        let area = &mut img[at + 4096..at + hdr];
        area.fill(0);
        area[..text.len()].copy_from_slice(text.as_bytes());
        let sum = crate::header_checksum(&img[at..at + hdr]);
        img[at + 448..at + 512].fill(0);
        img[at + 448..at + 480].copy_from_slice(&sum);
    }
    img[290816..290816 + 512].fill(0xaa);
    std::fs::write(&v, &img).unwrap();
    let loaded = Image::load(&rw(&v)).unwrap();
    assert_eq!(
        loaded.metadata.unusable_keyslots.keys().collect::<Vec<_>>(),
        [&1, &2]
    );
    let plan = Plan::new_key(&loaded, Some(0)).unwrap();
    let mut r = Reencryption::init(rw(&v), rw(&v), PASS, &plan, &options(2 * BLOCK)).unwrap();
    assert_eq!(r.run(&mut |_, _| {}, &|| false).unwrap(), Outcome::Finished);
    let after = Image::load(&rw(&v)).unwrap();
    let m = &after.metadata;
    assert_eq!(m.unusable_keyslots.keys().collect::<Vec<_>>(), [&2]);
    assert!(!m.keyslots.contains_key(&1) && !m.keyslots.contains_key(&2));
    assert!(after.unlock(&rw(&v), PASS).is_ok());
    let wiped = std::fs::read(&v).unwrap();
    assert!(wiped[290816..290816 + 512].iter().any(|&b| b != 0xaa));
}
