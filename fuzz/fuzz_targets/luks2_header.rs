//! The LUKS2 header reader over hostile images: arbitrary bytes, a valid
//! image with bytes flipped, and a valid image whose JSON text (in both
//! copies, checksums recomputed) is the fuzzer's. Whatever the input:
//!
//! * `Image::load`, `unlock`, `segment`, `segment_cipher` (whatever cipher
//!   spec a keyslot or segment names) and `payload_range` never panic;
//! * no read goes past the end of the image (the reader below panics if
//!   one does);
//! * the digest of a reencryption record is computed without panic;
//! * `check::check` accepts every image `Image::load` accepts, never
//!   panics, names every `cipher_null` keyslot area and segment (read here
//!   from the metadata text), and a policy built from the image's own
//!   values adds no policy finding;
//! * an accepted image has a copy whose SHA-256, recomputed here with
//!   `sha2` over the input bytes, matches its csum field, lies where it
//!   says, and whose metadata re-serialise to JSON that parses to the same
//!   metadata;
//! * a reencryption in progress (a detached header decrypting its data
//!   device, or an encryption with a data shift, the header at the start)
//!   whose segments, area, shift and record the input rewrites, with the
//!   record's digest recomputed so that the rewrite reaches the state
//!   checks: `reencrypt::Reencryption::resume` refuses or resumes without
//!   panic, progress never exceeds the total, a run it finishes leaves a
//!   header that loads with no record, and the honest record gives the
//!   plaintext back (or encrypts it where it belongs).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mdu_luks2::{
    Digest, FormatParams, Hash, HeaderCopy, Image, Kdf, KdfParams, Metadata, ReadAt, ReencryptArea,
    ReencryptDirection, ReencryptKeyslot, ReencryptMode, Resilience, Segment, WeakKeys, format,
    format_detached,
};
use sha2::{Digest as _, Sha256};

const HDR: usize = 16384;
const PASSPHRASE: &[u8] = b"fuzz";

/// A reader that panics on any read outside the image.
struct Checked<'a>(&'a [u8]);

impl ReadAt for Checked<'_> {
    fn size(&self) -> Result<u64, mdu_core::io::IoError> {
        Ok(self.0.len() as u64)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), mdu_core::io::IoError> {
        let start = usize::try_from(offset).expect("offset fits usize");
        let end = start.checked_add(buf.len()).expect("no overflow");
        assert!(
            end <= self.0.len(),
            "read of {} bytes at {offset} past the end of a {}-byte image",
            buf.len(),
            self.0.len()
        );
        buf.copy_from_slice(&self.0[start..end]);
        Ok(())
    }
}

/// A small valid image: 16 KiB headers, one PBKDF2 keyslot with a 256-bit
/// aes-xts key, data at 160 KiB, one 4096-byte sector of data. The salts
/// and stripes come from a fixed generator so runs are reproducible.
fn valid() -> &'static [u8] {
    static IMAGE: OnceLock<Vec<u8>> = OnceLock::new();
    IMAGE.get_or_init(|| {
        let params = cheap_params("01234567-89ab-4cde-8f01-23456789abcd", 160 << 10);
        let mut random = fixed_random(0x9e37_79b9_7f4a_7c15u64);
        // Halves that differ: a weak XTS key would be refused.
        let key: Vec<u8> = (0..32).map(|i| 0x5a ^ i).collect();
        let mut image = format(&params, PASSPHRASE, &key, &mut random).expect("format");
        image.extend_from_slice(&[0u8; 4096]);
        image
    })
}

/// Cheap parameters (PBKDF2 at 1000 iterations, a 256-bit aes-xts key,
/// 4096-byte sectors) with this UUID and data offset.
fn cheap_params(uuid: &str, data_offset: u64) -> FormatParams {
    FormatParams {
        key_size: 32,
        sector_size: 4096,
        kdf: KdfParams::Pbkdf2 {
            hash: Hash::Sha256,
            iterations: 1000,
        },
        digest_iterations: 1000,
        uuid: Some(uuid.into()),
        data_offset,
        ..FormatParams::default()
    }
}

