//! base64url without padding (fscrypt's encoding): every mdu backend against
//! the `base64` crate (scalar and SIMD engines), `base64-simd`,
//! `base64-turbo`, the kernel's two C encoders (the 2021 bit-stream one and the 3-byte block one that
//! replaced it), and memcpy of the same bytes as the ceiling.

use std::hint::black_box;

use base64::Engine as _;
use base64::engine::general_purpose::{GeneralPurpose, NO_PAD};
use base64::engine::{DecodePaddingMode, GeneralPurposeConfig, Simd};
use mdu_base64::{Alphabet, Backend, Engine, Padding, URL_SAFE_NO_PAD};
use mdu_bench::kernel_c;

use super::{Buf, Ctx, Suite, case, check};
use crate::measure::{Imp, Kind};
use crate::report::{CaseResult, Table, Unit};

pub(crate) fn suite() -> Suite {
    Suite {
        name: "base64",
        run,
        backends: || {
            vec![(
                "base64 backend".to_string(),
                format!(
                    "{:?} (available: {:?})",
                    Backend::detect(),
                    Backend::available()
                ),
            )]
        },
    }
}

/// The `base64-turbo` the report measures (its Cargo metadata, kept equal
/// to Cargo.lock by a test).
const TURBO_VERSION: &str = "0.5.0";

const SMALL: [usize; 4] = [32, 64, 189, 252];
/// 1 KiB, 64 KiB (in L2) and 1 MiB.
const BULK: [usize; 3] = [1024, 64 << 10, 1 << 20];

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

fn encode_case(ctx: &Ctx, n: usize) -> Result<CaseResult, String> {
    let gp = GeneralPurpose::new(&base64::alphabet::URL_SAFE, strict());
    let simd = Simd::url_safe(strict());
    let bsimd = base64_simd::URL_SAFE_NO_PAD;
    let turbo = base64_turbo::URL_SAFE_NO_PAD;
    let input = Buf::random(n, n as u64);
    let src = input.bytes();
    let want = gp.encode(src);
    let elen = want.len();
    let at = out_offset(n);
    let mut outs: Vec<Buf> = (0..10).map(|i| Buf::random_at(elen, 100 + i, at)).collect();

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

    let mut it = outs.iter_mut();
    let mut next = || it.next().expect("enough output buffers");
    let mut imps: Vec<Imp<'_>> = Vec::new();
    for (b, e) in engines {
        let o = next();
        imps.push(Imp::new(
            format!("mdu {}", b.name()),
            Kind::Mdu,
            move || {
                black_box(e.encode_slice(black_box(src), o.bytes_mut()).expect("room"));
            },
        ));
    }
    let (o1, o2, o3, o4, o5, o6, o7) = (next(), next(), next(), next(), next(), next(), next());
    imps.push(Imp::new("base64 (scalar)", Kind::Peer, move || {
        black_box(
            gp.encode_slice(black_box(src), o1.bytes_mut())
                .expect("room"),
        );
    }));
    imps.push(Imp::new("base64 (Simd)", Kind::Peer, move || {
        black_box(
            simd.encode_slice(black_box(src), o2.bytes_mut())
                .expect("room"),
        );
    }));
    imps.push(Imp::new("base64-simd", Kind::Peer, move || {
        black_box(bsimd.encode(black_box(src), base64_simd::Out::from_slice(o3.bytes_mut())));
    }));
    imps.push(Imp::new("base64-turbo", Kind::Peer, move || {
        black_box(
            turbo
                .encode_slice(black_box(src), o7.bytes_mut())
                .expect("room"),
        );
    }));
    imps.push(Imp::new("kernel C bit-stream", Kind::Peer, move || {
        black_box(kernel_c::bitstream_encode(black_box(src), o4.bytes_mut()));
    }));
    imps.push(Imp::new("kernel C 3-byte block", Kind::Peer, move || {
        black_box(kernel_c::block_encode(black_box(src), o5.bytes_mut()));
    }));
    imps.push(Imp::new("memcpy", Kind::Bound, move || {
        // The encoded output (4n/3 bytes) always has room for the n raw bytes.
        o6.bytes_mut()[..n].copy_from_slice(black_box(src));
        black_box(&*o6);
    }));
    Ok(case(ctx, format!("{n} bytes"), n, Some(n as f64), imps))
}

