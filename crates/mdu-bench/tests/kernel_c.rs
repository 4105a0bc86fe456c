//! The C baselines must encode exactly like RFC 4648 base64url without
//! padding (checked against the `base64` crate), or the report would
//! compare mdu with something that does other work.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mdu_bench::kernel_c;

#[test]
fn c_encoders_match_the_base64_crate() {
    let data: Vec<u8> = (0..300u32)
        .map(|i| (i.wrapping_mul(197) ^ (i >> 3)) as u8)
        .collect();
    for len in 0..=data.len() {
        let src = &data[..len];
        let want = URL_SAFE_NO_PAD.encode(src);
        let mut out = vec![0u8; kernel_c::encoded_len(len)];
        assert_eq!(kernel_c::bitstream_encode(src, &mut out), Some(want.len()));
        assert_eq!(out, want.as_bytes(), "bitstream, len {len}");
        out.fill(0);
        assert_eq!(kernel_c::block_encode(src, &mut out), Some(want.len()));
        assert_eq!(out, want.as_bytes(), "block, len {len}");
    }
}

#[test]
fn c_encoders_refuse_a_short_output() {
    let mut out = [0u8; 5];
    assert_eq!(kernel_c::bitstream_encode(b"abcdef", &mut out), None);
    assert_eq!(kernel_c::block_encode(b"abcdef", &mut out), None);
    assert_eq!(out, [0u8; 5]);
}

#[test]
fn the_aes_bound_is_real_aes_ecb() {
    use aes::cipher::{BlockCipherEncrypt, KeyInit};
    use mdu_bench::bound::{AesBound, ecb_encrypt, expand_key, runs};

    let plain: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
    for key in [vec![0x42u8; 16], (0..32u8).collect::<Vec<u8>>()] {
        let mut want = plain.clone();
        macro_rules! reference {
            ($aes:ty) => {{
                let c = <$aes>::new_from_slice(&key).unwrap();
                for block in want.chunks_exact_mut(16) {
                    c.encrypt_block(block.try_into().unwrap());
                }
            }};
        }
        if key.len() == 16 {
            reference!(aes::Aes128);
        } else {
            reference!(aes::Aes256);
        }
        let rk = expand_key(&key);
        for how in [AesBound::Vaes512, AesBound::Vaes256, AesBound::AesNi] {
            let mut buf = plain.clone();
            if !runs(how) {
                assert!(!ecb_encrypt(how, &rk, &mut buf));
                assert_eq!(buf, plain);
                continue;
            }
            assert!(ecb_encrypt(how, &rk, &mut buf));
            assert_eq!(buf, want, "{how:?}, {}-byte key", key.len());
        }
    }
}