/// A fixed xorshift generator for salts and stripes, so runs are
/// reproducible.
fn fixed_random(mut state: u64) -> impl FnMut(&mut [u8]) -> Result<(), mdu_luks2::Error> {
    move |buf: &mut [u8]| {
        for b in buf {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *b = state as u8;
        }
        Ok(())
    }
}

/// The volume key of [`valid`] and [`detached`].
fn volume_key() -> Vec<u8> {
    (0..32).map(|i| 0x5a ^ i).collect()
}

/// The plaintext of the data device of [`detached`]: 64 KiB.
const DATA_LEN: usize = 64 << 10;

fn plaintext() -> Vec<u8> {
    plaintext_of(DATA_LEN)
}

fn plaintext_of(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

/// A detached header (keyslots area 224 KiB) and its metadata in the
/// middle of a decryption of its data device: 16 KiB converted, checksum
/// resilience, the record's digest over the volume key.
fn detached() -> &'static (Vec<u8>, Metadata) {
    static BASE: OnceLock<(Vec<u8>, Metadata)> = OnceLock::new();
    BASE.get_or_init(|| {
        let params = cheap_params("fedcba98-7654-4321-8fed-cba987654321", 256 << 10);
        let mut random = fixed_random(0x2545_f491_4f6c_dd1du64);
        let region =
            format_detached(&params, PASSPHRASE, &volume_key(), &mut random).expect("format");
        let mut m = Image::load(&region[..]).expect("load").metadata;
        let crypt = m.segments[&0].clone();
        let mut prev = crypt.clone();
        prev.flags = vec!["backup-previous".into()];
        let mut fin = Segment::linear(0, None);
        fin.flags = vec!["backup-final".into()];
        let rest = Segment {
            offset: 16384,
            iv_tweak: 32,
            ..crypt
        };
        m.segments = [Segment::linear(0, Some(16384)), rest, prev, fin]
            .into_iter()
            .enumerate()
            .map(|(i, s)| (i as u32, s))
            .collect();
        m.digests.get_mut(&0).expect("digest 0").segments = vec![1, 2];
        let ks = &m.keyslots[&0];
        let offset = ks.area.offset + ks.area.size;
        let (_, end) = m.keyslots_area(HDR as u64);
        m.reencrypt = Some(ReencryptKeyslot {
            id: 1,
            area: ReencryptArea {
                offset,
                size: end - offset,
                resilience: Resilience::Checksum {
                    hash: Hash::Sha256,
                    sector_size: 4096,
                },
            },
            mode: ReencryptMode::Decrypt,
            direction: ReencryptDirection::Forward,
            priority: Some(0),
        });
        m.config.requirements = Some(vec!["online-reencrypt-v2".into()]);
        seal_record(&mut m);
        (region, m)
    })
}

/// Recomputes the record's digest (id 1) over the volume key.
fn seal_record(m: &mut Metadata) {
    m.digests.remove(&1);
    let key = volume_key();
    let Ok(input) = mdu_luks2::reencrypt::digest_input(m, Some(&key), Some(&key)) else {
        return;
    };
    let id = m.reencrypt.as_ref().map_or(1, |r| r.id);
    m.digests.insert(
        1,
        Digest::of_key(&input, Hash::Sha256, 1000, vec![7; 32], vec![id], vec![]),
    );
}

