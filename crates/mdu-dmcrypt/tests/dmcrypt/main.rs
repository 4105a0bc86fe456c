//! dm-crypt IV generators and batching: hand-built IVs from the
//! definitions, OpenSSL as the outside oracle for `essiv` and `eboiv` (XTS
//! and CBC), the published CBC-ESSIV vectors, the affinity gating of
//! `plain` and `plain64`, which cipher path each mode takes, and batched ==
//! one sector at a time for every mode and both ciphers.

use mdu_cbc::{AesCbc128, AesCbc256};
use mdu_core::testing::sample;
use mdu_dmcrypt::{
    ChainMode, CipherSpec, DataUnitCipher, Direction, Error, Geometry, IvGenerator, IvMode,
    SECTOR_SIZES,
};
use mdu_xts::{DataUnitSize, Iv, XtsAes128, XtsAes256};
use openssl::sha::sha256;
use openssl::symm::{Cipher, Crypter, Mode, encrypt};
use proptest::prelude::*;

fn key64() -> Vec<u8> {
    (0..64u8)
        .map(|i| i.wrapping_mul(37).wrapping_add(11))
        .collect()
}

fn gen_for(mode: IvMode, ss: u32, off: u64, large: bool, key: &[u8]) -> IvGenerator {
    IvGenerator::new(mode, Geometry::new(ss, off, large).unwrap(), key).unwrap()
}

#[test]
fn parse_cipher_specs() {
    for chain in [ChainMode::Xts, ChainMode::Cbc] {
        for m in IvMode::ALL {
            let text = format!("aes-{chain}-{}", m.name());
            let spec = CipherSpec::parse(&text).unwrap();
            assert_eq!((spec.chain(), spec.iv_mode()), (chain, m));
            assert_eq!(spec.to_string(), text);
            assert_eq!(text.parse::<CipherSpec>().unwrap(), spec);
            assert_eq!(m.name().parse::<IvMode>().unwrap(), m);
        }
    }
    assert_eq!(
        CipherSpec::parse("AES-XTS-plain64").unwrap(),
        CipherSpec::new(ChainMode::Xts, IvMode::Plain64)
    );
    assert_eq!(
        CipherSpec::parse("aes-CBC-essiv:sha256").unwrap(),
        CipherSpec::new(ChainMode::Cbc, IvMode::EssivSha256)
    );
    for bad in [
        "aes-ecb-plain64",
        "aes-ctr-plain64",
        "blowfish-cbc-plain64",
        "cast5-cbc-essiv:sha256",
        "aes-lrw-plain64",
        "serpent-ctr-plain64",
        "aes-xts",
        "aes-cbc",
        "aes",
        "",
    ] {
        let err = CipherSpec::parse(bad).unwrap_err();
        assert!(matches!(err, Error::UnsupportedCipher { .. }), "{bad}");
        assert!(err.to_string().contains("aes-cbc-essiv:sha256"), "{err}");
    }
    for bad in [
        "aes-xts-lmk",
        "aes-cbc-tcw",
        "aes-cbc-essiv:sha1",
        "aes-xts-plain65",
        "aes-cbc-",
    ] {
        let err = CipherSpec::parse(bad).unwrap_err();
        assert!(matches!(err, Error::UnknownIvMode { .. }), "{bad}");
        assert!(err.to_string().contains("plain64"));
    }
}

#[test]
fn key_lengths_per_chaining_mode() {
    let xts = CipherSpec::parse("aes-xts-plain64").unwrap();
    let cbc = CipherSpec::parse("aes-cbc-plain64").unwrap();
    for len in [0usize, 16, 24, 32, 48, 64, 65] {
        assert_eq!(
            xts.check_key_len(len).is_ok(),
            len == 32 || len == 64,
            "{len}"
        );
        assert_eq!(
            cbc.check_key_len(len).is_ok(),
            len == 16 || len == 32,
            "{len}"
        );
    }
    assert_eq!(
        cbc.check_key_len(24).unwrap_err(),
        Error::KeyLength {
            cipher: "aes-cbc",
            len: 24,
            expected: &[16, 32]
        }
    );
}

