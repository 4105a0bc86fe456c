//! Headers read as cryptsetup reads them: for each rule of its LUKS2
//! metadata validation (libcryptsetup's `luks2_json_metadata.c` and the
//! keyslot handlers), one header that must load and one that must be
//! refused, each run through mdu (load, dump) and `cryptsetup luksDump` /
//! `isLuks`. Both must load with the same dump text, or both refuse. The
//! corpus and its results are the table in `CONFORMANCE.md`, checked here
//! so that it cannot drift (`MDU_WRITE_CONFORMANCE=1` rewrites it).

use std::path::Path;
use std::process::Command;

use mdu_luks2::{FormatParams, Hash, Image, KdfParams, dump, format, header_checksum};
use mdu_testkit::tools::{self, Search, Tool};
use serde_json::{Value, json};

const HDR: usize = 16384;
/// The end of keyslot 0's area in the base image: where added areas go.
const FREE: u64 = 32768 + 258048;
const DATA: u64 = 1 << 20;

/// What a rule says of its header.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Must {
    Load,
    Refuse,
}

struct Case {
    rule: &'static str,
    must: Must,
    edit: Box<dyn Fn(&mut Value)>,
    /// The image cut to this length.
    len: Option<usize>,
}

fn case(rule: &'static str, must: Must, edit: impl Fn(&mut Value) + 'static) -> Case {
    Case {
        rule,
        must,
        edit: Box::new(edit),
        len: None,
    }
}

/// The base image, cut to `len` bytes.
fn cut(rule: &'static str, must: Must, len: u64) -> Case {
    Case {
        len: Some(len as usize),
        ..case(rule, must, |_| {})
    }
}

/// Keyslot 0 copied to `id` with its area at `offset`, listed by digest 0,
/// then changed by `f`.
fn add_keyslot(v: &mut Value, id: &str, offset: u64, f: impl Fn(&mut Value)) {
    let mut k = v["keyslots"]["0"].clone();
    k["area"]["offset"] = json!(offset.to_string());
    f(&mut k);
    v["keyslots"][id] = k;
    v["digests"]["0"]["keyslots"]
        .as_array_mut()
        .unwrap()
        .push(json!(id));
}

/// A keyslot of a type cryptsetup has no handler for.
fn foreign_keyslot(offset: &str, size: &str) -> Value {
    json!({"type": "mdu-test", "key_size": 32, "area": {"type": "raw", "offset": offset, "size": size}})
}

/// Segment 0 cut to 64 KiB and segment 1 (a copy, changed by `f`) after it.
fn two_segments(v: &mut Value, f: impl Fn(&mut Value)) {
    v["segments"]["0"]["size"] = json!("65536");
    let mut s = v["segments"]["0"].clone();
    s["offset"] = json!((DATA + 65536).to_string());
    s["size"] = json!("dynamic");
    f(&mut s);
    v["segments"]["1"] = s;
    v["digests"]["0"]["segments"] = json!(["0", "1"]);
}