/// Rewrites [`detached`]'s metadata as the input says (9 bytes an edit:
/// what, which, a value), reseals the record, and resumes the run on
/// copies of the header and of the data device.
fn resume(edits: &[u8]) {
    let (region, base) = detached();
    let mut m = base.clone();
    edit(&mut m, edits, &base.segments[&1]);
    seal_record(&mut m);
    let Some(header) = with_json(region, &m) else {
        return;
    };
    check(&header, false);
    // The data device: the first 16 KiB plaintext (converted), the rest
    // ciphertext of the plaintext under the volume key.
    let plain = plaintext();
    let mut data = plain.clone();
    let cipher = cipher_of(region);
    cipher
        .crypt(mdu_luks2::Direction::Encrypt, 4, &mut data[16384..])
        .expect("encrypt");
    let (h, d) = (scratch(&header), scratch(&data));
    let finished = run_resumed(&h, &d);
    if finished && m == *base {
        let mut got = vec![0u8; DATA_LEN];
        std::os::unix::fs::FileExt::read_exact_at(&d, &mut got, 0).expect("read");
        assert!(
            got == plain,
            "the honest run did not give the plaintext back"
        );
    }
}

/// The volume key's cipher of the single segment of `region`.
fn cipher_of(region: &[u8]) -> mdu_luks2::SectorCipher {
    let img = Image::load(region).expect("base loads");
    let key = img.unlock(region, PASSPHRASE).expect("base unlocks");
    img.segment_cipher(&key, WeakKeys::Refuse).expect("cipher")
}

/// `region` with `m` as the JSON of both copies, resealed; `None` when it
/// does not fit.
fn with_json(region: &[u8], m: &Metadata) -> Option<Vec<u8>> {
    let json = m.to_json();
    if json.len() >= HDR - 4096 {
        return None;
    }
    let mut header = region.to_vec();
    for at in [0, HDR] {
        let area = &mut header[at + 4096..at + HDR];
        area.fill(0);
        area[..json.len()].copy_from_slice(json.as_bytes());
        reseal(&mut header, at);
    }
    Some(header)
}

/// Resumes the run of header `h` over data `d` and runs it to its end:
/// whether it finished. Refusing is fine; what it does must be sane.
fn run_resumed(h: &std::fs::File, d: &std::fs::File) -> bool {
    let Ok(mut run) = mdu_luks2::reencrypt::Reencryption::resume(
        h.try_clone().expect("dup"),
        d.try_clone().expect("dup"),
        PASSPHRASE,
        None,
        true,
    ) else {
        return false;
    };
    let (done, total) = run.progress();
    assert!(done <= total, "resumed at {done} of {total}");
    let outcome = run.run(&mut |done, total| assert!(done <= total), &|| false);
    if let Ok(mdu_luks2::reencrypt::Outcome::Finished) = outcome {
        let img = Image::load(h).expect("a finished run leaves a header that loads");
        assert!(
            img.metadata.reencrypt.is_none(),
            "a finished run left its record"
        );
        return true;
    }
    false
}

/// An encryption with a data shift (the header at the start, s = 256
/// KiB, 512 KiB of data), just started: the device's bytes and the
/// metadata.
fn shifted() -> &'static (Vec<u8>, Metadata) {
    static BASE: OnceLock<(Vec<u8>, Metadata)> = OnceLock::new();
    BASE.get_or_init(|| {
        const S: u64 = 256 << 10;
        const KEPT: u64 = 512 << 10;
        let params = cheap_params("0badc0de-1234-4567-89ab-cdef01234567", S);
        let mut random = fixed_random(0x3c6e_f372_fe94_f82bu64);
        let region = format(&params, PASSPHRASE, &volume_key(), &mut random).expect("format");
        let mut m = Image::load(&region[..]).expect("load").metadata;
        let fin_seg = m.segments[&0].clone();
        let flagged = |mut s: Segment, f: &str| {
            s.flags = vec![f.into()];
            s
        };
        let t = KEPT + S;
        m.segments = [
            Segment::linear(t, Some(S)),
            Segment::linear(S, Some(KEPT - S)),
            flagged(Segment::linear(0, Some(KEPT)), "backup-previous"),
            flagged(fin_seg, "backup-final"),
            flagged(Segment::linear(t, Some(S)), "backup-moved-segment"),
        ]
        .into_iter()
        .enumerate()
        .map(|(i, s)| (i as u32, s))
        .collect();
        m.digests.get_mut(&0).expect("digest 0").segments = vec![3];
        let ks = &m.keyslots[&0];
        let offset = ks.area.offset + ks.area.size;
        m.reencrypt = Some(ReencryptKeyslot {
            id: 1,
            area: ReencryptArea {
                offset,
                size: 4096,
                resilience: Resilience::Datashift { shift: S },
            },
            mode: ReencryptMode::Encrypt,
            direction: ReencryptDirection::Backward,
            priority: Some(0),
        });
        m.config.requirements = Some(vec!["online-reencrypt-v2".into()]);
        seal_record(&mut m);
        let plain = plaintext_of(KEPT as usize);
        let mut device = region;
        device.resize((t + S) as usize, 0);
        device[S as usize..KEPT as usize].copy_from_slice(&plain[S as usize..KEPT as usize]);
        device[t as usize..].copy_from_slice(&plain[..S as usize]);
        (device, m)
    })
}