fn decode_case(ctx: &Ctx, n: usize) -> Result<CaseResult, String> {
    let gp = GeneralPurpose::new(&base64::alphabet::URL_SAFE, strict());
    let simd = Simd::url_safe(strict());
    let bsimd = base64_simd::URL_SAFE_NO_PAD;
    let turbo = base64_turbo::URL_SAFE_NO_PAD;
    let raw = Buf::random(n, n as u64 ^ 0xdead);
    let text = gp.encode(raw.bytes());
    let mut text_buf = Buf::random(text.len(), 7);
    text_buf.bytes_mut().copy_from_slice(text.as_bytes());
    let src = text_buf.bytes();
    let want = raw.bytes();
    let at = out_offset(n);
    let mut outs: Vec<Buf> = (0..8).map(|i| Buf::random_at(n, 200 + i, at)).collect();
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

    let mut it = outs.iter_mut();
    let mut next = || it.next().expect("enough output buffers");
    let mut imps: Vec<Imp<'_>> = Vec::new();
    for (b, e) in engines {
        let o = next();
        imps.push(Imp::new(
            format!("mdu {}", b.name()),
            Kind::Mdu,
            move || {
                black_box(
                    e.decode_slice(black_box(src), o.bytes_mut())
                        .expect("valid"),
                );
            },
        ));
    }
    let (o1, o2, o3, o4) = (next(), next(), next(), next());
    imps.push(Imp::new("base64 (scalar)", Kind::Peer, move || {
        black_box(
            gp.decode_slice(black_box(src), o1.bytes_mut())
                .expect("valid"),
        );
    }));
    imps.push(Imp::new("base64 (Simd)", Kind::Peer, move || {
        black_box(
            simd.decode_slice(black_box(src), o2.bytes_mut())
                .expect("valid"),
        );
    }));
    imps.push(Imp::new("base64-simd", Kind::Peer, move || {
        black_box(
            bsimd
                .decode(black_box(src), base64_simd::Out::from_slice(o3.bytes_mut()))
                .expect("valid"),
        );
    }));
    let o5 = &mut turbo_out;
    imps.push(Imp::new("base64-turbo", Kind::Peer, move || {
        black_box(
            turbo
                .decode_slice(black_box(src), o5.bytes_mut())
                .expect("valid"),
        );
    }));
    imps.push(Imp::new("memcpy", Kind::Bound, move || {
        o4.bytes_mut().copy_from_slice(black_box(want));
        black_box(&*o4);
    }));
    Ok(case(ctx, format!("{n} bytes"), n, Some(n as f64), imps))
}

/// Which mdu backends are forced, and what that means for the AVX2 one.
fn forced_note() -> String {
    let detected = Backend::detect();
    let mut note = format!(
        "Every mdu backend this CPU runs is timed, pinned with \
         `Engine::with_backend`; the one it detects is {}.",
        detected.name()
    );
    if detected != Backend::Avx2 && Backend::Avx2.is_available() {
        note.push_str(
            " So the `mdu avx2` column is the AVX2 backend forced on a CPU with \
             wider vectors; an AVX2-only CPU (Zen 3, Haswell to Alder Lake) selects \
             it by itself.",
        );
    }
    note
}

/// The kernel base64-turbo runs for `n` raw bytes in one direction. Its API
/// does not say; this is its dispatch rule (CPUID once, then the length).
fn turbo_kernel(n: usize, encode: bool) -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        // Encode goes by input bytes, decode by input characters.
        let len = if encode { n } else { kernel_c::encoded_len(n) };
        let (vbmi_min, avx2_min) = if encode { (16, 48) } else { (28, 36) };
        if has!("avx512f") && has!("avx512bw") && has!("avx512vbmi") {
            if len >= vbmi_min {
                return "AVX-512 VBMI";
            }
        } else if has!("avx2") && len >= avx2_min {
            return "AVX2";
        }
        "scalar"
    }
    #[cfg(target_arch = "aarch64")]
    {
        let len = if encode { n } else { kernel_c::encoded_len(n) };
        if len >= if encode { 16 } else { 20 } {
            "NEON"
        } else {
            "scalar"
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (n, encode);
        "scalar"
    }
}

