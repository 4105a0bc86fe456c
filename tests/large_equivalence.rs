//! The check the kernel's multi-data-unit series ran on dm-crypt: 256 MiB of
//! plain64 ciphertext through the batched path and through one request per
//! sector hash to the same SHA-256 (computed with the `sha2` crate). Under
//! a user-mode emulator (`MDU_EMULATED`, set by .ci/qemu-aarch64.toml) the
//! run is 32 MiB, which still crosses the 2^32 IV carry, and says so.

use mdu::xts::{Backend, XtsAes256};
use mdu::{DataUnits, Iv};
use sha2::{Digest, Sha256};

const CHUNK: usize = 16 << 20;

/// Bytes encrypted each way: 256 MiB, or 32 MiB under an emulator.
fn total() -> usize {
    if std::env::var_os("MDU_EMULATED").is_some() {
        println!("MDU_EMULATED: 32 MiB instead of 256 MiB under the emulator");
        32 << 20
    } else {
        256 << 20
    }
}

fn fill(chunk: &mut [u8], offset: usize) {
    for (i, w) in chunk.chunks_mut(8).enumerate() {
        let x = ((offset / 8 + i) as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(17);
        w.copy_from_slice(&x.to_le_bytes()[..w.len()]);
    }
}

/// Runs `per_chunk` over [`total`] bytes in 16 MiB chunks (to bound
/// memory) and returns the SHA-256 of the ciphertext.
fn digest(mut per_chunk: impl FnMut(u64, &mut [u8])) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    for off in (0..total()).step_by(CHUNK) {
        fill(&mut buf, off);
        per_chunk(off as u64, &mut buf);
        h.update(&buf);
    }
    h.finalize().into()
}

#[test]
#[cfg_attr(miri, ignore = "256 MiB is far too much for Miri")]
fn batched_and_per_sector_ciphertext_hash_alike() {
    let key: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(7) ^ 0x5c).collect();
    let backend = Backend::detect();
    println!("batched_and_per_sector_ciphertext_hash_alike: backend {backend}");
    let xts = XtsAes256::with_backend(&key, backend).unwrap();
    for (sector, step) in [(512usize, 1u64), (4096, 8)] {
        // Start close enough to 2^32 sectors that the batch crosses it.
        let first = (1u64 << 32) - 1000;
        let units = DataUnits::new(xts.clone(), sector)
            .unwrap()
            .with_iv_step(step);
        let batched = digest(|off, buf| {
            let iv = Iv::plain64(first + off / sector as u64 * step);
            units.encrypt(iv, buf).unwrap();
        });
        let per_sector = digest(|off, buf| {
            for (i, s) in buf.chunks_mut(sector).enumerate() {
                let n = (off / sector as u64 + i as u64) * step;
                xts.encrypt(Iv::plain64(first + n), s).unwrap();
            }
        });
        assert_eq!(batched, per_sector, "{backend:?}, {sector}-byte sectors");
    }
}
