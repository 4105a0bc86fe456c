//! The wide-block specs dm-crypt hosts, `aes-hctr2-<ivmode>` and
//! `xchacha12,aes-adiantum-<ivmode>`, against the mdu-hctr2 and
//! mdu-adiantum ciphers driven by hand: one sector at a time, each under
//! the 32-byte IV dm-crypt builds for it (the mode's value at its end of an
//! `iv_size`-byte IV, zeros elsewhere), and the IV modes dm-crypt refuses
//! over 32-byte IVs refused here too.

use mdu_adiantum::Adiantum;
use mdu_dmcrypt::{
    CipherSpec, DataUnitCipher, Direction, Error, Geometry, IvGenerator, IvMode, SUPPORTED,
    SectorCipher, WeakKeys,
};
use mdu_hctr2::{Hctr2Aes128, Hctr2Aes256};
use mdu_xts::Iv;

/// The 32-byte IV dm-crypt gives the sector whose IV sector is `s`.
fn kernel_iv(mode: IvMode, s: u64) -> Iv<32> {
    let mut iv = [0u8; 32];
    match mode {
        IvMode::Plain => iv[..4].copy_from_slice(&(s as u32).to_le_bytes()),
        IvMode::Plain64 => iv[..8].copy_from_slice(&s.to_le_bytes()),
        IvMode::Plain64Be => iv[24..].copy_from_slice(&s.to_be_bytes()),
        IvMode::Null => {}
        other => panic!("{other} is not a wide-block IV mode"),
    }
    Iv(iv)
}

/// `buf` (whole sectors from sector `first` of a mapping of `geometry`)
/// encrypted one sector at a time under the kernel's IVs.
fn by_hand<C: DataUnitCipher<Iv = Iv<32>>>(
    cipher: &C,
    mode: IvMode,
    geometry: Geometry,
    first: u64,
    buf: &mut [u8],
) {
    let ss = geometry.sector_size() as usize;
    for (i, sector) in buf.chunks_exact_mut(ss).enumerate() {
        let s = geometry.iv_sector(first + i as u64);
        cipher.encrypt_unit(kernel_iv(mode, s), sector).unwrap();
    }
}

#[test]
fn every_wide_block_spec_gives_the_bytes_of_its_cipher_one_sector_at_a_time() {
    let geometries = [
        Geometry::new(512, 0, false).unwrap(),
        Geometry::new(4096, 8 * 1000, false).unwrap(),
        Geometry::new(4096, 8, true).unwrap(),
        // plain wraps its 32-bit counter inside the request.
        Geometry::new(512, (1 << 32) - 2, false).unwrap(),
    ];
    let wide: Vec<_> = SUPPORTED.iter().filter(|r| r.iv_len == 32).collect();
    assert_eq!(wide.len(), 2);
    for row in wide {
        for &len in row.key_lens {
            let key: Vec<u8> = (0..len as u8).map(|b| b.wrapping_mul(29) ^ 0x5c).collect();
            for &mode in row.iv_modes {
                let spec: CipherSpec = format!("{}-{mode}", row.name).parse().unwrap();
                assert_eq!(spec.iv_len(), 32);
                for g in geometries {
                    let c = SectorCipher::new(spec, &key, g, WeakKeys::Refuse).unwrap();
                    let ss = g.sector_size() as usize;
                    let plain: Vec<u8> = (0..5 * ss).map(|i| (i % 251) as u8).collect();
                    let mut got = plain.clone();
                    c.crypt(Direction::Encrypt, 3, &mut got).unwrap();
                    let mut want = plain.clone();
                    match (row.name, len) {
                        ("aes-hctr2", 16) => {
                            by_hand(&Hctr2Aes128::new(&key).unwrap(), mode, g, 3, &mut want)
                        }
                        ("aes-hctr2", _) => {
                            by_hand(&Hctr2Aes256::new(&key).unwrap(), mode, g, 3, &mut want)
                        }
                        _ => by_hand(&Adiantum::new(&key).unwrap(), mode, g, 3, &mut want),
                    }
                    assert!(got == want, "{spec} key {len} {g:?}");
                    c.crypt(Direction::Decrypt, 3, &mut got).unwrap();
                    assert!(got == plain, "{spec} key {len} {g:?}: decrypt");
                }
            }
        }
    }
}

#[test]
fn kernel_spellings_parse_and_print_back() {
    for text in [
        "aes-hctr2-plain64",
        "aes-hctr2-plain64be",
        "xchacha12,aes-adiantum-plain64",
        "xchacha12,aes-adiantum-null",
    ] {
        assert_eq!(text.parse::<CipherSpec>().unwrap().to_string(), text);
    }
    let spec: CipherSpec = "XCHACHA12,AES-ADIANTUM-plain".parse().unwrap();
    assert_eq!(spec.to_string(), "xchacha12,aes-adiantum-plain");
    assert_eq!(spec.key_lens(), [32]);
    assert!(matches!(
        "xchacha20,aes-adiantum-plain64".parse::<CipherSpec>(),
        Err(Error::UnsupportedCipher { .. })
    ));
}

#[test]
fn iv_modes_that_need_one_cipher_block_are_refused_over_32_byte_ivs() {
    for spec in ["aes-hctr2", "xchacha12,aes-adiantum"] {
        for mode in ["essiv:sha256", "eboiv", "benbi"] {
            let err = format!("{spec}-{mode}").parse::<CipherSpec>().unwrap_err();
            let Error::UnknownIvMode { supported, .. } = &err else {
                panic!("{spec}-{mode}: {err}");
            };
            assert_eq!(supported, &IvMode::WIDE);
            assert!(
                err.to_string().ends_with("plain, plain64, plain64be, null"),
                "{err}"
            );
        }
    }
    // The generator, driven by hand over a 32-byte-IV cipher, refuses them
    // too, with the buffer unchanged.
    let key = [9u8; 32];
    let adiantum = Adiantum::new(&key).unwrap();
    let g = Geometry::new(512, 0, false).unwrap();
    for mode in [IvMode::EssivSha256, IvMode::Eboiv, IvMode::Benbi] {
        let ivgen = IvGenerator::new(mode, g, &key).unwrap();
        let mut buf = vec![4u8; 1024];
        let err = ivgen.encrypt(&adiantum, 0, &mut buf).unwrap_err();
        assert_eq!(err, Error::IvWidth { mode, len: 32 });
        assert!(err.to_string().contains("16-byte IVs only"), "{err}");
        assert!(buf.iter().all(|&b| b == 4));
        assert!(ivgen.iv(&adiantum, 0).is_err());
    }
}
