//! dm-crypt specs over the other block ciphers (`serpent-xts-plain64`,
//! `twofish-cbc-essiv:sha256`, `camellia-xts-benbi`, `sm4-cbc-eboiv`, ...):
//! every row, key length and IV mode of `SUPPORTED` for Serpent, Twofish,
//! Camellia and SM4, at three geometries, against an oracle written here
//! from the kernel's rules: the IVs computed sector by sector as
//! drivers/md/dm-crypt.c and crypto/essiv.c compute them, XTS from the
//! xts-mode crate and CBC chained by hand, both over the same RustCrypto
//! block cipher. OpenSSL checks Camellia-CBC and SM4-CBC once more.
//!
//! cryptsetup cannot check these specs on a kernel without the Serpent,
//! Twofish, Camellia or SM4 modules, or without device-mapper: the oracle
//! here is the independent check.

use mdu_core::testing::sample;
use mdu_dmcrypt::{
    ChainMode, Cipher, CipherSpec, Direction, Geometry, IvMode, SUPPORTED, SectorCipher, WeakKeys,
};
use serpent::cipher::{BlockCipherEncrypt, KeyInit};
use sha2::{Digest, Sha256};
use xts_mode::Xts128;

/// The geometries: 512-byte sectors; 4 KiB sectors with an IV offset and
/// IVs counted in 512-byte sectors; and the same counted in 4 KiB sectors.
const GEOMETRIES: [(u32, u64, bool); 3] = [(512, 0, false), (4096, 24, false), (4096, 24, true)];

/// Sectors per request, and the index of the first.
const SECTORS: u64 = 3;
const FIRST: u64 = 5;

fn key(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(53).wrapping_add(seed))
        .collect()
}

/// The dm-crypt IV sector of sector `index` of the mapping.
fn iv_sector(g: (u32, u64, bool), index: u64) -> u64 {
    let (ss, offset, large) = g;
    let per = u64::from(ss / 512);
    let cc = offset + index * per;
    if large { cc / per } else { cc }
}

/// The 16-byte IV of `mode` for IV sector `s`, before `essiv` and `eboiv`
/// encrypt it (dm-crypt's `crypt_iv_*_gen`).
fn plain_iv(mode: IvMode, s: u64, sector_size: u32) -> [u8; 16] {
    let mut iv = [0u8; 16];
    match mode {
        IvMode::Plain => iv[..4].copy_from_slice(&(s as u32).to_le_bytes()),
        IvMode::Plain64 | IvMode::EssivSha256 => iv[..8].copy_from_slice(&s.to_le_bytes()),
        IvMode::Plain64Be => iv[8..].copy_from_slice(&s.to_be_bytes()),
        // A 16-byte block: the sector's count of blocks, from 1.
        IvMode::Benbi => iv[8..].copy_from_slice(&((s << 5) + 1).to_be_bytes()),
        IvMode::Null => {}
        IvMode::Eboiv => iv[..8].copy_from_slice(&(s * u64::from(sector_size)).to_le_bytes()),
    }
    iv
}

/// One 16-byte block cipher under its key, to build the oracle from.
trait Block {
    fn encrypt(&self, block: [u8; 16]) -> [u8; 16];
}

impl<C: BlockCipherEncrypt<BlockSize = serpent::cipher::consts::U16>> Block for C {
    fn encrypt(&self, block: [u8; 16]) -> [u8; 16] {
        let mut b = block.into();
        self.encrypt_block(&mut b);
        b.into()
    }
}

/// The block cipher operations of one RustCrypto cipher type: a cipher of
/// a key slice, the ESSIV cipher of the 32-byte salt (the type's 256-bit
/// variant), and xts-mode over the type for a whole XTS key.
#[derive(Clone, Copy)]
struct Ops {
    block: fn(&[u8]) -> Box<dyn Block>,
    essiv: fn(&[u8; 32]) -> Box<dyn Block>,
    xts: fn(&[u8], &mut [u8], [u8; 16]),
}

/// The [`Ops`] of cipher type `$c` and its 256-bit variant `$essiv`.
macro_rules! ops {
    ($c:ty, $essiv:ty) => {
        Ops {
            block: |k| Box::new(<$c>::new_from_slice(k).unwrap()),
            essiv: |salt| Box::new(<$essiv>::new_from_slice(salt).unwrap()),
            xts: |k, sector, tweak| {
                let (k1, k2) = k.split_at(k.len() / 2);
                Xts128::<$c>::new(
                    <$c>::new_from_slice(k1).unwrap(),
                    <$c>::new_from_slice(k2).unwrap(),
                )
                .encrypt_sector(sector, tweak.into())
            },
        }
    };
}