fn corpus() -> Vec<Case> {
    use Must::{Load, Refuse};
    vec![
        // Keyslots this crate cannot open load, show and are skipped.
        case("keyslot KDF named `argon2` (early LUKS2)", Load, |v| {
            add_keyslot(v, "1", FREE, |k| {
                k["kdf"] = json!({"type": "argon2", "time": 4, "memory": 1024, "cpus": 1, "salt": "AAAAAAAAAAAAAAAAAAAAAA=="});
            })
        }),
        case("keyslot KDF of an unknown name", Load, |v| {
            add_keyslot(v, "1", FREE, |k| {
                k["kdf"] = json!({"type": "scrypt", "n": 16})
            })
        }),
        case("keyslot of an unknown type", Load, |v| {
            v["keyslots"]["1"] = foreign_keyslot(&FREE.to_string(), "4096");
        }),
        case("keyslot of an unknown type without an area", Refuse, |v| {
            v["keyslots"]["1"] = json!({"type": "mdu-test", "key_size": 32});
        }),
        case("keyslot AF hash this crate lacks", Load, |v| {
            add_keyslot(v, "1", FREE, |k| k["af"]["hash"] = json!("sha3-256"))
        }),
        case("keyslot PBKDF2 iterations 0", Load, |v| {
            add_keyslot(v, "1", FREE, |k| k["kdf"]["iterations"] = json!(0))
        }),
        case("keyslot key_size 0", Load, |v| {
            add_keyslot(v, "1", FREE, |k| k["key_size"] = json!(0))
        }),
        case("keyslot key_size -1", Refuse, |v| {
            add_keyslot(v, "1", FREE, |k| k["key_size"] = json!(-1))
        }),
        case("keyslot key_size 2^32", Refuse, |v| {
            add_keyslot(v, "1", FREE, |k| k["key_size"] = json!(1u64 << 32))
        }),
        case("keyslot area smaller than its AF material", Load, |v| {
            add_keyslot(v, "1", FREE, |k| k["area"]["size"] = json!("4096"))
        }),
        case("keyslot area offset not 512-aligned", Load, |v| {
            add_keyslot(v, "1", FREE + 1, |_| {})
        }),
        case("keyslot id 40 (dumped by neither)", Load, |v| {
            add_keyslot(v, "40", FREE, |_| {})
        }),
        case("keyslot priority 2", Load, |v| {
            v["keyslots"]["0"]["priority"] = json!(2)
        }),
        case("keyslot priority a string", Load, |v| {
            add_keyslot(v, "1", FREE, |k| k["priority"] = json!("2"))
        }),
        case(
            "keyslot PBKDF2 KDF with an extra member (dropped)",
            Load,
            |v| {
                v["keyslots"]["0"]["kdf"]["time"] = json!(4);
            },
        ),
        case("keyslot PBKDF2 KDF without its salt", Refuse, |v| {
            add_keyslot(v, "1", FREE, |k| {
                k["kdf"].as_object_mut().unwrap().remove("salt");
            })
        }),
        case("keyslot argon2id KDF without cpus", Refuse, |v| {
            add_keyslot(v, "1", FREE, |k| {
                k["kdf"] = json!({"type": "argon2id", "time": 4, "memory": 1024, "salt": "AAAAAAAAAAAAAAAAAAAAAA=="});
            })
        }),
        case("keyslot AF type other than luks1", Refuse, |v| {
            v["keyslots"]["0"]["af"]["type"] = json!("luks2");
        }),
        case("keyslot area type other than raw", Refuse, |v| {
            v["keyslots"]["0"]["area"]["type"] = json!("journal");
        }),
        case("keyslot area encryption empty", Refuse, |v| {
            v["keyslots"]["0"]["area"]["encryption"] = json!("");
        }),
        case("keyslot AF stripes a string", Refuse, |v| {
            v["keyslots"]["0"]["af"]["stripes"] = json!("4000");
        }),
        // Areas, of keyslots of any type.
        case("keyslot areas overlap (unknown type)", Refuse, |v| {
            v["keyslots"]["1"] = foreign_keyslot("36864", "4096");
        }),
        case("keyslot area past the keyslots area", Refuse, |v| {
            v["keyslots"]["1"] = foreign_keyslot(&(DATA - 2048).to_string(), "4096");
        }),
        case("keyslot area inside the header copies", Refuse, |v| {
            v["keyslots"]["1"] = foreign_keyslot("16384", "4096");
        }),
        case("keyslot area of 0 bytes", Refuse, |v| {
            v["keyslots"]["1"] = foreign_keyslot(&FREE.to_string(), "0");
        }),
        // Bindings.
        case(
            "luks2 keyslot in no digest (one it cannot open)",
            Refuse,
            |v| {
                add_keyslot(v, "1", FREE, |k| k["kdf"]["type"] = json!("argon2"));
                v["digests"]["0"]["keyslots"] = json!(["0"]);
            },
        ),
        case("unknown-type keyslot in no digest", Load, |v| {
            v["keyslots"]["1"] = foreign_keyslot(&FREE.to_string(), "4096");
        }),
        case("digest lists a keyslot twice", Load, |v| {
            v["digests"]["0"]["keyslots"] = json!(["0", "0"]);
        }),
        case("digest names a missing keyslot", Refuse, |v| {
            v["digests"]["0"]["keyslots"] = json!(["0", "7"]);
        }),
        case("digest names a missing segment", Refuse, |v| {
            v["digests"]["0"]["segments"] = json!(["0", "3"]);
        }),
        case("crypt segment bound to no digest", Refuse, |v| {
            v["digests"]["0"]["segments"] = json!([]);
        }),
        // Digests: cryptsetup looks into one only when it checks a key.
        case("digest of an unknown type", Load, |v| {
            add_keyslot(v, "1", FREE, |_| {});
            v["digests"]["0"]["keyslots"] = json!(["0"]);
            v["digests"]["1"] = json!({"type": "mdu-test", "keyslots": ["1"], "segments": []});
        }),
        case("digest with a hash this crate lacks", Load, |v| {
            v["digests"]["0"]["hash"] = json!("sha3-256");
        }),
        case("digest of 4 bytes", Load, |v| {
            v["digests"]["0"]["digest"] = json!("AAAAAA==");
        }),
        case("digest salt not base64", Load, |v| {
            v["digests"]["0"]["salt"] = json!("not base64!");
        }),
        case("digest without a type", Refuse, |v| {
            v["digests"]["0"].as_object_mut().unwrap().remove("type");
        }),
        case("digest keyslots not an array", Refuse, |v| {
            v["digests"]["0"]["keyslots"] = json!("0");
        }),
        // Tokens.
        case("token of an unknown type", Load, |v| {
            v["tokens"]["0"] = json!({"type": "mdu-test", "keyslots": ["0"], "x": 1});
        }),
        case("luks2-keyring token", Load, |v| {
            v["tokens"]["3"] =
                json!({"type": "luks2-keyring", "keyslots": ["0"], "key_description": "mdu:test"});
        }),
        case("token names a keyslot that does not exist", Refuse, |v| {
            v["tokens"]["0"] = json!({"type": "mdu-test", "keyslots": ["5"]});
        }),
        case("token without a type", Refuse, |v| {
            v["tokens"]["0"] = json!({"keyslots": ["0"]});
        }),
        case("token keyslots not an array", Refuse, |v| {
            v["tokens"]["0"] = json!({"type": "mdu-test", "keyslots": "0"});
        }),
        case("token id not a number", Refuse, |v| {
            v["tokens"]["a"] = json!({"type": "mdu-test", "keyslots": ["0"]});
        }),
        // Segments.
        case("two crypt data segments", Load, |v| two_segments(v, |_| {})),
        case("segment of an unknown type", Load, |v| {
            two_segments(v, |s| {
                *s = json!({"type": "mdu-future", "offset": s["offset"], "size": "dynamic", "x": [1]});
            })
        }),
        case("linear segment after a crypt one", Load, |v| {
            two_segments(v, |s| {
                *s = json!({"type": "linear", "offset": s["offset"], "size": "dynamic"});
            })
        }),
        case("overlapping segments", Refuse, |v| {
            two_segments(v, |s| s["offset"] = json!((DATA + 4096).to_string()))
        }),
        case("dynamic segment before another", Refuse, |v| {
            two_segments(v, |s| s["size"] = json!("65536"));
            v["segments"]["0"]["size"] = json!("dynamic");
        }),
        case("segment size 2^64 - 512", Load, |v| {
            v["segments"]["0"]["size"] = json!("18446744073709551104");
        }),
        case("segment size 2^64 - 1", Refuse, |v| {
            v["segments"]["0"]["size"] = json!("18446744073709551615");
        }),
        case("segment size 2^64", Refuse, |v| {
            v["segments"]["0"]["size"] = json!("18446744073709551616");
        }),
        case("segment size 0", Refuse, |v| {
            v["segments"]["0"]["size"] = json!("0")
        }),
        case(
            "segment size not a multiple of the sector size",
            Refuse,
            |v| {
                v["segments"]["0"]["sector_size"] = json!(4096);
                v["segments"]["0"]["size"] = json!("66048");
            },
        ),
        case("segment offset not 512-aligned", Refuse, |v| {
            v["segments"]["0"]["offset"] = json!((DATA + 256).to_string());
        }),
        case(
            "segment offset not a multiple of its sector size",
            Load,
            |v| {
                v["segments"]["0"]["sector_size"] = json!(4096);
                v["segments"]["0"]["offset"] = json!((DATA + 512).to_string());
            },
        ),
        case("segment sector size 8192", Load, |v| {
            v["segments"]["0"]["sector_size"] = json!(8192);
        }),
        case("segment sector size 768", Refuse, |v| {
            v["segments"]["0"]["sector_size"] = json!(768);
        }),
        case("segment encryption empty", Refuse, |v| {
            v["segments"]["0"]["encryption"] = json!("");
        }),
        case("segment encryption a cipher nobody has", Load, |v| {
            v["segments"]["0"]["encryption"] = json!("mdu-cbc-plain64");
        }),
        case("segment iv_tweak not a number", Refuse, |v| {
            v["segments"]["0"]["iv_tweak"] = json!("x");
        }),
        case("segment integrity with its three fields", Load, |v| {
            v["segments"]["0"]["integrity"] = json!({"type": "hmac(sha256)", "journal_encryption": "none", "journal_integrity": "none"});
        }),
        case(
            "segment integrity without its journal fields",
            Refuse,
            |v| {
                v["segments"]["0"]["integrity"] = json!({"type": "hmac(sha256)"});
            },
        ),
        case("segment flags that are not backup-*", Load, |v| {
            v["segments"]["0"]["flags"] = json!(["mdu-a", "mdu-b"]);
        }),
        case("no segments", Refuse, |v| {
            v["segments"] = json!({});
            v["digests"]["0"]["segments"] = json!([]);
        }),
        // Config.
        case("config flags", Load, |v| {
            v["config"]["flags"] = json!(["allow-discards", "no-journal"]);
        }),
        case("config requirement unknown to both", Load, |v| {
            v["config"]["requirements"] = json!({"mandatory": ["mdu-future"]});
        }),
        case(
            "requirement online-reencrypt-v9 (unknown to both)",
            Load,
            |v| {
                v["config"]["requirements"] = json!({"mandatory": ["online-reencrypt-v9"]});
            },
        ),
        case(
            "requirement online-reencrypt-vx (not of the form)",
            Load,
            |v| {
                v["config"]["requirements"] = json!({"mandatory": ["online-reencrypt-vx"]});
            },
        ),
        case(
            "requirement online-reencrypt-v2 without its keyslot",
            Refuse,
            |v| {
                v["config"]["requirements"] = json!({"mandatory": ["online-reencrypt-v2"]});
            },
        ),
        case("two online-reencrypt requirements", Refuse, |v| {
            v["config"]["requirements"] =
                json!({"mandatory": ["online-reencrypt", "online-reencrypt-v2"]});
        }),
        case("config flags not strings", Refuse, |v| {
            v["config"]["flags"] = json!([1]);
        }),
        case("keyslots_size past the data offset", Refuse, |v| {
            v["config"]["keyslots_size"] = json!((DATA - 16384).to_string());
        }),
        case("json_size not the header's", Refuse, |v| {
            v["config"]["json_size"] = json!("28672");
        }),
        // The device (or header file) holds both copies and the keyslots area.
        cut("image of exactly the header and keyslots area", Load, DATA),
        cut(
            "image 4 KiB shorter than its keyslots area",
            Refuse,
            DATA - 4096,
        ),
    ]
}

