//! base64url without padding (fscrypt's encoding): every mdu backend against
//! the `base64` crate (scalar and SIMD engines), `base64-simd`,
//! `base64-turbo`, the kernel's two C encoders (the 2021 bit-stream one and
//! the 3-byte block one that replaced it), and memcpy of the same bytes as
//! the ceiling; and 64 KiB through other alphabets.
//!
//! ```
//! let mut g = mdu_bench::registry::base64::sizes(true, &[32]);
//! let case = g.cases.remove(0)().expect("every implementation checked");
//! assert_eq!(case.name, "32 bytes");
//! ```

use std::hint::black_box;
use std::rc::Rc;

use base64::Engine as _;
use base64::engine::general_purpose::{GeneralPurpose, NO_PAD};
use base64::engine::{DecodePaddingMode, GeneralPurposeConfig, Simd};
use mdu_base64::{Alphabet, Backend, Engine, Padding, URL_SAFE_NO_PAD};

use super::{Case, Group, Imp, Kind, check};
use crate::buffer::Buf;
use crate::kernel_c;

/// fscrypt's name sizes: raw bytes of short names, 189 (the largest no-key
/// name) and 252.
pub const SMALL: [usize; 4] = [32, 64, 189, 252];
/// 1 KiB, 64 KiB (in L2) and 1 MiB.
pub const BULK: [usize; 3] = [1024, 64 << 10, 1 << 20];

fn strict() -> GeneralPurposeConfig {
    NO_PAD
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(false)
}

/// Where in a page the outputs of a case start: one offset for every
/// implementation of the case (a store split over two cache lines, or a
/// store 4 KiB away from a load, costs the same to all of them), varied
/// from case to case so that no case is timed only on aligned memory.
fn out_offset(n: usize) -> usize {
    (n.wrapping_mul(2_654_435_761) >> 7) % 4096
}

/// Encoding (`encode`) or decoding of each of `sizes` raw bytes: every mdu
/// backend, the peers and memcpy. Group `base64-<encode|decode>-<small|bulk>`
/// (small: sizes under 1 KiB).
///
/// ```
/// let g = mdu_bench::registry::base64::sizes(false, &mdu_bench::registry::base64::BULK);
/// assert_eq!(g.name, "base64-decode-bulk");
/// ```
pub fn sizes(encode: bool, sizes: &[usize]) -> Group {
    let dir = if encode { "encode" } else { "decode" };
    let class = if sizes.iter().all(|&n| n < 1024) {
        "small"
    } else {
        "bulk"
    };
    let mut group = Group::new(format!("base64-{dir}-{class}"), false);
    for &n in sizes {
        group = group.case(move || {
            if encode {
                encode_case(n)
            } else {
                decode_case(n)
            }
        });
    }
    group
}