/// What base64-turbo is and which of its kernels ran at `sizes`.
fn turbo_note(sizes: &[usize], encode: bool) -> String {
    let mut kernels: Vec<(&str, Vec<String>)> = Vec::new();
    for &n in sizes {
        let k = turbo_kernel(n, encode);
        match kernels.iter_mut().find(|(name, _)| *name == k) {
            Some((_, at)) => at.push(n.to_string()),
            None => kernels.push((k, vec![n.to_string()])),
        }
    }
    let ran: Vec<String> = kernels
        .iter()
        .map(|(k, at)| format!("{k} at {} bytes", at.join(", ")))
        .collect();
    format!(
        "base64-turbo {TURBO_VERSION}: its `URL_SAFE_NO_PAD` engine, the same encoding \
         (URL-safe alphabet, no padding; its decoder also refuses padding and non-zero \
         trailing bits). Its API does not report the kernel it picks; by its dispatch rule \
         (AVX-512 VBMI where the CPU has AVX-512 F, BW and VBMI, else AVX2, else scalar; \
         inputs under 16 bytes (VBMI) or 48 bytes (AVX2) to encode, or under 28 or 36 \
         characters to decode, take its scalar kernel) it ran {} here.",
        ran.join("; ")
    )
}

/// Bytes of raw data per cycle of every mdu backend and of the SIMD peers,
/// per bulk case, at the clock measured in this run.
fn per_cycle_note(cases: &[CaseResult], ghz: f64) -> String {
    let cells: Vec<String> = cases
        .iter()
        .map(|c| {
            let each: Vec<String> = c
                .results
                .iter()
                .filter(|s| {
                    s.kind == Kind::Mdu
                        || matches!(
                            s.name.as_str(),
                            "base64-simd" | "base64 (Simd)" | "base64-turbo"
                        )
                })
                .map(|s| format!("{} {:.2}", s.name, c.bytes as f64 / s.median() / ghz))
                .collect();
            format!("{}: {}", c.name, each.join(", "))
        })
        .collect();
    format!(
        "Bytes of raw data per cycle at {ghz:.2} GHz (the clock measured in this run): {}.",
        cells.join("; ")
    )
}