#[test]
fn geometry_rules() {
    for ss in [0, 256, 513, 8192] {
        assert_eq!(
            Geometry::new(ss, 0, false).unwrap_err(),
            Error::SectorSize { size: ss }
        );
    }
    for ss in SECTOR_SIZES {
        let d = u64::from(ss / 512);
        assert!(Geometry::new(ss, 5 * d, true).is_ok());
        if d > 1 {
            let err = Geometry::new(ss, 5 * d + 1, false).unwrap_err();
            assert_eq!(
                err,
                Error::IvOffsetAlignment {
                    iv_offset: 5 * d + 1,
                    sector_size: ss
                }
            );
        }
    }
}

#[test]
fn iv_sector_and_step() {
    // 4 KiB sectors without iv_large_sectors: iv_sector advances by 8.
    let g = Geometry::new(4096, 16, false).unwrap();
    assert_eq!(g.iv_step(), 8);
    assert_eq!(
        (0..4).map(|i| g.iv_sector(i)).collect::<Vec<_>>(),
        [16, 24, 32, 40]
    );
    let g = Geometry::new(4096, 16, true).unwrap();
    assert_eq!(g.iv_step(), 1);
    assert_eq!(
        (0..4).map(|i| g.iv_sector(i)).collect::<Vec<_>>(),
        [2, 3, 4, 5]
    );
    let g = Geometry::new(1024, 6, false).unwrap();
    assert_eq!((g.iv_sector(3), g.iv_step()), (12, 2));
    // cc_sector wraps like sector_t.
    let g = Geometry::new(2048, u64::MAX - 3, false).unwrap();
    assert_eq!((g.iv_sector(0), g.iv_sector(1)), (u64::MAX - 3, 0));
    let g = Geometry::new(2048, u64::MAX - 3, true).unwrap();
    assert_eq!((g.iv_sector(0), g.iv_sector(1)), ((u64::MAX - 3) >> 2, 0));
}

#[test]
fn ivs_by_hand() {
    let key = key64();
    let xts = XtsAes256::new(&key).unwrap();
    let s: u64 = 0x0123_4567_89ab_cdef;
    let at = |mode| gen_for(mode, 512, s, false, &key).iv(&xts, 0).unwrap().0;

    let mut plain = [0u8; 16];
    plain[..4].copy_from_slice(&[0xef, 0xcd, 0xab, 0x89]);
    assert_eq!(at(IvMode::Plain), plain);

    let mut plain64 = [0u8; 16];
    plain64[..8].copy_from_slice(&[0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01]);
    assert_eq!(at(IvMode::Plain64), plain64);

    let mut be = [0u8; 16];
    be[8..].copy_from_slice(&[0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef]);
    assert_eq!(at(IvMode::Plain64Be), be);

    // benbi: be64((s << 5) + 1) in the last 8 bytes.
    let mut benbi = [0u8; 16];
    benbi[8..].copy_from_slice(&((s << 5) + 1).to_be_bytes());
    assert_eq!(at(IvMode::Benbi), benbi);
    let g = gen_for(IvMode::Benbi, 512, 0, false, &key);
    let mut one = [0u8; 16];
    one[15] = 1;
    assert_eq!(g.iv(&xts, 0).unwrap().0, one);
    one[15] = 0x21;
    assert_eq!(g.iv(&xts, 1).unwrap().0, one);

    assert_eq!(at(IvMode::Null), [0u8; 16]);

    // essiv: AES-256 keyed with SHA-256(full key), applied to the plain64 IV
    // (OpenSSL ECB as the outside cipher).
    let salt = sha256(&key);
    let mut c = Crypter::new(Cipher::aes_256_ecb(), Mode::Encrypt, &salt, None).unwrap();
    c.pad(false);
    let mut out = [0u8; 32];
    let n = c.update(&plain64, &mut out).unwrap();
    assert_eq!(n, 16);
    assert_eq!(at(IvMode::EssivSha256), out[..16]);

    // eboiv: XTS encryption (OpenSSL) of one zero block with the byte offset
    // s * 512 as the tweak.
    let mut tweak = [0u8; 16];
    tweak[..8].copy_from_slice(&s.wrapping_mul(512).to_le_bytes());
    let e = encrypt(Cipher::aes_256_xts(), &key, Some(&tweak), &[0u8; 16]).unwrap();
    assert_eq!(at(IvMode::Eboiv), e[..]);
}

