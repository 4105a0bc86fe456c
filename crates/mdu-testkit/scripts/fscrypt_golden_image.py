#!/usr/bin/env python3
"""Regenerates mdu-fscrypt's committed ext4 image and its golden listing.

The running kernel encrypts a small fixed tree in a 1 MiB ext4 image
(1 KiB blocks, 192 inodes, one group, no journal, no resize inode, no
flex_bg: `encrypt,stable_inodes,inline_data` and mkfs's defaults); the
listing is what the kernel shows of it, mounted with the keys and again
without them. The test `crates/mdu-fscrypt/tests/golden_image.rs` reads
the image offline and checks every entry against that listing.

Needs root, loop devices, mkfs.ext4 and ext4 encryption, as
`fscrypt_kernel.py` (whose mkfs, mount, key and policy helpers it uses).
Usage:

  fscrypt_golden_image.py make [DIR]
      write into DIR (default: crates/mdu-fscrypt/tests/data/fscrypt-ext4)
      image.nz (the image, its all-zero blocks left out, see below),
      golden.json and the three test keys, v2-a.key, v2-b.key and v1.key.
      The keys are fixed bytes; the image is not reproducible byte for
      byte (every encrypted file's nonce is random), so the image and the
      listing are always committed together.
  fscrypt_golden_image.py expand IMAGE.nz IMAGE
      write the raw image, e.g. to run `mdu fscrypt ls` or `debugfs` on it.

image.nz: the magic `MDUZERO1`, the block size and the image size (u32 and
u64, little-endian), one bit per block (least significant first: the
block holds a nonzero byte), then those blocks in order.

The tree (no directory under Adiantum, AES-256-HCTR2 or AES-128-CBC-ESSIV:
the kernel it was first made on lacks them, ENOPKG; add one to POLICIES
where the kernel has them):

  readme.txt, plain.bin     unencrypted (the first one inline)
  plain-dir/note            unencrypted (both inline)
  v2/                       v2, AES-256-XTS / AES-256-CTS, padding 32, key v2-a:
                            files of 0, 1, 100, 1024 and 3089 bytes, one with
                            holes, one with a 255-byte name, a fast and a slow
                            symlink, sub/ and sub/deeper/, many/ (an htree)
  v1/                       v1, AES-256-XTS / AES-256-CTS, padding 4, key v1;
                            twelve 180-byte names
  lblk64/, lblk32/          v2, IV_INO_LBLK_64 and IV_INO_LBLK_32, key v2-a
  du512/                    v2, 512-byte data units, key v2-b
"""

import argparse
import hashlib
import json
import os
import stat
import struct
import subprocess
import sys

from fscrypt_kernel import V1_DESCRIPTOR, Mount, add_key, run, set_policy

BLOCK = 1024
SIZE_MIB = 1
MAGIC = b"MDUZERO1"
# Fixed test keys: never a secret.
KEYS = {
    "v2-a": bytes(range(64)),
    "v2-b": bytes((0x80 + 3 * i) & 0xFF for i in range(64)),
    "v1": bytes((7 * i + 0x35) & 0xFF for i in range(64)),
}
# A fixed UUID (the IV_INO_LBLK keys derive from it) and hash seed.
UUID = "6d647566-7363-7279-7074-2d676f6c6465"
HASH_SEED = "8f6c3c1e-4a2b-4d5e-9f10-112233445566"
# A fixed time for mkfs and for every file.
EPOCH = 1_700_000_000

# dir -> (policy version, contents mode, names mode, flags, log2 data unit, key)
POLICIES = {
    b"v2": (2, 1, 4, 0x03, 0, "v2-a"),
    b"v1": (1, 1, 4, 0x00, 0, "v1"),
    b"lblk64": (2, 1, 4, 0x08 | 0x03, 0, "v2-a"),
    b"lblk32": (2, 1, 4, 0x10 | 0x03, 0, "v2-a"),
    b"du512": (2, 1, 4, 0x03, 9, "v2-b"),
}


def data(seed, size):
    """`size` bytes that differ per file and per 16-byte block."""
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(b"%s/%d" % (seed, counter)).digest()
        counter += 1
    return bytes(out[:size])


