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
//!   metadata.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mdu_luks2::{
    FormatParams, Hash, HeaderCopy, Image, Kdf, KdfParams, Metadata, ReadAt, WeakKeys, format,
};
use sha2::{Digest, Sha256};

const HDR: usize = 16384;
const PASSPHRASE: &[u8] = b"fuzz";

/// A reader that panics on any read outside the image.
struct Checked<'a>(&'a [u8]);

impl ReadAt for Checked<'_> {
    fn image_len(&self) -> std::io::Result<u64> {
        Ok(self.0.len() as u64)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
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
        let params = FormatParams {
            key_size: 32,
            sector_size: 4096,
            kdf: KdfParams::Pbkdf2 {
                hash: Hash::Sha256,
                iterations: 1000,
            },
            digest_iterations: 1000,
            uuid: Some("01234567-89ab-4cde-8f01-23456789abcd".into()),
            data_offset: 160 << 10,
            ..FormatParams::default()
        };
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = |buf: &mut [u8]| {
            for b in buf {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *b = state as u8;
            }
            Ok(())
        };
        // Halves that differ: a weak XTS key would be refused.
        let key: Vec<u8> = (0..32).map(|i| 0x5a ^ i).collect();
        let mut image = format(&params, PASSPHRASE, &key, &mut random).expect("format");
        image.extend_from_slice(&[0u8; 4096]);
        image
    })
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
    match mode % 3 {
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
        _ => {
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
    }
});
