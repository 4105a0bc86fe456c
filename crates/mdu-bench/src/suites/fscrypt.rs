//! fscrypt: a file's contents decrypted through `mdu-fscrypt` per policy,
//! against the cipher crate's own batched rate on the same units and the
//! AES bound; file names encrypted and decrypted per names mode; no-key
//! names built and encoded.

use std::hint::black_box;

use mdu_bench::bound::{self, AesBound};
use mdu_core::{DataUnits, Iv};
use mdu_fscrypt::ext4::{DirHash, HashVersion};
use mdu_fscrypt::key::MasterKey;
use mdu_fscrypt::nokey::NoKeyName;
use mdu_fscrypt::policy::{Context, Flags, KeySpec, Mode, Policy};
use mdu_fscrypt::{ContentsCipher, FsInfo, NamesCipher};
use mdu_xts::XtsAes256;

use super::{Buf, Ctx, Suite, case, check, per_cycle_cell};
use crate::measure::{Imp, Kind};
use crate::report::{Table, Unit};

pub(crate) fn suite() -> Suite {
    Suite {
        name: "fscrypt",
        run,
        backends: || {
            vec![(
                "fscrypt contents (AES-256-XTS)".to_string(),
                format!("{:?}", mdu_xts::Backend::detect()),
            )]
        },
    }
}

/// 1 MiB of one file: 256 blocks of 4 KiB.
const REQUEST: usize = 1 << 20;
const FS: FsInfo = FsInfo {
    uuid: [0x5b; 16],
    block_size: 4096,
};
/// The inode the files and directories of the suite have.
const INO: u64 = 0x1234;
/// The first logical block decrypted: past 2^20 units, so 512-byte units
/// carry into the IV's third byte.
const FIRST_BLOCK: u64 = 1 << 18;

fn master(v1: bool) -> MasterKey {
    let raw: Vec<u8> = (0..64u8)
        .map(|i| i.wrapping_mul(37).wrapping_add(11))
        .collect();
    if v1 {
        MasterKey::new(&raw[..32]).expect("32-byte key")
    } else {
        MasterKey::new(&raw).expect("64-byte key")
    }
}

fn context(
    master: &MasterKey,
    contents: Mode,
    names: Mode,
    flags: u8,
    log2_unit: u8,
    v1: bool,
) -> Context {
    let key = if v1 {
        KeySpec::V1 {
            descriptor: [0x11; 8],
        }
    } else {
        KeySpec::V2 {
            identifier: master.identifier().0,
        }
    };
    let policy = Policy::new(
        contents,
        names,
        Flags::from_bits(flags).expect("flags"),
        log2_unit,
        key,
    )
    .expect("a policy the kernel accepts");
    Context::new(policy, [0x4e; 16])
}

/// A contents policy of the table.
struct ContentsCase {
    name: &'static str,
    contents: Mode,
    names: Mode,
    flags: u8,
    log2_unit: u8,
    v1: bool,
}

const CONTENTS: &[ContentsCase] = &[
    ContentsCase {
        name: "v2 AES-256-XTS, per-file keys",
        contents: Mode::Aes256Xts,
        names: Mode::Aes256Cts,
        flags: 2,
        log2_unit: 0,
        v1: false,
    },
    ContentsCase {
        name: "v2 AES-256-XTS, IV_INO_LBLK_64",
        contents: Mode::Aes256Xts,
        names: Mode::Aes256Cts,
        flags: 2 | Flags::IV_INO_LBLK_64,
        log2_unit: 0,
        v1: false,
    },
    ContentsCase {
        name: "v2 AES-256-XTS, IV_INO_LBLK_32",
        contents: Mode::Aes256Xts,
        names: Mode::Aes256Cts,
        flags: 2 | Flags::IV_INO_LBLK_32,
        log2_unit: 0,
        v1: false,
    },
    ContentsCase {
        name: "v2 AES-256-XTS, 512-byte data units",
        contents: Mode::Aes256Xts,
        names: Mode::Aes256Cts,
        flags: 2,
        log2_unit: 9,
        v1: false,
    },
    ContentsCase {
        name: "v2 Adiantum, DIRECT_KEY",
        contents: Mode::Adiantum,
        names: Mode::Adiantum,
        flags: 2 | Flags::DIRECT_KEY,
        log2_unit: 0,
        v1: false,
    },
    ContentsCase {
        name: "v1 AES-128-CBC-ESSIV",
        contents: Mode::Aes128CbcEssiv,
        names: Mode::Aes128Cts,
        flags: 0,
        log2_unit: 0,
        v1: true,
    },
];