/// The JSON text of the copy at `at`.
fn json_of(image: &[u8], at: usize) -> Value {
    let area = &image[at + 4096..at + HDR];
    let end = area.iter().position(|&b| b == 0).unwrap();
    serde_json::from_slice(&area[..end]).unwrap()
}

/// Applies `f` to the JSON of both copies and reseals them.
fn edit(image: &mut [u8], f: &dyn Fn(&mut Value)) {
    for at in [0, HDR] {
        let mut v = json_of(image, at);
        f(&mut v);
        let text = v.to_string();
        let area = &mut image[at + 4096..at + HDR];
        area.fill(0);
        area[..text.len()].copy_from_slice(text.as_bytes());
        let sum = header_checksum(&image[at..at + HDR]);
        image[at + 448..at + 512].fill(0);
        image[at + 448..at + 480].copy_from_slice(&sum);
    }
}

fn base_image() -> Vec<u8> {
    let params = FormatParams {
        kdf: KdfParams::Pbkdf2 {
            hash: Hash::Sha256,
            iterations: 1000,
        },
        digest_iterations: 1000,
        data_offset: DATA,
        ..FormatParams::default()
    };
    let key: Vec<u8> = (0..64u8).map(|i| i ^ 0x5a).collect();
    let mut image = format(&params, b"pw", &key, &mut mdu_luks2::os_random).unwrap();
    image.resize(DATA as usize + (256 << 10), 0);
    image
}

