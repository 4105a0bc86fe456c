//! fscrypt: a file's contents decrypted through `mdu-fscrypt` per policy,
//! against the cipher crate's own batched rate on the same units and the
//! AES bound; file names encrypted and decrypted per names mode; no-key
//! names built and encoded.
//!
//! ```
//! let mut g = mdu_bench::registry::fscrypt::names();
//! let case = g.cases.remove(0)().expect("round trip checked");
//! assert!(case.name.starts_with("AES-256-CTS-CBC, 12-byte name"));
//! ```

use std::hint::black_box;

use mdu_core::{DataUnits, Iv};
use mdu_fscrypt::ext4::{DirHash, HashVersion};
use mdu_fscrypt::key::MasterKey;
use mdu_fscrypt::nokey::NoKeyName;
use mdu_fscrypt::policy::{Context, Flags, KeySpec, Mode, Policy};
use mdu_fscrypt::{ContentsCipher, FsInfo, NamesCipher};
use mdu_xts::XtsAes256;

use super::{Case, Group, Imp, Kind, aes_bound_row, check};
use crate::buffer::Buf;

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
pub const FIRST_BLOCK: u64 = 1 << 18;

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
/// counter, and the AES bound. Group `fscrypt-contents`.
///
/// ```
/// assert_eq!(mdu_bench::registry::fscrypt::contents().cases.len(), 6);
/// ```
pub fn contents() -> Group {
    CONTENTS
        .iter()
        .fold(Group::new("fscrypt-contents", false), |g, c| {
            g.case(move || contents_case(c))
        })
}

fn contents_case(c: &ContentsCase) -> Result<Case, String> {
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

    let f = file.clone();
    let mut case = Case::new(c.name, REQUEST, None).imp(Imp::new(
        "mdu-fscrypt decrypt_blocks",
        Kind::Mdu,
        move || {
            f.decrypt_blocks(FIRST_BLOCK, work.bytes_mut())
                .expect("whole blocks");
        },
    ));
    // The same units through mdu-xts directly: per-file keys number units
    // from lblk · units per block, as a plain 64-bit counter.
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
        direct.bytes_mut().copy_from_slice(cipher.bytes());
        units
            .decrypt(first, direct.bytes_mut())
            .map_err(|e| e.to_string())?;
        check(
            &format!("{}: mdu-xts on the same units", c.name),
            direct.bytes(),
            plain.bytes(),
        )?;
        case = case.imp(Imp::new(
            "mdu-xts batched, same units",
            Kind::Peer,
            move || {
                units
                    .decrypt(first, direct.bytes_mut())
                    .expect("whole units");
            },
        ));
    }
    case.imps.extend(aes_bound_row(&[0x42; 32], REQUEST));
    Ok(case)
}

/// One name through each names mode, both directions, and the no-key name
/// of a long ciphertext name. Group `fscrypt-names`.
///
/// ```
/// assert_eq!(mdu_bench::registry::fscrypt::names().cases.len(), 10);
/// ```
pub fn names() -> Group {
    let mut group = Group::new("fscrypt-names", false);
    for (label, contents, mode) in [
        ("AES-256-CTS-CBC", Mode::Aes256Xts, Mode::Aes256Cts),
        ("AES-256-HCTR2", Mode::Aes256Xts, Mode::Aes256Hctr2),
        ("Adiantum", Mode::Adiantum, Mode::Adiantum),
    ] {
        for len in [12usize, 40, 255] {
            group = group.case(move || name_case(label, contents, mode, len));
        }
    }
    group.case(nokey_case)
}

fn name_case(label: &str, contents: Mode, mode: Mode, len: usize) -> Result<Case, String> {
    let master = master(false);
    let fctx = context(&master, contents, mode, 2, 0, false);
    let dir = NamesCipher::new(&master, &fctx, INO, &FS).map_err(|e| e.to_string())?;
    let name: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
    let stored = dir.encrypt_name(&name).map_err(|e| e.to_string())?;
    let back = dir.decrypt_name(&stored).map_err(|e| e.to_string())?;
    check(&format!("{label} name of {len} bytes"), &back, &name)?;
    let d1 = dir.clone();
    let case_name = format!("{label}, {len}-byte name ({} stored)", stored.len());
    Ok(Case::new(case_name, len, None)
        .imp(Imp::new("encrypt_name", Kind::Mdu, move || {
            black_box(d1.encrypt_name(black_box(&name)).expect("a name"));
        }))
        .imp(Imp::new("decrypt_name", Kind::Peer, move || {
            black_box(dir.decrypt_name(black_box(&stored)).expect("a name"));
        })))
}

/// The no-key name `ls` shows for a 255-byte ciphertext name: the
/// directory hash, the SHA-256 of the tail, base64url.
fn nokey_case() -> Result<Case, String> {
    let stored: Vec<u8> = (0..255u32).map(|i| (i * 97 + 5) as u8).collect();
    let hash = DirHash::new(HashVersion::HalfMd4 { unsigned: false }, [7; 4], &stored);
    let name = NoKeyName::new(hash.hash, hash.minor_hash, &stored).map_err(|e| e.to_string())?;
    let shown = name.encode();
    let parsed = mdu_fscrypt::nokey::decode(shown.as_bytes()).map_err(|e| e.to_string())?;
    check("no-key name round trip", parsed.as_bytes(), name.as_bytes())?;
    let s = stored.clone();
    Ok(
        Case::new("no-key name of a 255-byte ciphertext name", 255, None)
            .imp(Imp::new("build and encode", Kind::Mdu, move || {
                let h = DirHash::new(HashVersion::HalfMd4 { unsigned: false }, [7; 4], &s);
                let n = NoKeyName::new(h.hash, h.minor_hash, black_box(&s)).expect("a name");
                black_box(n.encode());
            }))
            .imp(Imp::new("decode and match", Kind::Peer, move || {
                let n = mdu_fscrypt::nokey::decode(black_box(shown.as_bytes())).expect("valid");
                black_box(n.matches(&stored));
            })),
    )
}

/// Every fscrypt group, in the report's order.
///
/// ```
/// assert_eq!(mdu_bench::registry::fscrypt::groups().len(), 2);
/// ```
pub fn groups() -> Vec<Group> {
    vec![contents(), names()]
}