#[test]
fn eboiv_uses_sector_size_and_iv_sector() {
    let key: Vec<u8> = (0..32u8).collect();
    let xts = XtsAes128::new(&key).unwrap();
    for (ss, large) in [(4096, false), (4096, true), (1024, false)] {
        let g = gen_for(IvMode::Eboiv, ss, 64, large, &key);
        for i in 0..3 {
            let s = g.geometry().iv_sector(i);
            let mut tweak = [0u8; 16];
            tweak[..8].copy_from_slice(&(s * u64::from(ss)).to_le_bytes());
            let e = encrypt(Cipher::aes_128_xts(), &key, Some(&tweak), &[0u8; 16]).unwrap();
            assert_eq!(g.iv(&xts, i).unwrap().0, e[..]);
        }
    }
}

#[test]
fn plain_gated_at_2_pow_32() {
    let g = gen_for(IvMode::Plain, 512, (1 << 32) - 5, false, &[]);
    assert_eq!(g.affine_step(), Some(1));
    assert_eq!(g.affine_run_len(0, 100), 5);
    assert_eq!(g.affine(0, 5), Some(1));
    assert_eq!(g.affine(0, 6), None);
    assert_eq!(g.affine_run_len(4, 100), 1);
    assert_eq!(g.affine_run_len(5, 100), 100);
    assert_eq!(g.affine_run_len(0, 0), 0);
    // 4 KiB sectors, step 8: iv_sector 2^32 - 16, 2^32 - 8, then 2^32.
    let g = gen_for(IvMode::Plain, 4096, (1 << 32) - 16, false, &[]);
    assert_eq!(g.affine_step(), Some(8));
    assert_eq!(g.affine_run_len(0, 100), 2);
    let xts = XtsAes128::new(&(0..32u8).collect::<Vec<_>>()).unwrap();
    assert_eq!(g.iv(&xts, 2).unwrap(), Iv::ZERO);
    // With iv_large_sectors the wrap is in iv_sector, not cc_sector.
    let g = gen_for(IvMode::Plain, 4096, ((1 << 32) - 3) * 8, true, &[]);
    assert_eq!(g.affine_run_len(0, 100), 3);
    // plain64 is not gated at 2^32 ...
    let g = gen_for(IvMode::Plain64, 512, (1 << 32) - 5, false, &[]);
    assert_eq!(g.affine_run_len(0, 100), 100);
}

#[test]
fn plain64_gated_at_2_pow_64() {
    let g = gen_for(IvMode::Plain64, 4096, u64::MAX - 23, false, &[]);
    assert_eq!(g.affine_step(), Some(8));
    assert_eq!(g.affine_run_len(0, 100), 3);
    assert_eq!(g.affine_run_len(3, 100), 100);
    let xts = XtsAes128::new(&(0..32u8).collect::<Vec<_>>()).unwrap();
    assert_eq!(g.iv(&xts, 3).unwrap(), Iv::ZERO);
    let g = gen_for(IvMode::Plain64, 512, u64::MAX, false, &[]);
    assert_eq!(g.affine_run_len(0, 100), 1);
    let g = gen_for(IvMode::Plain64, 512, 0, false, &[]);
    assert_eq!(g.affine_run_len(0, u64::MAX), u64::MAX);
}