fn encode_case(n: usize) -> Result<Case, String> {
    let gp = GeneralPurpose::new(&base64::alphabet::URL_SAFE, strict());
    let simd = Simd::url_safe(strict());
    let bsimd = base64_simd::URL_SAFE_NO_PAD;
    let turbo = base64_turbo::URL_SAFE_NO_PAD;
    let input = Rc::new(Buf::random(n, n as u64));
    let src = input.bytes();
    let want = gp.encode(src);
    let elen = want.len();
    let at = out_offset(n);
    let outs: Vec<Buf> = (0..10).map(|i| Buf::random_at(elen, 100 + i, at)).collect();

    // Check every contestant once before timing.
    let mut engines = Vec::new();
    for &b in Backend::available() {
        let e = URL_SAFE_NO_PAD.with_backend(b).map_err(|e| e.to_string())?;
        let mut o = vec![0u8; elen];
        e.encode_slice(src, &mut o).map_err(|e| e.to_string())?;
        check(&format!("mdu {b:?} encode"), &o, want.as_bytes())?;
        engines.push((b, e));
    }
    let mut o = vec![0u8; elen];
    check(
        "base64 Simd encode",
        simd.encode(src).as_bytes(),
        want.as_bytes(),
    )?;
    check(
        "base64-simd encode",
        bsimd.encode(src, base64_simd::Out::from_slice(&mut o)),
        want.as_bytes(),
    )?;
    let w = turbo.encode_slice(src, &mut o).map_err(|e| e.to_string())?;
    check("base64-turbo encode", &o[..w], want.as_bytes())?;
    kernel_c::bitstream_encode(src, &mut o).ok_or("C output too small")?;
    check("kernel C bit-stream", &o, want.as_bytes())?;
    kernel_c::block_encode(src, &mut o).ok_or("C output too small")?;
    check("kernel C block", &o, want.as_bytes())?;

    let mut it = outs.into_iter();
    let mut next = || it.next().expect("enough output buffers");
    let mut case = Case::new(format!("{n} bytes"), n, Some(n as f64));
    for (b, e) in engines {
        let (mut o, src) = (next(), Rc::clone(&input));
        case = case.imp(Imp::new(
            format!("mdu {}", b.name()),
            Kind::Mdu,
            move || {
                black_box(
                    e.encode_slice(black_box(src.bytes()), o.bytes_mut())
                        .expect("room"),
                );
            },
        ));
    }
    let (mut o1, mut o2, mut o3, mut o4, mut o5, mut o6, mut o7) =
        (next(), next(), next(), next(), next(), next(), next());
    let [s1, s2, s3, s4, s5, s6] = [(); 6].map(|()| Rc::clone(&input));
    Ok(case
        .imp(Imp::new("base64 (scalar)", Kind::Peer, move || {
            black_box(
                gp.encode_slice(black_box(s1.bytes()), o1.bytes_mut())
                    .expect("room"),
            );
        }))
        .imp(Imp::new("base64 (Simd)", Kind::Peer, move || {
            black_box(
                simd.encode_slice(black_box(s2.bytes()), o2.bytes_mut())
                    .expect("room"),
            );
        }))
        .imp(Imp::new("base64-simd", Kind::Peer, move || {
            black_box(bsimd.encode(
                black_box(s3.bytes()),
                base64_simd::Out::from_slice(o3.bytes_mut()),
            ));
        }))
        .imp(Imp::new("base64-turbo", Kind::Peer, move || {
            black_box(
                turbo
                    .encode_slice(black_box(s4.bytes()), o7.bytes_mut())
                    .expect("room"),
            );
        }))
        .imp(Imp::new("kernel C bit-stream", Kind::Peer, move || {
            black_box(kernel_c::bitstream_encode(
                black_box(s5.bytes()),
                o4.bytes_mut(),
            ));
        }))
        .imp(Imp::new("kernel C 3-byte block", Kind::Peer, move || {
            black_box(kernel_c::block_encode(
                black_box(s6.bytes()),
                o5.bytes_mut(),
            ));
        }))
        .imp(Imp::new("memcpy", Kind::Bound, move || {
            // The encoded output (4n/3 bytes) always has room for the n raw
            // bytes.
            o6.bytes_mut()[..n].copy_from_slice(black_box(input.bytes()));
            black_box(&o6);
        })))
}