/// cryptsetup's result: `Ok(dump text)` or `Err(its message)`, and
/// whether `isLuks` agreed with it.
fn cryptsetup(bin: &Path, file: &Path) -> (Result<String, String>, bool) {
    let out = Command::new(bin)
        .arg("luksDump")
        .arg(file)
        .output()
        .unwrap();
    let is_luks = Command::new(bin)
        .arg("isLuks")
        .arg(file)
        .status()
        .unwrap()
        .success();
    let r = if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    };
    let agrees = is_luks == r.is_ok();
    (r, agrees)
}

/// mdu's result: `Ok(dump text)` or `Err(why the primary copy was
/// refused)`, and what an unlock with the passphrase does with a header
/// that loads: the keyslot that opens, or why none does.
fn mdu(image: &[u8]) -> (Result<String, String>, String) {
    match Image::load(image) {
        Ok(img) => {
            // What loads is checked, never refused by `check`.
            if let Err(e) = mdu_luks2::check::check(image, None) {
                return (Err(format!("check refuses what loads: {e}")), String::new());
            }
            let unlock = match img.unlock(image, b"pw") {
                Ok(key) => format!("opens (keyslot {})", key.slot),
                Err(e) => format!("refuses: {e}"),
            };
            (Ok(dump::text(&img)), unlock)
        }
        Err(mdu_luks2::Error::NoValidHeader { primary, .. }) => {
            (Err(primary.to_string()), "".into())
        }
        Err(e) => (Err(e.to_string()), "".into()),
    }
}