#[test]
fn other_modes_never_affine() {
    for m in [
        IvMode::Plain64Be,
        IvMode::EssivSha256,
        IvMode::Benbi,
        IvMode::Null,
        IvMode::Eboiv,
    ] {
        let g = gen_for(m, 512, 0, false, &key64());
        assert_eq!(g.affine_step(), None);
        assert_eq!(g.affine_run_len(0, 10), 0);
        assert_eq!(g.affine(0, 1), None);
    }
}

#[test]
fn step_8_matches_plain64_of_512_byte_units() {
    let key = key64();
    let xts = XtsAes256::new(&key).unwrap();
    let g = gen_for(IvMode::Plain64, 4096, 40, false, &key);
    for i in 0..5 {
        assert_eq!(g.iv(&xts, i).unwrap(), Iv::plain64(40 + 8 * i));
    }
    let g = gen_for(IvMode::Plain64, 4096, 40, true, &key);
    for i in 0..5 {
        assert_eq!(g.iv(&xts, i).unwrap(), Iv::plain64(5 + i));
    }
}

#[test]
fn length_errors_leave_buffer_alone() {
    let key = key64();
    let xts = XtsAes256::new(&key).unwrap();
    let g = gen_for(IvMode::Plain64, 1024, 0, false, &key);
    let mut buf = vec![9u8; 1536];
    let err = g.encrypt(&xts, 0, &mut buf).unwrap_err();
    assert_eq!(
        err,
        Error::Length {
            len: 1536,
            sector_size: 1024
        }
    );
    assert!(err.to_string().contains("512 bytes left over"));
    assert!(buf.iter().all(|&b| b == 9));
    assert!(g.decrypt(&xts, 0, &mut []).is_err());
}

fn per_sector<C: DataUnitCipher<Iv = Iv>>(
    g: &IvGenerator,
    c: &C,
    first: u64,
    buf: &mut [u8],
    enc: bool,
) {
    let ss = g.geometry().sector_size() as usize;
    for (i, sector) in buf.chunks_mut(ss).enumerate() {
        let iv = g.iv(c, first.wrapping_add(i as u64)).unwrap();
        if enc {
            c.encrypt_unit(iv, sector).unwrap();
        } else {
            c.decrypt_unit(iv, sector).unwrap();
        }
    }
}

fn offsets_near() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..4096,
        ((1u64 << 32) - 300)..((1u64 << 32) + 50),
        ((1u64 << 35) - 2400)..((1u64 << 35) + 50),
        (u64::MAX - 2400)..=u64::MAX,
        any::<u64>(),
    ]
}

#[allow(clippy::too_many_arguments)]
fn check_batched<C: DataUnitCipher<Iv = Iv>>(
    c: &C,
    mode: IvMode,
    ss: u32,
    off: u64,
    large: bool,
    first: u64,
    count: usize,
    seed: u8,
    key: &[u8],
) -> Result<(), TestCaseError> {
    let g = gen_for(mode, ss, off, large, key);
    let data: Vec<u8> = (0..count * ss as usize)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect();

    let mut want = data.clone();
    per_sector(&g, c, first, &mut want, true);
    let mut got = data.clone();
    g.encrypt(c, first, &mut got).unwrap();
    prop_assert_eq!(&got, &want);

    g.decrypt(c, first, &mut got).unwrap();
    prop_assert_eq!(&got, &data);

    // A run split anywhere gives the same bytes.
    let cut = (usize::from(seed) % count) * ss as usize;
    let mut split = data.clone();
    let (a, b) = split.split_at_mut(cut);
    if !a.is_empty() {
        g.encrypt(c, first, a).unwrap();
    }
    g.encrypt(c, first.wrapping_add((cut / ss as usize) as u64), b)
        .unwrap();
    prop_assert_eq!(&split, &want);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(sample::proptest_cases("batched_equals_per_sector", 96)))]

    #[test]
    fn batched_equals_per_sector(
        cbc in any::<bool>(),
        mode in prop::sample::select(IvMode::ALL.to_vec()),
        ss in prop::sample::select(SECTOR_SIZES.to_vec()),
        large in any::<bool>(),
        raw_off in offsets_near(),
        first in prop_oneof![0u64..8, any::<u64>()],
        count in 1usize..140,
        seed in any::<u8>(),
    ) {
        let key = key64();
        let d = u64::from(ss / 512);
        let off = raw_off - raw_off % d;
        if cbc {
            let c = AesCbc256::new(&key[..32]).unwrap();
            check_batched(&c, mode, ss, off, large, first, count, seed, &key[..32])?;
        } else {
            let c = XtsAes256::new(&key).unwrap();
            check_batched(&c, mode, ss, off, large, first, count, seed, &key)?;
        }
    }
}