fn decode_case(n: usize) -> Result<Case, String> {
    let gp = GeneralPurpose::new(&base64::alphabet::URL_SAFE, strict());
    let simd = Simd::url_safe(strict());
    let bsimd = base64_simd::URL_SAFE_NO_PAD;
    let turbo = base64_turbo::URL_SAFE_NO_PAD;
    let raw = Rc::new(Buf::random(n, n as u64 ^ 0xdead));
    let text = gp.encode(raw.bytes());
    let mut text_buf = Buf::random(text.len(), 7);
    text_buf.bytes_mut().copy_from_slice(text.as_bytes());
    let text_buf = Rc::new(text_buf);
    let src = text_buf.bytes();
    let want = raw.bytes();
    let at = out_offset(n);
    let outs: Vec<Buf> = (0..8).map(|i| Buf::random_at(n, 200 + i, at)).collect();
    // base64-turbo wants room for its estimate, up to 2 bytes past the result.
    let mut turbo_out = Buf::random_at(turbo.decoded_len_estimate(src.len()), 208, at);

    let mut engines = Vec::new();
    for &b in Backend::available() {
        let e = URL_SAFE_NO_PAD.with_backend(b).map_err(|e| e.to_string())?;
        let mut o = vec![0u8; n];
        e.decode_slice(src, &mut o).map_err(|e| e.to_string())?;
        check(&format!("mdu {b:?} decode"), &o, want)?;
        engines.push((b, e));
    }
    let mut o = vec![0u8; n];
    check(
        "base64 decode",
        &gp.decode(src).map_err(|e| e.to_string())?,
        want,
    )?;
    check(
        "base64 Simd decode",
        &simd.decode(src).map_err(|e| e.to_string())?,
        want,
    )?;
    let got = bsimd
        .decode(src, base64_simd::Out::from_slice(&mut o))
        .map_err(|e| e.to_string())?;
    check("base64-simd decode", got, want)?;
    let mut o = vec![0u8; turbo_out.bytes().len()];
    let w = turbo.decode_slice(src, &mut o).map_err(|e| e.to_string())?;
    check("base64-turbo decode", &o[..w], want)?;

    let mut it = outs.into_iter();
    let mut next = || it.next().expect("enough output buffers");
    let mut case = Case::new(format!("{n} bytes"), n, Some(n as f64));
    for (b, e) in engines {
        let (mut o, src) = (next(), Rc::clone(&text_buf));
        case = case.imp(Imp::new(
            format!("mdu {}", b.name()),
            Kind::Mdu,
            move || {
                black_box(
                    e.decode_slice(black_box(src.bytes()), o.bytes_mut())
                        .expect("valid"),
                );
            },
        ));
    }
    let (mut o1, mut o2, mut o3, mut o4) = (next(), next(), next(), next());
    let [s1, s2, s3, s4] = [(); 4].map(|()| Rc::clone(&text_buf));
    Ok(case
        .imp(Imp::new("base64 (scalar)", Kind::Peer, move || {
            black_box(
                gp.decode_slice(black_box(s1.bytes()), o1.bytes_mut())
                    .expect("valid"),
            );
        }))
        .imp(Imp::new("base64 (Simd)", Kind::Peer, move || {
            black_box(
                simd.decode_slice(black_box(s2.bytes()), o2.bytes_mut())
                    .expect("valid"),
            );
        }))
        .imp(Imp::new("base64-simd", Kind::Peer, move || {
            black_box(
                bsimd
                    .decode(
                        black_box(s3.bytes()),
                        base64_simd::Out::from_slice(o3.bytes_mut()),
                    )
                    .expect("valid"),
            );
        }))
        .imp(Imp::new("base64-turbo", Kind::Peer, move || {
            black_box(
                turbo
                    .decode_slice(black_box(s4.bytes()), turbo_out.bytes_mut())
                    .expect("valid"),
            );
        }))
        .imp(Imp::new("memcpy", Kind::Bound, move || {
            o4.bytes_mut().copy_from_slice(black_box(raw.bytes()));
            black_box(&o4);
        })))
}

/// The alphabets of the alphabet tables: the three that differ only in
/// symbols 62 and 63, crypt(3) (runs in another order) and a fixed shuffle
/// of printable ASCII (no structure at all).
///
/// ```
/// assert_eq!(mdu_bench::registry::base64::alphabets().len(), 5);
/// ```
pub fn alphabets() -> Vec<(&'static str, Alphabet)> {
    let crypt = Alphabet::new(b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        .expect("crypt(3) alphabet");
    let mut pool: Vec<u8> = (b'!'..=b'~').filter(|&b| b != b'=').collect();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let shuffled: Vec<u8> = (0..64)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            pool.swap_remove((x % pool.len() as u64) as usize)
        })
        .collect();
    let shuffled =
        Alphabet::new(&shuffled.try_into().expect("64 symbols")).expect("shuffled alphabet");
    vec![
        ("RFC 4648 standard", Alphabet::STANDARD),
        ("RFC 4648 URL-safe", Alphabet::URL_SAFE),
        ("IMAP (RFC 3501)", Alphabet::IMAP),
        ("crypt(3)", crypt),
        ("shuffled printable ASCII", shuffled),
    ]
}