/// `data`, whole sectors from sector `first` of a mapping of geometry `g`,
/// encrypted as dm-crypt encrypts them with `spec` and `key`.
fn oracle_encrypt(
    ops: Ops,
    spec: CipherSpec,
    key: &[u8],
    g: (u32, u64, bool),
    first: u64,
    data: &mut [u8],
) {
    let salt: [u8; 32] = Sha256::digest(key).into();
    for (i, sector) in data.chunks_exact_mut(g.0 as usize).enumerate() {
        let s = iv_sector(g, first + i as u64);
        let mut iv = plain_iv(spec.iv_mode(), s, g.0);
        match (spec.iv_mode(), spec.chain()) {
            (IvMode::EssivSha256, _) => iv = (ops.essiv)(&salt).encrypt(iv),
            // The volume's own cipher on one zero block, the byte offset
            // its IV.
            (IvMode::Eboiv, ChainMode::Xts) => {
                let mut zero = [0u8; 16];
                (ops.xts)(key, &mut zero, iv);
                iv = zero;
            }
            (IvMode::Eboiv, _) => iv = (ops.block)(key).encrypt(iv),
            _ => {}
        }
        if spec.chain() == ChainMode::Xts {
            (ops.xts)(key, sector, iv);
            continue;
        }
        let c = (ops.block)(key);
        let mut prev = iv;
        for b in sector.chunks_exact_mut(16) {
            let mut x = [0u8; 16];
            for (x, (b, p)) in x.iter_mut().zip(b.iter().zip(prev)) {
                *x = b ^ p;
            }
            prev = c.encrypt(x);
            b.copy_from_slice(&prev);
        }
    }
}

/// Every row of `cipher` in `SUPPORTED`, every key length and IV mode, at
/// every geometry: SectorCipher's bytes are the oracle's (`ops` of the
/// spec and key), both ways. Returns the number of cases; under a
/// user-mode emulator every 5th runs (`mdu_core::testing::sample`).
fn every_spec_of(cipher: Cipher, ops: impl Fn(CipherSpec, usize) -> Ops) -> usize {
    let mut cases = Vec::new();
    for row in SUPPORTED.iter().filter(|r| r.cipher == cipher) {
        for &mode in row.iv_modes {
            let spec = CipherSpec::parse(&format!("{}-{mode}", row.name)).unwrap();
            assert_eq!((spec.cipher(), spec.chain()), (cipher, row.chain));
            assert_eq!(
                CipherSpec::with_cipher(cipher, row.chain, mode).unwrap(),
                spec
            );
            for &len in row.key_lens {
                cases.extend(GEOMETRIES.map(|g| (spec, len, g)));
            }
        }
    }
    let test = format!("{}_specs_match_the_oracle", cipher.name());
    let stride = sample::emulated_stride(&test, cases.len(), "cases", 5);
    for &(spec, len, g) in cases.iter().step_by(stride) {
        let key = key(len, len as u8 ^ spec.iv_mode() as u8);
        let geometry = Geometry::new(g.0, g.1, g.2).unwrap();
        let c = SectorCipher::new(spec, &key, geometry, WeakKeys::Refuse).unwrap();
        let plain: Vec<u8> = (0..SECTORS as usize * g.0 as usize)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let mut want = plain.clone();
        oracle_encrypt(ops(spec, len), spec, &key, g, FIRST, &mut want);
        let mut got = plain.clone();
        c.crypt(Direction::Encrypt, FIRST, &mut got).unwrap();
        assert!(got == want, "{spec}, {len}-byte key, {g:?}: encrypt");
        c.crypt(Direction::Decrypt, FIRST, &mut got).unwrap();
        assert!(got == plain, "{spec}, {len}-byte key, {g:?}: decrypt");
    }
    cases.len()
}

#[test]
fn serpent_specs_match_the_oracle() {
    let n = every_spec_of(Cipher::Serpent, |_, _| {
        ops!(serpent::Serpent, serpent::Serpent)
    });
    // 7 IV modes x 3 key lengths x 2 chaining modes x 3 geometries.
    assert_eq!(n, 7 * 3 * 2 * 3);
}