def write(root, rel, size, when):
    """File `rel` under `root`: its contents follow from its path."""
    path = os.path.join(root, rel)
    with open(path, "wb") as f:
        f.write(data(rel, size))
    os.utime(path, ns=(when, when))


def fill(mnt, identifiers):
    """The tree; every file gets its own mtime."""
    when = iter(range(EPOCH * 10**9 + 123_456_789, 1 << 62, 10**9 + 1))
    root = os.fsencode(mnt)
    write(root, b"readme.txt", 40, next(when))
    write(root, b"plain.bin", 3000, next(when))
    os.mkdir(os.path.join(root, b"plain-dir"))
    write(root, b"plain-dir/note", 20, next(when))
    for name, (version, contents, names, flags, log2_du, key) in POLICIES.items():
        d = os.path.join(root, name)
        os.mkdir(d)
        set_policy(d, version, flags, log2_du, identifiers[key], contents, names)
        sub = os.path.join(d, b"sub")
        os.mkdir(sub)
        write(root, name + b"/file", 2600, next(when))
        write(root, name + b"/sub/inner", 10, next(when))
        os.symlink(b"file", os.path.join(d, b"link"))
    v2 = os.path.join(root, b"v2")
    for size in [0, 1, 100, 1024, 3089]:
        write(root, b"v2/size-%d" % size, size, next(when))
    # Holes: data in blocks 0 and 10, a hole between and one at the end.
    p = os.path.join(v2, b"sparse")
    with open(p, "wb") as f:
        f.write(data(b"sparse-0", 700))
        f.seek(10 * BLOCK + 100)
        f.write(data(b"sparse-10", 500))
        f.truncate(16 * BLOCK)
    os.utime(p, ns=(next(when),) * 2)
    long_name = (b"long-name-" + b"0123456789abcdef" * 16)[:255]
    write(root, b"v2/" + long_name, 33, next(when))
    # A fast symlink (its target in the inode) and a slow one (a block).
    os.symlink(b"size-100", os.path.join(v2, b"link-short"))
    os.symlink(b"sub/" + b"../sub/" * 56 + b"inner", os.path.join(v2, b"link-long"))
    os.mkdir(os.path.join(v2, b"sub", b"deeper"))
    write(root, b"v2/sub/deeper/leaf", 1500, next(when))
    # Enough bytes of names under the v1 key (2160) that a wrong key is
    # refused by the names it decrypts (see mdu-fscrypt's `V1Check`).
    for i in range(12):
        name = (b"v1-name-%02d-" % i + b"abcdefghijklmnopqrstuvwxyz" * 7)[:180]
        write(root, b"v1/" + name, 0, next(when))
    # Enough entries that the directory is indexed (an htree).
    many = os.path.join(v2, b"many")
    os.mkdir(many)
    for i in range(48):
        write(root, b"v2/many/entry-%02d-of-an-indexed-directory" % i, 0, next(when))