/// 64 KiB through every alphabet of [`alphabets`] (unpadded), in one
/// direction: every mdu backend and the `base64` crate's scalar engine (its
/// SIMD engine and `base64-simd` take only the RFC 4648 alphabets). Group
/// `base64-<encode|decode>-alphabets`.
///
/// ```
/// assert_eq!(mdu_bench::registry::base64::by_alphabet(true).cases.len(), 5);
/// ```
pub fn by_alphabet(encode: bool) -> Group {
    let dir = if encode { "encode" } else { "decode" };
    let mut group = Group::new(format!("base64-{dir}-alphabets"), false);
    for (name, alphabet) in alphabets() {
        group = group.case(move || alphabet_case(name, &alphabet, encode));
    }
    group
}

fn alphabet_case(name: &str, alphabet: &Alphabet, encode: bool) -> Result<Case, String> {
    const N: usize = 64 << 10;
    let theirs = base64::alphabet::Alphabet::new(
        std::str::from_utf8(alphabet.symbols()).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let gp = GeneralPurpose::new(&theirs, strict());
    let raw = Rc::new(Buf::random(N, 0xa1fa));
    let text = gp.encode(raw.bytes());
    let mut text_buf = Buf::random(text.len(), 3);
    text_buf.bytes_mut().copy_from_slice(text.as_bytes());
    let text_buf = Rc::new(text_buf);
    let at = out_offset(N);
    let outs: Vec<Buf> = (0..6)
        .map(|i| Buf::random_at(text.len(), 300 + i, at))
        .collect();
    let mut engines = Vec::new();
    for &b in Backend::available() {
        let e = Engine::new(alphabet, Padding::None)
            .with_backend(b)
            .map_err(|e| e.to_string())?;
        if encode {
            check(
                &format!("mdu {b:?} encode ({name})"),
                e.encode_to_string(raw.bytes()).as_bytes(),
                text.as_bytes(),
            )?;
        } else {
            check(
                &format!("mdu {b:?} decode ({name})"),
                &e.decode_to_vec(text_buf.bytes())
                    .map_err(|e| e.to_string())?,
                raw.bytes(),
            )?;
        }
        engines.push((b, e));
    }
    let mut it = outs.into_iter();
    let mut next = || it.next().expect("enough output buffers");
    let mut case = Case::new(name, N, None);
    for (b, e) in engines {
        let (mut o, src, txt) = (next(), Rc::clone(&raw), Rc::clone(&text_buf));
        case = case.imp(Imp::new(
            format!("mdu {}", b.name()),
            Kind::Mdu,
            move || {
                if encode {
                    black_box(
                        e.encode_slice(black_box(src.bytes()), o.bytes_mut())
                            .expect("room"),
                    );
                } else {
                    black_box(
                        e.decode_slice(black_box(txt.bytes()), o.bytes_mut())
                            .expect("valid"),
                    );
                }
            },
        ));
    }
    let mut o = next();
    Ok(case.imp(Imp::new("base64 (scalar)", Kind::Peer, move || {
        if encode {
            black_box(
                gp.encode_slice(black_box(raw.bytes()), o.bytes_mut())
                    .expect("room"),
            );
        } else {
            black_box(
                gp.decode_slice(black_box(text_buf.bytes()), o.bytes_mut())
                    .expect("valid"),
            );
        }
    })))
}

/// Every base64 group, in the report's order.
///
/// ```
/// assert_eq!(mdu_bench::registry::base64::groups().len(), 6);
/// ```
pub fn groups() -> Vec<Group> {
    vec![
        sizes(true, &SMALL),
        sizes(true, &BULK),
        sizes(false, &SMALL),
        sizes(false, &BULK),
        by_alphabet(true),
        by_alphabet(false),
    ]
}