#[test]
fn twofish_specs_match_the_oracle() {
    let n = every_spec_of(Cipher::Twofish, |_, _| {
        ops!(twofish::Twofish, twofish::Twofish)
    });
    assert_eq!(n, 7 * 3 * 2 * 3);
}

/// Camellia has one type per key size; its ESSIV cipher is always
/// Camellia-256.
#[test]
fn camellia_specs_match_the_oracle() {
    let n = every_spec_of(Cipher::Camellia, |spec, len| {
        let per_key = if spec.chain() == ChainMode::Xts {
            len / 2
        } else {
            len
        };
        match per_key {
            16 => ops!(camellia::Camellia128, camellia::Camellia256),
            24 => ops!(camellia::Camellia192, camellia::Camellia256),
            _ => ops!(camellia::Camellia256, camellia::Camellia256),
        }
    });
    assert_eq!(n, 7 * 3 * 2 * 3);
}

/// SM4 has 128-bit keys only, so no ESSIV (the kernel's `essiv` cannot key
/// SM4 with a 32-byte hash): six IV modes.
#[test]
fn sm4_specs_match_the_oracle() {
    // The ESSIV slot is never called.
    let n = every_spec_of(Cipher::Sm4, |_, _| ops!(sm4::Sm4, sm4::Sm4));
    assert_eq!(n, 6 * 2 * 3);
    let err = CipherSpec::parse("sm4-cbc-essiv:sha256").unwrap_err();
    assert!(err.to_string().contains("unknown IV mode"), "{err}");
}

/// OpenSSL's Camellia-CBC and SM4-CBC, a second oracle for the CBC rows:
/// one sector with its plain64 IV.
#[test]
fn camellia_and_sm4_cbc_match_openssl() {
    use openssl::symm::{Cipher as Ossl, Crypter, Mode};
    let cases: [(&str, Ossl, usize); 4] = [
        ("camellia-cbc-plain64", Ossl::camellia_128_cbc(), 16),
        ("camellia-cbc-plain64", Ossl::camellia_192_cbc(), 24),
        ("camellia-cbc-plain64", Ossl::camellia_256_cbc(), 32),
        ("sm4-cbc-plain64", Ossl::sm4_cbc(), 16),
    ];
    for (spec, ossl, len) in cases {
        let key = key(len, 9);
        let g = Geometry::new(512, 0, false).unwrap();
        let c = SectorCipher::new(spec.parse().unwrap(), &key, g, WeakKeys::Refuse).unwrap();
        let plain: Vec<u8> = (0..512).map(|i| (i % 253) as u8).collect();
        let mut got = plain.clone();
        c.crypt(Direction::Encrypt, 77, &mut got).unwrap();
        let mut iv = [0u8; 16];
        iv[..8].copy_from_slice(&77u64.to_le_bytes());
        let mut enc = Crypter::new(ossl, Mode::Encrypt, &key, Some(&iv)).unwrap();
        enc.pad(false);
        let mut want = vec![0u8; 512 + 16];
        let n = enc.update(&plain, &mut want).unwrap();
        assert_eq!(n, 512);
        assert!(got == want[..512], "{spec} {len}");
    }
}

/// A key length the row does not take is refused with the row's lengths,
/// and an XTS key with equal halves is weak for every cipher.
#[test]
fn key_rules_hold_for_every_cipher() {
    let g = Geometry::new(512, 0, false).unwrap();
    for spec in [
        "serpent-xts-plain64",
        "twofish-cbc-plain64",
        "camellia-xts-plain",
        "sm4-xts-null",
    ] {
        let spec: CipherSpec = spec.parse().unwrap();
        let err = SectorCipher::new(spec, &[1; 40], g, WeakKeys::Refuse).unwrap_err();
        assert!(err.to_string().contains(spec.cipher_name()), "{err}");
        if spec.chain() == ChainMode::Xts {
            let weak = vec![7u8; spec.default_key_len()];
            let err = SectorCipher::new(spec, &weak, g, WeakKeys::Refuse).unwrap_err();
            assert!(err.is_weak_key(), "{spec}: {err}");
            assert!(SectorCipher::new(spec, &weak, g, WeakKeys::Allow).is_ok());
        }
    }
}