/// Rewrites [`shifted`]'s metadata as the input says, reseals the
/// record, and resumes the run on a copy of the device.
fn resume_shifted(edits: &[u8]) {
    let (device, base) = shifted();
    let mut m = base.clone();
    edit(&mut m, edits, &base.segments[&3]);
    seal_record(&mut m);
    let Some(image) = with_json(device, &m) else {
        return;
    };
    check(&image, false);
    let f = scratch(&image);
    let finished = run_resumed(&f, &f);
    if finished && m == *base {
        let mut got = vec![0u8; 512 << 10];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut got, 256 << 10).expect("read");
        let img = Image::load(&f).expect("loads");
        let key = img.unlock(&f, PASSPHRASE).expect("unlocks");
        let c = img.segment_cipher(&key, WeakKeys::Refuse).expect("cipher");
        c.crypt(mdu_luks2::Direction::Decrypt, 0, &mut got)
            .expect("decrypt");
        assert!(
            got == plaintext_of(512 << 10),
            "the honest shifted run did not encrypt the data where they belong"
        );
    }
}

/// Applies the input's edits (9 bytes each: what and which, a value) to
/// the segments and record of `m`; `crypt` is the crypt segment a linear
/// one becomes.
fn edit(m: &mut Metadata, edits: &[u8], crypt: &Segment) {
    for e in edits.chunks_exact(9) {
        let v = u64::from_le_bytes(e[1..].try_into().expect("8 bytes"));
        let ids: Vec<u32> = m.segments.keys().copied().collect();
        let Some(&id) = ids.get(usize::from(e[0] >> 4) % ids.len().max(1)) else {
            break;
        };
        let seg = m.segments.get_mut(&id).expect("listed");
        match e[0] % 12 {
            0 => seg.offset = v % (1 << 20),
            1 => seg.size = (v & 1 == 0).then_some((v >> 1) % (1 << 20)),
            2 => seg.iv_tweak = v % (1 << 12),
            3 => {
                if seg.flags.iter().any(|f| f == "in-reencryption") {
                    seg.flags.clear();
                } else {
                    seg.flags = vec!["in-reencryption".into()];
                }
            }
            4 => {
                let s = seg.clone();
                *seg = if s.is_crypt() {
                    Segment::linear(s.offset, s.size)
                } else {
                    Segment {
                        flags: s.flags.clone(),
                        offset: s.offset,
                        size: s.size,
                        ..crypt.clone()
                    }
                };
            }
            5 => {
                m.segments.remove(&id);
            }
            6 => {
                let s = seg.clone();
                let next = m.segments.keys().max().map_or(0, |k| k + 1);
                m.segments.insert(next, s);
            }
            7 => seg.offset = (v % 32) * 4096,
            8 => seg.size = Some((v % 32) * 4096),
            9 => {
                if let Some(r) = &mut m.reencrypt {
                    match v % 4 {
                        0 => {
                            r.direction = match r.direction {
                                ReencryptDirection::Forward => ReencryptDirection::Backward,
                                ReencryptDirection::Backward => ReencryptDirection::Forward,
                            }
                        }
                        1 => r.area.resilience = Resilience::Journal,
                        2 => r.area.resilience = Resilience::None,
                        _ if v & 4 == 0 => r.area.size = (v >> 3) % (256 << 10),
                        _ => {
                            r.area.resilience = Resilience::Datashift {
                                shift: (v >> 3) % (1 << 21),
                            }
                        }
                    }
                }
            }
            10 => {
                if let Some(d) = m.digests.get_mut(&0) {
                    d.segments = ids
                        .iter()
                        .copied()
                        .filter(|i| v >> (i % 64) & 1 == 1)
                        .collect();
                }
            }
            _ => {
                if let Some(r) = &mut m.reencrypt {
                    r.mode = match v % 3 {
                        0 => ReencryptMode::Encrypt,
                        1 => ReencryptMode::Decrypt,
                        _ => ReencryptMode::Reencrypt,
                    };
                }
            }
        }
    }
}