#[test]
#[cfg(feature = "rayon")]
fn parallel_equals_sequential() {
    let key = key64();
    let xts = XtsAes256::new(&key).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    for mode in IvMode::ALL {
        for (ss, off, large) in [
            (512, (1u64 << 32) - 700, false),
            (4096, (1u64 << 32) - 800, false),
            (4096, u64::MAX - 7 - 8 * 300, true),
        ] {
            let g = gen_for(mode, ss, off, large, &key);
            let data: Vec<u8> = (0..(3 << 20)).map(|i: usize| (i % 251) as u8).collect();
            let mut want = data.clone();
            per_sector(&g, &xts, 1, &mut want, true);
            let mut got = data.clone();
            pool.install(|| g.par_encrypt(&xts, 1, &mut got)).unwrap();
            assert_eq!(got, want, "{mode} {ss}");
            pool.install(|| g.par_decrypt(&xts, 1, &mut got)).unwrap();
            assert_eq!(got, data);
            let cbc = AesCbc128::new(&key[..16]).unwrap();
            let mut want = data.clone();
            per_sector(&g, &cbc, 1, &mut want, true);
            let mut got = data.clone();
            pool.install(|| g.par_crypt(Direction::Encrypt, &cbc, 1, &mut got))
                .unwrap();
            assert_eq!(got, want, "cbc {mode} {ss}");
        }
    }
}

/// A cipher that records how it is called: consecutive-IV batches (first
/// IV, step, units), explicit-IV batches (their IVs and unit size) and
/// single units.
struct Recorder {
    inner: XtsAes128,
    batches: std::sync::Mutex<Vec<(Iv, u64, usize)>>,
    listed: std::sync::Mutex<Vec<(Vec<Iv>, usize)>>,
    singles: std::sync::atomic::AtomicUsize,
}

impl DataUnitCipher for Recorder {
    type Iv = Iv;
    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), mdu_xts::Error> {
        self.singles
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.encrypt(iv, unit)
    }

    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), mdu_xts::Error> {
        self.singles
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.decrypt(iv, unit)
    }

    fn crypt_units(
        &self,
        dir: Direction,
        first_iv: Iv,
        iv_step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), mdu_xts::Error> {
        self.batches
            .lock()
            .unwrap()
            .push((first_iv, iv_step, buf.len() / unit.get()));
        self.inner.crypt_units(dir, first_iv, iv_step, unit, buf)
    }

    fn crypt_units_with_ivs(
        &self,
        dir: Direction,
        ivs: &[Iv],
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), mdu_xts::Error> {
        self.listed.lock().unwrap().push((ivs.to_vec(), unit.get()));
        self.inner.crypt_units_with_ivs(dir, ivs, unit, buf)
    }
}

fn recorder() -> Recorder {
    Recorder {
        inner: XtsAes128::new(&(0..32u8).collect::<Vec<_>>()).unwrap(),
        batches: std::sync::Mutex::new(Vec::new()),
        listed: std::sync::Mutex::new(Vec::new()),
        singles: std::sync::atomic::AtomicUsize::new(0),
    }
}