def describe(top, with_key):
    """Every entry under `top` as the kernel shows it now, by inode."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            e = {"path": os.path.relpath(p, top).decode(), "ino": st.st_ino,
                 "mode": st.st_mode}
            if stat.S_ISLNK(st.st_mode):
                e["type"] = "symlink"
                e["target"] = os.readlink(p).decode()
            elif stat.S_ISDIR(st.st_mode):
                e["type"] = "dir"
            else:
                e["type"] = "file"
                e["size"] = st.st_size
                e["blocks"] = st.st_blocks
                e["mtime_ns"] = st.st_mtime_ns
                if with_key:
                    e["sha256"] = hashlib.sha256(open(p, "rb").read()).hexdigest()
            out[st.st_ino] = e
    return out


def trim(raw):
    """The image without its all-zero blocks (the `image.nz` format)."""
    blocks = [raw[i:i + BLOCK] for i in range(0, len(raw), BLOCK)]
    bitmap = bytearray((len(blocks) + 7) // 8)
    kept = []
    for i, b in enumerate(blocks):
        if any(b):
            bitmap[i // 8] |= 1 << (i % 8)
            kept.append(b)
    return MAGIC + struct.pack("<IQ", BLOCK, len(raw)) + bytes(bitmap) + b"".join(kept)


def expand(nz):
    if nz[:8] != MAGIC:
        sys.exit("not an image.nz file")
    bs, size = struct.unpack("<IQ", nz[8:20])
    count = size // bs
    bitmap = nz[20:20 + (count + 7) // 8]
    at = 20 + len(bitmap)
    out = bytearray(size)
    for i in range(count):
        if bitmap[i // 8] >> (i % 8) & 1:
            out[i * bs:(i + 1) * bs] = nz[at:at + bs]
            at += bs
    return bytes(out)


def cmd_make(a):
    out = a.dir
    os.makedirs(out, exist_ok=True)
    raw_path = os.path.join(out, "image.raw.tmp")
    with open(raw_path, "wb") as f:
        f.truncate(SIZE_MIB << 20)
    env = dict(os.environ, E2FSPROGS_FAKE_TIME=str(EPOCH))
    subprocess.run(
        ["mkfs.ext4", "-q", "-F", "-b", str(BLOCK), "-I", "256", "-N", "192",
         "-O", "encrypt,stable_inodes,inline_data,^has_journal,^resize_inode,^flex_bg", "-U", UUID,
         "-E", f"lazy_itable_init=0,hash_seed={HASH_SEED}", raw_path],
        check=True, env=env)
    try:
        with Mount(raw_path) as mnt:
            identifiers = {}
            for name, key in KEYS.items():
                version = 1 if name == "v1" else 2
                identifiers[name] = add_key(mnt, key, version)
            fill(mnt, identifiers)
            with_key = describe(os.fsencode(mnt), True)
            run("sync")
        with Mount(raw_path) as mnt:
            without_key = describe(os.fsencode(mnt), False)
        run("e2fsck", "-fn", raw_path)
        raw = open(raw_path, "rb").read()
    finally:
        os.unlink(raw_path)
    entries = []
    for ino, e in sorted(with_key.items(), key=lambda kv: kv[1]["path"]):
        bare = without_key[ino]
        e["nokey_path"] = bare["path"]
        if "target" in e:
            e["nokey_target"] = bare["target"]
        entries.append(e)
    dirs = []
    for name, (version, contents, names, flags, log2_du, key) in POLICIES.items():
        dirs.append({"path": name.decode(), "version": version, "contents_mode": contents,
                     "filenames_mode": names, "flags": flags,
                     "log2_data_unit_size": log2_du, "key": key})
    keys = []
    for name, key in KEYS.items():
        with open(os.path.join(out, name + ".key"), "wb") as f:
            f.write(key)
        k = {"name": name, "file": name + ".key"}
        if name == "v1":
            k["descriptor"] = V1_DESCRIPTOR.hex()
        else:
            k["identifier"] = identifiers[name].hex()
        keys.append(k)
    nz = trim(raw)
    assert expand(nz) == raw
    with open(os.path.join(out, "image.nz"), "wb") as f:
        f.write(nz)
    golden = {
        "made_by": "crates/mdu-testkit/scripts/fscrypt_golden_image.py",
        "kernel": os.uname().release,
        "image": {"file": "image.nz", "size": len(raw), "block_size": BLOCK,
                  "sha256": hashlib.sha256(raw).hexdigest()},
        "keys": keys, "policies": dirs, "entries": entries,
    }
    with open(os.path.join(out, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    print(f"{out}: image.nz {len(nz)} bytes ({len(raw)} expanded), {len(entries)} entries")


def cmd_expand(a):
    with open(a.image, "rb") as f:
        raw = expand(f.read())
    with open(a.out, "wb") as f:
        f.write(raw)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "..", "mdu-fscrypt", "tests", "data", "fscrypt-ext4")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir", nargs="?", default=os.path.normpath(default))
    e = sub.add_parser("expand")
    e.add_argument("image")
    e.add_argument("out")
    a = p.parse_args()
    {"make": cmd_make, "expand": cmd_expand}[a.cmd](a)


if __name__ == "__main__":
    main()