/// A file holding `bytes`, already unlinked.
fn scratch(bytes: &[u8]) -> std::fs::File {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!(
        "mdu-fuzz-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .expect("scratch file");
    std::fs::remove_file(&path).expect("unlink");
    std::io::Write::write_all(&mut &f, bytes).expect("write");
    f
}

/// The checksum of the copy at `at` as the header defines it, computed
/// independently of the crate.
fn oracle_checksum(image: &[u8], at: usize, size: usize) -> [u8; 32] {
    let mut copy = image[at..at + size].to_vec();
    copy[448..512].fill(0);
    Sha256::digest(&copy).into()
}

fn reseal(image: &mut [u8], at: usize) {
    let sum = oracle_checksum(image, at, HDR);
    image[at + 448..at + 512].fill(0);
    image[at + 448..at + 480].copy_from_slice(&sum);
}

/// Whether unlocking costs little enough to try on every input.
fn cheap(m: &Metadata) -> bool {
    m.keyslots.values().all(|k| {
        u64::from(k.key_size) * u64::from(mdu_luks2::AF_STRIPES) <= 1 << 20
            && match &k.kdf {
                Kdf::Pbkdf2 { iterations, .. } => *iterations <= 2000,
                Kdf::Argon2 {
                    time, memory, cpus, ..
                } => *time <= 8 && *memory <= 256 && *cpus <= 4,
            }
    }) && m.digests.values().all(|d| d.iterations <= 2000)
}

fn check(image: &[u8], try_unlock: bool) {
    let r = Checked(image);
    let Ok(img) = Image::load(&r) else {
        return;
    };
    let size = img.header.hdr_size as usize;
    let at = match img.copy {
        HeaderCopy::Primary => 0,
        HeaderCopy::Secondary => size,
    };
    assert_eq!(img.header.hdr_offset, at as u64);
    assert!(at + size <= image.len());
    assert_eq!(
        oracle_checksum(image, at, size)[..],
        image[at + 448..at + 480],
        "an image with a wrong checksum was accepted"
    );
    assert_eq!(img.header.csum[..32], image[at + 448..at + 480]);
    let again = Metadata::parse(&img.metadata.to_json(), img.header.hdr_size)
        .expect("written metadata parse");
    assert_eq!(again, img.metadata);
    // A reencryption record: its digest input is computed without panic
    // for any record that loads.
    if img.metadata.reencrypt.is_some() {
        let _ = mdu_luks2::reencrypt::digest_input(&img.metadata, Some(&[7; 64]), Some(&[9; 64]));
        let _ = mdu_luks2::reencrypt::verify_digest(&img.metadata, Some(&[7; 64]), None);
    }
    let report = mdu_luks2::check::check(&r, None).expect("check loads what load loads");
    let nulls = img
        .metadata
        .keyslots
        .iter()
        .map(|(id, k)| {
            (
                format!("keyslots.{id}.area.encryption"),
                k.area.encryption.as_str(),
            )
        })
        .chain(
            img.metadata
                .segments
                .iter()
                .map(|(id, s)| (format!("segments.{id}.encryption"), s.encryption.as_str())),
        )
        .filter(|(_, e)| e.to_ascii_lowercase().starts_with("cipher_null"));
    for (field, _) in nulls {
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.field == field && f.kind == mdu_luks2::check::Kind::NotEncrypting),
            "{field} is cipher_null but not named"
        );
    }
    if let (Some(s), Some(k)) = (
        img.metadata.segments.values().find(|s| !s.is_backup()),
        img.metadata.keyslots.values().next(),
    ) && img
        .metadata
        .segments
        .values()
        .filter(|s| !s.is_backup())
        .count()
        == 1
        && img
            .metadata
            .keyslots
            .values()
            .all(|o| o.key_size == k.key_size)
    {
        let own = mdu_luks2::check::Policy {
            cipher: Some(s.encryption.as_str().to_owned()),
            key_size: Some(k.key_size),
            sector_size: Some(s.sector_size),
            data_offset: Some(s.offset),
            data_size: Some(s.size),
            max_keyslots: Some(img.metadata.keyslots.len() as u32),
            allow_unbound_keyslots: true,
            ..Default::default()
        };
        let with = mdu_luks2::check::check(&r, Some(&own)).expect("loads");
        assert!(
            with.findings
                .iter()
                .all(|f| f.kind != mdu_luks2::check::Kind::Policy),
            "the image's own values differ from themselves: {:?}",
            with.findings
        );
    }
    if let Ok((_, seg)) = img.segment() {
        if let Ok((off, len)) = img.payload_range(seg) {
            assert!(
                off.checked_add(len)
                    .is_some_and(|e| e <= image.len() as u64)
            );
        }
    }
    if try_unlock
        && cheap(&img.metadata)
        && let Ok(key) = img.unlock(&r, PASSPHRASE)
    {
        for weak in [WeakKeys::Refuse, WeakKeys::Allow] {
            let _ = img.segment_cipher(&key, weak);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let try_unlock = mode & 0x80 != 0;
    match mode % 5 {
        // A reencryption in progress, rewritten, then resumed.
        3 => resume(rest),
        // The same for an encryption with a data shift.
        4 => resume_shifted(rest),
        // Arbitrary bytes.
        0 => check(rest, try_unlock),
        // A valid image with bytes flipped: each 4-byte group names an
        // offset (3 bytes, into the image) and an XOR mask.
        1 => {
            let mut image = valid().to_vec();
            let mut cut = None;
            for g in rest.chunks_exact(4) {
                let off = (usize::from(g[0]) << 16 | usize::from(g[1]) << 8 | usize::from(g[2]))
                    % image.len();
                if g[3] == 0 {
                    cut = Some(off);
                } else {
                    image[off] ^= g[3];
                }
            }
            if let Some(n) = cut {
                image.truncate(n);
            }
            check(&image, try_unlock);
        }
        // A valid image whose JSON text, in both copies, is the input's,
        // with the checksums recomputed: the metadata validation is reached.
        2 => {
            if rest.len() >= HDR - 4096 {
                return;
            }
            let mut image = valid().to_vec();
            for at in [0, HDR] {
                let area = &mut image[at + 4096..at + HDR];
                area.fill(0);
                area[..rest.len()].copy_from_slice(rest);
                reseal(&mut image, at);
            }
            check(&image, try_unlock);
        }
        _ => unreachable!("mode % 5"),
    }
});
