#!/usr/bin/env python3
"""The metadata-check table: hostile LUKS2 headers (the 2025 confidential-VM
attack shapes and the layouts a single header cannot have), each rewritten
into a cryptsetup-made image with its checksums recomputed, then `mdu luks
check` beside `cryptsetup open --test-passphrase`; and honest images from
several luksFormat option sets. Prints Markdown tables. Run as:

    luks_check_table.py MDU_BINARY

It needs cryptsetup 2.6 on PATH and writes into a temporary directory.
"""
import json, hashlib, subprocess, shutil, os, sys, tempfile
MDU = os.path.abspath(sys.argv[1])
D = tempfile.mkdtemp(prefix="mdu-check-")
os.chdir(D)
open("key", "wb").write(b"pw")
def sh(*a): return subprocess.run(a, capture_output=True, text=True)
if True:
    subprocess.run(["truncate", "-s", "32M", "base.img"])
    r = sh("cryptsetup", "luksFormat", "-q", "--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--key-file", "key", "base.img")
    assert r.returncode == 0, r.stderr
base = open("base.img", "rb").read()
HDR = int.from_bytes(base[8:16], "big")
def js(img, at=0):
    t = img[at+4096:at+HDR].split(b"\0")[0]
    return json.loads(t)
def put(img, v, ats=(0, None)):
    img = bytearray(img)
    for at in ats:
        at = HDR if at is None else at
        t = json.dumps(v, separators=(",", ":")).encode()
        img[at+4096:at+HDR] = t + bytes(HDR - 4096 - len(t))
        img[at+448:at+512] = bytes(64)
        img[at+448:at+480] = hashlib.sha256(bytes(img[at:at+HDR])).digest()
    return bytes(img)
def case(name, edit, ats=(0, None)):
    v = js(base)
    edit(v)
    open("h.img", "wb").write(put(base, v, ats))
    r = sh(MDU, "luks", "check", "h.img")
    cs = sh("cryptsetup", "open", "--test-passphrase", "--key-file", "key", "h.img")
    out = (r.stdout + r.stderr).strip().replace("\n", " / ")
    print(f"| {name} | exit {r.returncode}: {out[:230]} | {'opens' if cs.returncode == 0 else 'refused'} |")
print("| hostile shape | `mdu luks check` | cryptsetup 2.6.1 `open --test-passphrase` |")
print("|---|---|---|")
case("honest (cryptsetup luksFormat)", lambda v: None)
case("segment `cipher_null-ecb` (CVE-2025-59054)", lambda v: v["segments"]["0"].update(encryption="cipher_null-ecb"))
case("keyslot area `cipher_null-ecb` (CVE-2025-58356: the key in the clear)", lambda v: v["keyslots"]["0"]["area"].update(encryption="cipher_null-ecb"))
case("segment `aes-cbc-null` (a constant IV)", lambda v: v["segments"]["0"].update(encryption="aes-cbc-null"))
case("segment `aes-ecb`", lambda v: v["segments"]["0"].update(encryption="aes-ecb"))
case("segment offset inside the keyslots area", lambda v: v["segments"]["0"].update(offset="32768"))
case("segment past the end of the image", lambda v: v["segments"]["0"].update(size=str(64 << 20)))
def two(v):
    s = dict(v["segments"]["0"]); s.update(offset=str(24 << 20), size="4194304", iv_tweak="0")
    v["segments"]["0"]["size"] = str(4 << 20); v["segments"]["1"] = s; v["digests"]["0"]["segments"].append("1")
case("two crypt segments, the second at a chosen offset", two)
def ovl(v):
    s = dict(v["segments"]["0"]); s.update(offset=str(17 << 20), size="4194304")
    v["segments"]["0"]["size"] = str(4 << 20); v["segments"]["1"] = s; v["digests"]["0"]["segments"].append("1")
case("two segments that overlap", ovl)
case("digest bound to no segment", lambda v: v["digests"]["0"].update(segments=[]))
case("keyslot bound to no digest", lambda v: v["digests"]["0"].update(keyslots=[]))
def ks_ovl(v):
    k = json.loads(json.dumps(v["keyslots"]["0"])); v["keyslots"]["1"] = k
case("two keyslots with the same area", ks_ovl)
case("unknown mandatory requirement", lambda v: v["config"].update(requirements={"mandatory": ["evil-feature"]}))
case("copies that disagree (secondary segment at another offset)", lambda v: v["segments"]["0"].update(offset=str(20 << 20)), ats=(None,))
case("backup-previous flag on the data segment", lambda v: v["segments"]["0"].update(flags=["backup-previous"]))
print()
print("| honest image, cryptsetup 2.6.1 `luksFormat` options | `mdu luks check` |")
print("|---|---|")
for opts in [[], ["--pbkdf", "argon2i", "--pbkdf-memory", "65536"], ["--cipher", "aes-cbc-essiv:sha256", "--key-size", "256"],
             ["--sector-size", "4096", "--hash", "sha512"], ["--luks2-metadata-size", "64k", "--luks2-keyslots-size", "8m"],
             ["--label", "root", "--subsystem", "mdu", "--offset", "65536"], ["--header", "d.hdr"]]:
    for f in ["o.img", "d.hdr"]:
        if os.path.exists(f): os.remove(f)
    subprocess.run(["truncate", "-s", "48M", "o.img"])
    r = sh("cryptsetup", "luksFormat", "-q", "--type", "luks2", "--key-file", "key", *opts, "o.img")
    assert r.returncode == 0, (opts, r.stderr)
    hdr = ["--header", "d.hdr"] if "--header" in opts else []
    c = sh(MDU, "luks", "check", *hdr, "o.img")
    print(f"| `{' '.join(opts) or '(defaults: argon2id, aes-xts-plain64 512-bit)'}` | exit {c.returncode}: {(c.stdout + c.stderr).strip()} |")

shutil.rmtree(D)