#[test]
fn affine_runs_are_one_call_and_other_modes_go_in_explicit_iv_batches() {
    let count = |r: &Recorder| r.singles.load(std::sync::atomic::Ordering::Relaxed);
    // plain, 4 KiB sectors without iv_large_sectors, iv_sector crossing 2^32
    // after 5 sectors: two batches with step 8, the second restarting at IV 0.
    let g = gen_for(IvMode::Plain, 4096, (1 << 32) - 40, false, &[]);
    let r = recorder();
    let mut buf = vec![0u8; 12 * 4096];
    g.encrypt(&r, 0, &mut buf).unwrap();
    assert_eq!(
        *r.batches.lock().unwrap(),
        [(Iv::plain((1 << 32) - 40), 8, 5), (Iv::ZERO, 8, 7)]
    );
    assert_eq!(count(&r), 0);
    assert!(r.listed.lock().unwrap().is_empty());

    // plain64 across the 2^64 wrap of cc_sector: batch, wrap, batch.
    let g = gen_for(IvMode::Plain64, 512, u64::MAX - 2, false, &[]);
    let r = recorder();
    let mut buf = vec![0u8; 10 * 512];
    g.encrypt(&r, 0, &mut buf).unwrap();
    assert_eq!(
        *r.batches.lock().unwrap(),
        [(Iv::plain64(u64::MAX - 2), 1, 3), (Iv::ZERO, 1, 7)]
    );

    // A run of one sector before the wrap goes through the one-unit path.
    let g = gen_for(IvMode::Plain, 512, (1 << 32) - 1, false, &[]);
    let r = recorder();
    let mut buf = vec![0u8; 4 * 512];
    g.encrypt(&r, 0, &mut buf).unwrap();
    assert_eq!(*r.batches.lock().unwrap(), [(Iv::ZERO, 1, 3)]);
    assert_eq!(count(&r), 1);

    // Never affine: explicit-IV batches of 64 sectors, the IVs those of one
    // sector at a time (eboiv's own IVs are one more batch of 16-byte units
    // per batch of sectors).
    for mode in [
        IvMode::Plain64Be,
        IvMode::EssivSha256,
        IvMode::Benbi,
        IvMode::Null,
        IvMode::Eboiv,
    ] {
        let g = gen_for(mode, 1024, 0, false, &key64());
        let r = recorder();
        let mut buf = vec![0u8; 150 * 1024];
        g.encrypt(&r, 7, &mut buf).unwrap();
        assert!(r.batches.lock().unwrap().is_empty(), "{mode}");
        let listed = r.listed.lock().unwrap();
        let sectors: Vec<&(Vec<Iv>, usize)> = listed.iter().filter(|(_, u)| *u == 1024).collect();
        let sizes: Vec<usize> = sectors.iter().map(|(ivs, _)| ivs.len()).collect();
        assert_eq!(sizes, [64, 64, 22], "{mode}");
        let ivs: Vec<Iv> = sectors.iter().flat_map(|(ivs, _)| ivs.clone()).collect();
        let want: Vec<Iv> = (0..150).map(|i| g.iv(&r.inner, 7 + i).unwrap()).collect();
        assert_eq!(ivs, want, "{mode}");
        let iv_batches = listed.iter().filter(|(_, u)| *u == 16).count();
        assert_eq!(
            iv_batches,
            if mode == IvMode::Eboiv { 3 } else { 0 },
            "{mode}"
        );
        assert_eq!(count(&r), 0, "{mode}");
    }

    // A last batch of one sector goes through the one-unit path.
    let g = gen_for(IvMode::Benbi, 512, 0, false, &[]);
    let r = recorder();
    let mut buf = vec![0u8; 65 * 512];
    g.encrypt(&r, 0, &mut buf).unwrap();
    assert_eq!(r.listed.lock().unwrap().len(), 1);
    assert_eq!(count(&r), 1);
}

