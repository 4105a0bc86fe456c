//! The LUKS1 header reader over hostile images: arbitrary bytes, and a
//! valid image (two enabled key slots, data after the payload offset) with
//! input-chosen bytes flipped and the image cut. Whatever the input:
//!
//! * `Header::load`, `load_detached`, the dumps, `cipher_spec`,
//!   `data_range` and (when the iterations are few) `unlock` and
//!   `unlock_slot` of every slot never panic;
//! * no read goes past the end of the image (the reader below panics if
//!   one does);
//! * an accepted header writes back (`to_bytes`) to bytes that parse to
//!   the same header, equal to the input's but for the padding and text
//!   after a NUL; every slot's key material lies after the header, inside
//!   the image, before the payload and apart from the others;
//! * a volume key `unlock` gives is one the header's digest confirms;
//! * the LUKS2 metadata of a conversion, where there is room for it, has
//!   one keyslot per enabled slot, 28 KiB further, inside its keyslots
//!   area.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mdu_luks2::luks1::{self, FormatParams, Header};
use mdu_luks2::{CipherSpec, Hash, ReadAt, WeakKeys};

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

/// A fixed xorshift generator, so runs are reproducible.
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

/// A small valid image: aes-cbc-essiv:sha256 with a 128-bit key (63 KiB of
/// key material a slot), SHA-1, slots 0 and 1 enabled, payload at 1 MiB,
/// then 4 KiB of data.
fn valid() -> &'static [u8] {
    static IMAGE: OnceLock<Vec<u8>> = OnceLock::new();
    IMAGE.get_or_init(|| {
        let params = FormatParams {
            cipher: CipherSpec::parse("aes-cbc-essiv:sha256").expect("spec"),
            key_size: 16,
            hash: Hash::Sha1,
            iterations: 1000,
            digest_iterations: 1000,
            uuid: Some("01234567-89ab-4cde-8f01-23456789abcd".into()),
            ..FormatParams::default()
        };
        let mut random = fixed_random(0x9e37_79b9_7f4a_7c15);
        let key: Vec<u8> = (0..16).map(|i| 0x5a ^ i).collect();
        let mut image = luks1::format(&params, PASSPHRASE, &key, &mut random).expect("format");
        image.extend_from_slice(&[0u8; 4096]);
        let path = std::env::temp_dir().join(format!("mdu-fuzz-luks1-{}", std::process::id()));
        std::fs::write(&path, &image).expect("write");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .expect("open");
        let hdr = Header::load(&f).expect("load");
        luks1::add_keyslot(&f, &hdr, None, &key, b"other", 1000, &mut random).expect("add");
        let image = std::fs::read(&path).expect("read");
        std::fs::remove_file(&path).expect("unlink");
        image
    })
}

fn check(image: &[u8], try_unlock: bool) {
    let r = Checked(image);
    let detached = Header::load_detached(&r);
    let Ok(hdr) = Header::load(&r) else {
        return;
    };
    assert_eq!(
        detached.as_ref().ok(),
        Some(&hdr),
        "load accepted what load_detached refused"
    );
    let bytes = hdr.to_bytes().expect("an accepted header writes back");
    assert_eq!(Header::parse(&bytes).expect("parses back"), hdr);
    // Magic, version, numbers, digest and salt as read (the text fields
    // keep their text up to the NUL: the parse above compares them).
    assert_eq!(bytes[..8], image[..8]);
    assert_eq!(bytes[104..168], image[104..168]);
    assert_eq!(bytes[208..592], image[208..592]);
    let sectors = u64::from(hdr.material_sectors());
    let payload = u64::from(hdr.payload_offset);
    for (i, s) in hdr.slots.iter().enumerate() {
        let start = u64::from(s.key_material_offset);
        assert!(start >= 2, "slot {i} overlaps the header");
        assert!((start + sectors) * 512 <= image.len() as u64);
        assert!(payload == 0 || start + sectors <= payload);
        for t in &hdr.slots[i + 1..] {
            let other = u64::from(t.key_material_offset);
            assert!(start + sectors <= other || other + sectors <= start);
        }
    }
    // The LUKS2 metadata of a conversion: one keyslot per enabled slot,
    // each area 28 KiB further, inside the keyslots area.
    if let Ok(m) = luks1::luks2_metadata(&hdr) {
        let enabled = hdr.slots.iter().filter(|s| s.enabled).count();
        assert_eq!(m.keyslots.len(), enabled);
        for (id, k) in &m.keyslots {
            let slot = &hdr.slots[*id as usize];
            assert_eq!(
                k.area.offset,
                u64::from(slot.key_material_offset) * 512 + 28672
            );
            assert!(k.area.offset + k.area.size <= 32768 + m.config.keyslots_size);
        }
    }
    let _ = luks1::dump_text(std::path::Path::new("x"), &hdr);
    let _ = luks1::dump_json(&hdr, None);
    if let Ok((off, len)) = hdr.data_range(image.len() as u64) {
        assert_eq!(off + len, image.len() as u64);
    }
    let cheap = hdr.mk_digest_iterations <= 2000
        && hdr.slots.iter().all(|s| !s.enabled || s.iterations <= 2000)
        && hdr.key_bytes <= 64;
    if try_unlock && cheap {
        if let Ok(key) = hdr.unlock(&r, PASSPHRASE) {
            assert!(hdr.verify_key(&key.key));
            for weak in [WeakKeys::Refuse, WeakKeys::Allow] {
                let _ = hdr.data_cipher(&key, weak);
            }
        }
        for slot in 0..9 {
            let _ = hdr.unlock_slot(&r, slot, b"other");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let try_unlock = mode & 0x80 != 0;
    if mode & 1 == 0 {
        // Arbitrary bytes.
        check(rest, try_unlock);
        return;
    }
    // The valid image with bytes flipped: each 4-byte group names an
    // offset (3 bytes; the header and the slot table most often) and an XOR
    // mask; a zero mask cuts the image there.
    let mut image = valid().to_vec();
    let mut cut = None;
    for g in rest.chunks_exact(4) {
        let raw = usize::from(g[0]) << 16 | usize::from(g[1]) << 8 | usize::from(g[2]);
        let off = if g[0] & 0x80 == 0 {
            raw % 1024
        } else {
            raw % image.len()
        };
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
});