fn cell(r: &Result<String, String>) -> String {
    match r {
        Ok(_) => "loads".into(),
        Err(e) => format!("refuses: {}", e.replace('|', "\\|")),
    }
}

#[test]
fn headers_load_and_dump_as_in_cryptsetup() {
    let Some(bin) = tools::require(
        Tool::Cryptsetup,
        Search::PathAndSbin,
        "headers_load_and_dump_as_in_cryptsetup",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hdr.img");
    let base = base_image();
    let mut table = String::from(
        "| rule | must | mdu | cryptsetup | mdu unlock |\n| --- | --- | --- | --- | --- |\n",
    );
    let mut failures = Vec::new();
    for c in corpus() {
        let mut image = base.clone();
        edit(&mut image, &*c.edit);
        if let Some(len) = c.len {
            image.truncate(len);
        }
        std::fs::write(&file, &image).unwrap();
        let (ours, unlock) = mdu(&image);
        let (theirs, is_luks_agrees) = cryptsetup(&bin, &file);
        let must = match c.must {
            Must::Load => "load",
            Must::Refuse => "refuse",
        };
        let theirs_cell = if theirs.is_ok() { "loads" } else { "refuses" };
        table.push_str(&format!(
            "| {} | {must} | {} | {theirs_cell} | {} |\n",
            c.rule,
            cell(&ours),
            unlock.replace('|', "\\|")
        ));
        let want_ok = c.must == Must::Load;
        match (&ours, &theirs) {
            _ if !is_luks_agrees => {
                failures.push(format!("{}: isLuks disagrees with luksDump", c.rule))
            }
            (Ok(a), Ok(b)) if a != b => failures.push(format!(
                "{}: the dumps differ\n--- mdu\n{a}\n--- cryptsetup\n{b}",
                c.rule
            )),
            (a, b) if a.is_ok() != want_ok || b.is_ok() != want_ok => failures.push(format!(
                "{}: must {must}; mdu: {}; cryptsetup: {}",
                c.rule,
                cell(a),
                cell(b).lines().next().unwrap_or_default()
            )),
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    check_table(&table);
}

/// The corpus table in CONFORMANCE.md, between its markers.
fn check_table(table: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("CONFORMANCE.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    let (begin, end) = ("<!-- corpus begin -->\n", "<!-- corpus end -->");
    let (Some(a), Some(b)) = (doc.find(begin), doc.find(end)) else {
        panic!("{} lacks the corpus markers", path.display());
    };
    let current = &doc[a + begin.len()..b];
    if current != table {
        if std::env::var("MDU_WRITE_CONFORMANCE").as_deref() == Ok("1") {
            let new = format!("{}{table}{}", &doc[..a + begin.len()], &doc[b..]);
            std::fs::write(&path, new).unwrap();
        } else {
            panic!(
                "CONFORMANCE.md's corpus table is out of date; rerun with MDU_WRITE_CONFORMANCE=1.\nExpected:\n{table}"
            );
        }
    }
}