/// The CBC-ESSIV vectors of the reference (derived with cryptsetup's
/// user-space implementation of the dm-crypt sector cipher).
#[test]
fn cbc_essiv_reference_vectors() {
    let key: Vec<u8> = (0..32u8).collect();
    let cbc = AesCbc256::new(&key).unwrap();
    let g = gen_for(IvMode::EssivSha256, 512, 0, false, &key);
    assert_eq!(
        hex(&g.iv(&cbc, 0).unwrap().0),
        "a73d5fb0e4041090ca6dc1b820cdaf51"
    );
    assert_eq!(
        hex(&g.iv(&cbc, 1).unwrap().0),
        "59a0803f448bdf6d3d3de63feaccd58a"
    );
    assert_eq!(
        hex(&g.iv(&cbc, 8).unwrap().0),
        "34d7e09b76f1336e9ff7d7c4e0332ba5"
    );
    let mut sector = vec![0u8; 512];
    g.encrypt(&cbc, 0, &mut sector).unwrap();
    assert_eq!(hex(&sector[..16]), "c8ef8605d0e350603c586285d3b0b0e6");
    assert_eq!(
        hex(&sha256(&sector)),
        "9a7611f7a4e022a3f49350c534c7651d982c5cfc1a85d6cae1cfb67d6f07b15c"
    );
    // Two zero 4096-byte sectors: sector 1 has IV 8, or 1 with large sectors.
    for (large, want) in [
        (false, "a7925e82eafe9715eee546bbf5d17f1d"),
        (true, "437ae8cf520861f16a0680407b640de9"),
    ] {
        let g = gen_for(IvMode::EssivSha256, 4096, 0, large, &key);
        let mut two = vec![0u8; 2 * 4096];
        g.encrypt(&cbc, 0, &mut two).unwrap();
        assert_eq!(hex(&two[4096..4112]), want, "large {large}");
    }
    // AES-128-CBC: the salt is SHA-256 of the 16-byte key, still AES-256.
    let key16: Vec<u8> = (0..16u8).collect();
    let g = gen_for(IvMode::EssivSha256, 512, 0, false, &key16);
    let cbc = AesCbc128::new(&key16).unwrap();
    assert_eq!(
        hex(&g.iv(&cbc, 0).unwrap().0),
        "ae0e4eeac063684505721b0643b24ae3"
    );
    // XTS-ESSIV: the salt hashes both halves of the 64-byte key.
    let key64: Vec<u8> = (0..64u8).collect();
    let g = gen_for(IvMode::EssivSha256, 512, 0, false, &key64);
    let xts = XtsAes256::new(&key64).unwrap();
    assert_eq!(
        hex(&g.iv(&xts, 0).unwrap().0),
        "453e15b30d68309fb87e144290d6ea4a"
    );
}

/// eboiv on CBC is the raw encryption of the byte offset (a CBC encryption
/// of a zero block with the offset as IV), checked with OpenSSL ECB.
#[test]
fn cbc_eboiv_is_the_encrypted_byte_offset() {
    for len in [16usize, 32] {
        let key: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(7)).collect();
        let ecb = if len == 16 {
            Cipher::aes_128_ecb()
        } else {
            Cipher::aes_256_ecb()
        };
        for (ss, large) in [(512u32, false), (4096, false), (4096, true)] {
            let g = gen_for(IvMode::Eboiv, ss, 64, large, &key);
            let mut ivs = vec![Iv::ZERO; 70];
            if len == 16 {
                g.ivs(&AesCbc128::new(&key).unwrap(), 3, &mut ivs).unwrap();
            } else {
                g.ivs(&AesCbc256::new(&key).unwrap(), 3, &mut ivs).unwrap();
            }
            for (i, iv) in ivs.iter().enumerate() {
                let s = g.geometry().iv_sector(3 + i as u64);
                let mut block = [0u8; 16];
                block[..8].copy_from_slice(&(s * u64::from(ss)).to_le_bytes());
                let mut c = Crypter::new(ecb, Mode::Encrypt, &key, None).unwrap();
                c.pad(false);
                let mut out = [0u8; 32];
                let n = c.update(&block, &mut out).unwrap();
                assert_eq!(n, 16);
                assert_eq!(iv.0, out[..16], "{len} {ss} {large} sector {i}");
            }
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

mod block_ciphers;
mod wide_block;