/// Decryption of 1 MiB of one file per policy: `mdu-fscrypt` (key
/// derivation outside the loop, IV runs, the batched cipher call), the
/// XTS cipher alone on the same units where the policy's IVs are a plain
/// counter, and the AES bound.
fn contents(ctx: &Ctx) -> Result<Table, String> {
    let widest = AesBound::detect();
    let mut cases = Vec::new();
    for c in CONTENTS {
        let master = master(c.v1);
        let fctx = context(&master, c.contents, c.names, c.flags, c.log2_unit, c.v1);
        let file = ContentsCipher::new(&master, &fctx, INO, &FS).map_err(|e| e.to_string())?;
        let plain = Buf::random(REQUEST, 0xf5);
        let mut cipher = Buf::random(REQUEST, 1);
        cipher.bytes_mut().copy_from_slice(plain.bytes());
        file.encrypt_blocks(FIRST_BLOCK, cipher.bytes_mut())
            .map_err(|e| e.to_string())?;
        let mut work = Buf::random(REQUEST, 2);
        work.bytes_mut().copy_from_slice(cipher.bytes());
        file.decrypt_blocks(FIRST_BLOCK, work.bytes_mut())
            .map_err(|e| e.to_string())?;
        check(
            &format!("{} round trip", c.name),
            work.bytes(),
            plain.bytes(),
        )?;

        let mut imps: Vec<Imp<'_>> = Vec::new();
        let src = cipher.bytes();
        let f = file.clone();
        imps.push(Imp::new(
            "mdu-fscrypt decrypt_blocks",
            Kind::Mdu,
            move || {
                f.decrypt_blocks(FIRST_BLOCK, work.bytes_mut())
                    .expect("whole blocks");
            },
        ));
        // The same units through mdu-xts directly: per-file keys number
        // units from lblk · units per block, as a plain 64-bit counter.
        if c.contents == Mode::Aes256Xts && c.flags & 0x18 == 0 {
            let key = master
                .derive(fctx.policy(), c.contents, fctx.nonce(), &FS.uuid)
                .map_err(|e| e.to_string())?;
            let unit = file.unit_len();
            let units = DataUnits::new(
                XtsAes256::new(key.as_bytes()).map_err(|e| e.to_string())?,
                unit,
            )
            .map_err(|e| e.to_string())?;
            let first = Iv::from_u128(u128::from(FIRST_BLOCK) * (4096 / unit as u128));
            let mut direct = Buf::random(REQUEST, 3);
            direct.bytes_mut().copy_from_slice(src);
            units
                .decrypt(first, direct.bytes_mut())
                .map_err(|e| e.to_string())?;
            check(
                &format!("{}: mdu-xts on the same units", c.name),
                direct.bytes(),
                plain.bytes(),
            )?;
            imps.push(Imp::new(
                "mdu-xts batched, same units",
                Kind::Peer,
                move || {
                    units
                        .decrypt(first, direct.bytes_mut())
                        .expect("whole units");
                },
            ));
        }
        if widest != AesBound::None {
            let rk = bound::expand_key(&[0x42; 32]);
            let mut e = Buf::random(REQUEST, 5);
            imps.push(Imp::new(widest.label(), Kind::Bound, move || {
                black_box(bound::ecb_encrypt(widest, &rk, e.bytes_mut()));
            }));
        }
        cases.push(case(ctx, c.name, REQUEST, None, imps));
    }
    let mut notes = vec![format!(
        "1 MiB of one file (256 blocks of 4 KiB) from logical block {FIRST_BLOCK}, decrypted \
         in place (the bytes were checked once before timing; the timed calls decrypt \
         whatever the last one left, the same work). mdu-fscrypt: ContentsCipher::decrypt_blocks with the key derived once. \"mdu-xts \
         batched, same units\": the XTS cipher alone on the same units and IVs (per-file-key \
         policies), the rate the contents path should reach. The bound is AES-256-ECB over \
         the same bytes with the widest AES instructions of the CPU (Adiantum is \
         XChaCha12 and NH, with one AES block per unit: the AES bound is not its bound)."
    )];
    if ctx.clock_ghz.is_some() {
        let cells: Vec<String> = cases
            .iter()
            .filter_map(|c| per_cycle_cell(ctx, c))
            .collect();
        notes.push(format!(
            "Bytes per cycle (first row / bound where there is one): {}.",
            cells.join("; ")
        ));
    }
    Ok(Table {
        id: "fscrypt-contents".to_string(),
        title: "fscrypt contents decryption, 1 MiB of one file, by policy".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes,
        cases,
    })
}