/// The alphabets of the alphabet table: the three that differ only in
/// symbols 62 and 63, crypt(3) (runs in another order) and a fixed shuffle
/// of printable ASCII (no structure at all).
fn alphabets() -> Vec<(&'static str, Alphabet)> {
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
/// SIMD engine and `base64-simd` take only the RFC 4648 alphabets).
fn alphabet_case(
    ctx: &Ctx,
    name: &str,
    alphabet: &Alphabet,
    encode: bool,
) -> Result<CaseResult, String> {
    const N: usize = 64 << 10;
    let theirs = base64::alphabet::Alphabet::new(
        std::str::from_utf8(alphabet.symbols()).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let gp = GeneralPurpose::new(&theirs, strict());
    let raw = Buf::random(N, 0xa1fa);
    let text = gp.encode(raw.bytes());
    let mut text_buf = Buf::random(text.len(), 3);
    text_buf.bytes_mut().copy_from_slice(text.as_bytes());
    let at = out_offset(N);
    let mut outs: Vec<Buf> = (0..6)
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
    let (src, txt) = (raw.bytes(), text_buf.bytes());
    let mut it = outs.iter_mut();
    let mut next = || it.next().expect("enough output buffers");
    let mut imps: Vec<Imp<'_>> = Vec::new();
    for (b, e) in engines {
        let o = next();
        imps.push(Imp::new(
            format!("mdu {}", b.name()),
            Kind::Mdu,
            move || {
                if encode {
                    black_box(e.encode_slice(black_box(src), o.bytes_mut()).expect("room"));
                } else {
                    black_box(
                        e.decode_slice(black_box(txt), o.bytes_mut())
                            .expect("valid"),
                    );
                }
            },
        ));
    }
    let o = next();
    imps.push(Imp::new("base64 (scalar)", Kind::Peer, move || {
        if encode {
            black_box(
                gp.encode_slice(black_box(src), o.bytes_mut())
                    .expect("room"),
            );
        } else {
            black_box(
                gp.decode_slice(black_box(txt), o.bytes_mut())
                    .expect("valid"),
            );
        }
    }));
    Ok(case(ctx, name, N, None, imps))
}

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    let note = "Sizes count raw bytes (decoded side) in both directions; 189 bytes is the \
                largest fscrypt no-key name and encodes to 252 characters; 64 KiB fits in L2. \
                memcpy copies the raw bytes."
        .to_string();
    let kernel_note = "kernel C: the fscrypt base64url encoders in C (-O2): the 2021-2025 \
                       bit-accumulator loop and the 3-byte block loop of the generic \
                       rework."
        .to_string();
    let mut tables = Vec::new();
    for (dir, is_enc) in [("encode", true), ("decode", false)] {
        for (sizes, unit, label) in [
            (&SMALL[..], Unit::Latency, "fscrypt name sizes"),
            (&BULK[..], Unit::Throughput, "bulk"),
        ] {
            let mut cases = Vec::new();
            for &n in sizes {
                cases.push(if is_enc {
                    encode_case(ctx, n)?
                } else {
                    decode_case(ctx, n)?
                });
            }
            let mut notes = vec![note.clone()];
            if is_enc {
                notes.push(kernel_note.clone());
            }
            notes.push(turbo_note(sizes, is_enc));
            notes.push(forced_note());
            if unit == Unit::Throughput
                && let Some(ghz) = ctx.clock_ghz
            {
                notes.push(per_cycle_note(&cases, ghz));
            }
            tables.push(Table {
                id: format!(
                    "base64-{dir}-{}",
                    if unit == Unit::Latency {
                        "small"
                    } else {
                        "bulk"
                    }
                ),
                title: format!("base64url (no padding) {dir}, {label}"),
                unit,
                x_label: Some("input size (bytes)".to_string()),
                notes,
                cases,
            });
        }
    }
    for (dir, encode) in [("encode", true), ("decode", false)] {
        let mut cases = Vec::new();
        for (name, alphabet) in alphabets() {
            cases.push(alphabet_case(ctx, name, &alphabet, encode)?);
        }
        tables.push(Table {
            id: format!("base64-{dir}-alphabets"),
            title: format!("base64 {dir} of 64 KiB, by alphabet (no padding)"),
            unit: Unit::Throughput,
            x_label: None,
            notes: vec![
                "Every alphabet's lookup tables are built once, when the `Alphabet` is \
                 made. AVX2 encodes in one lookup where values 0..=25 and 26..=51 are runs \
                 (the RFC 4648 alphabets), in four otherwise; it decodes in three lookups \
                 where each row of 16 bytes holds symbols of at most two offsets (also \
                 crypt(3)), in six otherwise. AVX-512 VBMI costs the same for every \
                 alphabet."
                    .to_string(),
                forced_note(),
            ],
            cases,
        });
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    /// The version the report prints is the one Cargo.lock resolves.
    #[test]
    fn turbo_version_is_the_locked_one() {
        let lock = include_str!("../../../../Cargo.lock");
        let entry = lock
            .split("[[package]]")
            .find(|p| p.contains("name = \"base64-turbo\"\n"))
            .expect("base64-turbo in Cargo.lock");
        assert!(
            entry.contains(&format!("version = \"{}\"\n", super::TURBO_VERSION)),
            "TURBO_VERSION is {}, Cargo.lock has:{entry}",
            super::TURBO_VERSION
        );
    }
}