/// One name through each names mode, both directions, and the no-key name
/// of a long ciphertext name.
fn names(ctx: &Ctx) -> Result<Table, String> {
    let master = master(false);
    let mut cases = Vec::new();
    for (label, contents, mode) in [
        ("AES-256-CTS-CBC", Mode::Aes256Xts, Mode::Aes256Cts),
        ("AES-256-HCTR2", Mode::Aes256Xts, Mode::Aes256Hctr2),
        ("Adiantum", Mode::Adiantum, Mode::Adiantum),
    ] {
        let fctx = context(&master, contents, mode, 2, 0, false);
        let dir = NamesCipher::new(&master, &fctx, INO, &FS).map_err(|e| e.to_string())?;
        for len in [12usize, 40, 255] {
            let name: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let stored = dir.encrypt_name(&name).map_err(|e| e.to_string())?;
            let back = dir.decrypt_name(&stored).map_err(|e| e.to_string())?;
            check(&format!("{label} name of {len} bytes"), &back, &name)?;
            let (d1, d2) = (dir.clone(), dir.clone());
            let (n, s) = (name.clone(), stored.clone());
            let imps = vec![
                Imp::new("encrypt_name", Kind::Mdu, move || {
                    black_box(d1.encrypt_name(black_box(&n)).expect("a name"));
                }),
                Imp::new("decrypt_name", Kind::Peer, move || {
                    black_box(d2.decrypt_name(black_box(&s)).expect("a name"));
                }),
            ];
            cases.push(case(
                ctx,
                format!("{label}, {len}-byte name ({} stored)", stored.len()),
                len,
                None,
                imps,
            ));
        }
    }
    // The no-key name `ls` shows for a 255-byte ciphertext name: the
    // directory hash, the SHA-256 of the tail, base64url.
    let stored: Vec<u8> = (0..255u32).map(|i| (i * 97 + 5) as u8).collect();
    let hash = DirHash::new(HashVersion::HalfMd4 { unsigned: false }, [7; 4], &stored);
    let name = NoKeyName::new(hash.hash, hash.minor_hash, &stored).map_err(|e| e.to_string())?;
    let shown = name.encode();
    let parsed = mdu_fscrypt::nokey::decode(shown.as_bytes()).map_err(|e| e.to_string())?;
    check("no-key name round trip", parsed.as_bytes(), name.as_bytes())?;
    let s = stored.clone();
    let imps = vec![
        Imp::new("build and encode", Kind::Mdu, move || {
            let h = DirHash::new(HashVersion::HalfMd4 { unsigned: false }, [7; 4], &s);
            let n = NoKeyName::new(h.hash, h.minor_hash, black_box(&s)).expect("a name");
            black_box(n.encode());
        }),
        Imp::new("decode and match", Kind::Peer, move || {
            let n = mdu_fscrypt::nokey::decode(black_box(shown.as_bytes())).expect("valid");
            black_box(n.matches(&stored));
        }),
    ];
    cases.push(case(
        ctx,
        "no-key name of a 255-byte ciphertext name",
        255,
        None,
        imps,
    ));
    Ok(Table {
        id: "fscrypt-names".to_string(),
        title: "fscrypt names: one name per call".to_string(),
        unit: Unit::Latency,
        x_label: None,
        notes: vec![
            "Per name, with the directory's key derived once (v2 policy, padding 16). \
             encrypt_name pads and encrypts; decrypt_name decrypts and strips the padding. \
             The no-key row builds the name `ls` shows without the key (half-MD4 directory \
             hash, SHA-256 of the ciphertext past 149 bytes, base64url) and, as a lookup \
             does, decodes one and matches it against the stored name."
                .to_string(),
        ],
        cases,
    })
}

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    Ok(vec![contents(ctx)?, names(ctx)?])
}
