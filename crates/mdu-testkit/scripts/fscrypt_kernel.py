#!/usr/bin/env python3
"""The running kernel as the fscrypt oracle of mdu's tests.

Needs root, loop devices, mkfs.ext4 (e2fsprogs) and a kernel with ext4
encryption. Commands:

  probe
      exit 0 when all of that works here, else say what is missing.
  make IMAGE MANIFEST --policy NAME --key FILE --seed N [--scale small|large]
      make an ext4 image, have the kernel encrypt a random tree in it under
      the policy, and write a JSON manifest of what the kernel shows: with
      the key (plaintext names, contents' SHA-256, targets, modes, times)
      and, after a fresh mount without it, the no-key names and targets.
  dirty IMAGE COPY MANIFEST --policy NAME --key FILE
      make an image, write files into an encrypted directory, make them
      durable (sync, then fsync alone for the last ones) and, still
      mounted, copy the image to COPY (so `needs_recovery` is set in
      the copy, as in a crash or a copy of a mounted device); then mount a
      second copy of COPY, which replays its journal, and write a JSON
      manifest of the names written and the names the kernel shows there.
  special IMAGE MANIFEST --policy NAME --key FILE --cp-to DIR
      make an image whose encrypted directory `vault` holds sparse files
      (100 MiB with 4 KiB of data, 1 TiB with 4 KiB at its end, a
      preallocated one), setuid and setgid files, a FIFO, a character and
      a block device, a socket and a subdirectory; `cp -a` it to DIR/kernel
      from the mount (with the key); write a JSON manifest of each entry
      (type, mode, size, st_blocks, device number, SHA-256 of the files
      under 128 MiB).
  cat IMAGE PATH --key FILE --policy NAME
      mount the image, add the key, print the file at PATH (relative to the
      mount) as the kernel decrypts it, as hex on stdout.
  speed --mdu PATH --work DIR [--runs N] [--large-mib N] [--small-mib N]
      whole-process speed: an encrypted tree of a few large files and many
      small ones (1 GiB by default, AES-256-XTS, v2), read by the kernel
      through the mounted file system (`cp -a` into DIR, `cat` to
      /dev/null) and by `mdu fscrypt extract` / `cat` from the unmounted
      image, with hyperfine; the page cache is dropped before every run,
      and `dd` of the whole image is the floor. Prints a markdown table.

Names, targets and paths in the manifest are hex, because encrypted names
shown without the key are bytes, not text.
"""

import argparse
import fcntl
import hashlib
import json
import os
import random
import socket
import stat
import struct
import subprocess
import sys
import tempfile

ADD_KEY = 0xC0506617
SET_POLICY = 0x800C6613

# name -> (mkfs block size, inode size, policy version, flags, log2 data unit)
POLICIES = {
    "v2-pad32": (4096, 256, 2, 0x03, 0),
    "v2-lblk64": (4096, 256, 2, 0x08 | 0x02, 0),
    "v2-lblk32": (1024, 256, 2, 0x10 | 0x01, 0),
    "v2-du512-ino128": (4096, 128, 2, 0x02, 9),
    "v1-pad4": (2048, 256, 1, 0x00, 0),
}
# A fixed v1 descriptor (any 8 bytes; whoever adds a v1 key chooses it).
V1_DESCRIPTOR = bytes.fromhex("0123456789abcdef")


def run(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def mkfs(image, block_size, inode_size, size_mib):
    with open(image, "wb") as f:
        f.truncate(size_mib << 20)
    run("mkfs.ext4", "-q", "-F", "-O", "encrypt,stable_inodes", "-b", str(block_size),
        "-I", str(inode_size), "-E", "lazy_itable_init=0,lazy_journal_init=0", image)


class Mount:
    def __init__(self, image):
        self.image = image
        self.dir = tempfile.mkdtemp(prefix="mdu-fscrypt-")

    def __enter__(self):
        run("mount", "-o", "loop", self.image, self.dir)
        return self.dir

    def __exit__(self, *exc):
        subprocess.run(["umount", self.dir], check=False)
        os.rmdir(self.dir)


def add_key(mnt, key, version):
    spec_type = 1 if version == 1 else 2
    spec = struct.pack("<II", spec_type, 0)
    spec += (V1_DESCRIPTOR if version == 1 else b"").ljust(32, b"\0")
    arg = bytearray(spec + struct.pack("<III", len(key), 0, 0) + bytes(28) + key)
    fd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, ADD_KEY, arg)
    finally:
        os.close(fd)
    return bytes(arg[8:24])  # v2: the identifier the kernel computed


def set_policy(path, version, flags, log2_du, identifier, contents=1, names=4):
    """Modes 1 and 4 by default: AES-256-XTS contents, AES-256-CTS names."""
    if version == 1:
        policy = bytes([0, contents, names, flags]) + V1_DESCRIPTOR
    else:
        policy = bytes([2, contents, names, flags, log2_du, 0, 0, 0]) + identifier
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, SET_POLICY, policy)
    finally:
        os.close(fd)


def random_name(rng, length):
    """A name of about `length` bytes: ASCII, with some multi-byte UTF-8."""
    pieces = []
    total = 0
    while total < length:
        c = rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-_.é日本ß ")
        b = c.encode()
        if total + len(b) > length:
            c, b = "x", b"x"
        pieces.append(c)
        total += len(b)
    name = "".join(pieces)
    if name in (".", ".."):
        name = "n" + name
    return name.encode()


def make_tree(root, rng, scale, block_size):
    big = 3 << 20 if scale == "small" else 96 << 20
    sizes = [0, 1, 15, 16, 17, block_size - 1, block_size, block_size + 1,
             3 * block_size, 100_000, rng.randrange(1, big)]
    if scale == "large":
        sizes += [rng.randrange(1, big) for _ in range(6)]
        sizes += [rng.randrange(0, 64 << 10) for _ in range(400)]
    used = set()

    def fresh(d, length):
        while True:
            n = random_name(rng, length)
            if (d, n) not in used:
                used.add((d, n))
                return n

    def write_file(d, name, size):
        p = os.path.join(d, name)
        with open(p, "wb") as f:
            f.write(rng.randbytes(size))
        os.chmod(p, rng.choice([0o600, 0o644, 0o755, 0o4711]))
        os.utime(p, ns=(rng.randrange(1 << 40) * 1000 + 123, rng.randrange(1 << 40) * 1000 + 789))

    sub = os.path.join(root, b"sub")
    os.mkdir(sub)
    deep = os.path.join(sub, fresh(sub, 40))
    os.mkdir(deep)
    for i, size in enumerate(sizes):
        d = [root, sub, deep][i % 3]
        write_file(d, fresh(d, rng.choice([1, 5, 16, 17, 31, 33, 100])), size)
    # Names of every interesting length, and enough of them that `sub`
    # becomes an indexed (htree) directory.
    for length in [1, 2, 15, 16, 17, 31, 32, 33, 100, 148, 149, 150, 180, 192, 224, 225, 254, 255]:
        write_file(sub, fresh(sub, length), rng.randrange(0, 200))
    for _ in range(60):
        write_file(sub, fresh(sub, rng.randrange(120, 256)), rng.randrange(0, 50))
    # A sparse file: a hole, data, a hole at the end.
    p = os.path.join(root, b"sparse")
    with open(p, "wb") as f:
        f.seek(1 << 20)
        f.write(rng.randbytes(5000))
        f.truncate(3 << 20)
    # Unwritten extents: allocated, partly written.
    p = os.path.join(root, b"fallocated")
    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
    os.posix_fallocate(fd, 0, 256 << 10)
    os.pwrite(fd, rng.randbytes(3000), 70_000)
    os.close(fd)
    # Symlinks: fast (target in the inode) and slow (a block).
    for length in [1, 10, 30, 40, 60, 200, block_size - 3]:
        target = random_name(rng, length)
        os.symlink(target, os.path.join(root, fresh(root, 8 + length % 50)))
    os.mkdir(os.path.join(deep, b"empty"))
    os.mkfifo(os.path.join(root, b"fifo"))


def describe(top, with_key):
    """Every entry under `top`, as the kernel shows it now."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            e = {"path": os.path.relpath(p, top).hex(), "mode": st.st_mode,
                 "ino": st.st_ino, "size": st.st_size}
            if os.path.islink(p):
                e["type"] = "symlink"
                e["target"] = os.readlink(p).hex()
            elif os.path.isdir(p):
                e["type"] = "dir"
            elif os.path.isfile(p):
                e["type"] = "file"
                if with_key:
                    e["sha256"] = hashlib.sha256(open(p, "rb").read()).hexdigest()
                    e["mtime_ns"] = st.st_mtime_ns
            else:
                e["type"] = "other"
            out.append(e)
    return out


def policy_dir(version):
    return b"vault"


def cmd_make(a):
    bs, isize, version, flags, log2_du = POLICIES[a.policy]
    key = open(a.key, "rb").read()
    rng = random.Random(a.seed)
    mkfs(a.image, bs, isize, 64 if a.scale == "small" else 1200)
    with Mount(a.image) as mnt:
        identifier = add_key(mnt, key, version)
        d = os.path.join(os.fsencode(mnt), policy_dir(version))
        os.mkdir(d)
        set_policy(d, version, flags, log2_du, identifier)
        make_tree(d, rng, a.scale, bs)
        with_key = describe(d, True)
        subprocess.run(["sync"], check=True)
    with Mount(a.image) as mnt:
        without_key = describe(os.path.join(os.fsencode(mnt), policy_dir(version)), False)
    manifest = {
        "policy": a.policy, "block_size": bs, "inode_size": isize, "version": version,
        "flags": flags, "log2_data_unit_size": log2_du, "identifier": identifier.hex(),
        "v1_descriptor": V1_DESCRIPTOR.hex(), "dir": policy_dir(version).hex(),
        "with_key": with_key, "without_key": without_key,
    }
    with open(a.manifest, "w") as f:
        json.dump(manifest, f)


def cmd_dirty(a):
    bs, isize, version, flags, log2_du = POLICIES[a.policy]
    key = open(a.key, "rb").read()
    mkfs(a.image, bs, isize, 64)
    written = []
    with Mount(a.image) as mnt:
        identifier = add_key(mnt, key, version)
        d = os.path.join(os.fsencode(mnt), b"vault")
        os.mkdir(d)
        set_policy(d, version, flags, log2_du, identifier)
        # Twenty files synced to their home blocks, twenty more made durable
        # by fsync alone: their directory entries are in the journal.
        for i in range(40):
            if i == 20:
                os.sync()
            name = b"written-while-mounted-%02d" % i
            with open(os.path.join(d, name), "wb") as f:
                f.write(name * 50)
                f.flush()
                os.fsync(f.fileno())
            written.append(name)
        with open(a.image, "rb") as src, open(a.copy, "wb") as dst:
            dst.write(src.read())
    replayed = a.copy + ".kernel"
    with open(a.copy, "rb") as src, open(replayed, "wb") as dst:
        dst.write(src.read())
    try:
        with Mount(replayed) as mnt:
            add_key(mnt, key, version)
            shown = sorted(os.listdir(os.path.join(os.fsencode(mnt), b"vault")))
    finally:
        os.unlink(replayed)
    with open(a.manifest, "w") as f:
        json.dump({"written": [n.hex() for n in written],
                   "kernel_after_replay": [n.hex() for n in shown],
                   "identifier": identifier.hex(),
                   "v1_descriptor": V1_DESCRIPTOR.hex()}, f)


def cmd_special(a):
    bs, isize, version, flags, log2_du = POLICIES[a.policy]
    key = open(a.key, "rb").read()
    mkfs(a.image, bs, isize, 64)
    with Mount(a.image) as mnt:
        identifier = add_key(mnt, key, version)
        d = os.path.join(os.fsencode(mnt), b"vault")
        os.mkdir(d)
        set_policy(d, version, flags, log2_du, identifier)
        data = bytes(range(256)) * 16
        with open(os.path.join(d, b"sparse-100m"), "wb") as f:
            f.truncate(100 << 20)
            f.seek(50 << 20)
            f.write(data)
        with open(os.path.join(d, b"sparse-1t"), "wb") as f:
            f.truncate(1 << 40)
            f.seek((1 << 40) - 4096)
            f.write(data)
        fd = os.open(os.path.join(d, b"preallocated"), os.O_CREAT | os.O_WRONLY, 0o644)
        os.posix_fallocate(fd, 0, 1 << 20)
        os.pwrite(fd, data, 8192)
        os.close(fd)
        for name, mode in [(b"setuid", 0o4755), (b"setgid", 0o2755), (b"plain", 0o640)]:
            p = os.path.join(d, name)
            with open(p, "wb") as f:
                f.write(name * 100)
            os.chmod(p, mode)
        os.mkdir(os.path.join(d, b"sub"), 0o2775)
        os.chmod(os.path.join(d, b"sub"), 0o2775)
        with open(os.path.join(d, b"sub", b"inner"), "wb") as f:
            f.write(b"inner\n")
        os.mkfifo(os.path.join(d, b"fifo"), 0o620)
        os.mknod(os.path.join(d, b"chardev"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        os.mknod(os.path.join(d, b"blockdev"), 0o640 | stat.S_IFBLK, os.makedev(8, 300))
        s = socket.socket(socket.AF_UNIX)
        s.bind(os.path.join(d, b"socket"))
        s.close()
        subprocess.run(["sync"], check=True)
        subprocess.run(["cp", "-a", d, os.path.join(a.cp_to, "kernel")], check=True)
        entries = []
        for dirpath, dirnames, filenames in os.walk(d):
            for name in sorted(dirnames + filenames):
                p = os.path.join(dirpath, name)
                st = os.lstat(p)
                e = {"path": os.path.relpath(p, d).hex(), "mode": st.st_mode,
                     "size": st.st_size, "blocks": st.st_blocks, "rdev": st.st_rdev}
                if stat.S_ISREG(st.st_mode) and st.st_size < (128 << 20):
                    e["sha256"] = hashlib.sha256(open(p, "rb").read()).hexdigest()
                entries.append(e)
    with open(a.manifest, "w") as f:
        json.dump({"entries": entries, "identifier": identifier.hex(),
                   "v1_descriptor": V1_DESCRIPTOR.hex()}, f)


def cmd_cat(a):
    version = POLICIES[a.policy][2]
    key = open(a.key, "rb").read()
    with Mount(a.image) as mnt:
        add_key(mnt, key, version)
        data = open(os.path.join(os.fsencode(mnt), bytes.fromhex(a.path)), "rb").read()
    sys.stdout.write(data.hex())


def make_speed_tree(root, large_mib, small_mib):
    """A few large files and many small ones: `large/` holds files of 192
    MiB (the last one shorter), `small/` 40 directories of files of 1 byte
    to 64 KiB (32 KiB on average)."""
    chunk = os.urandom(1 << 20)
    large = os.path.join(root, b"large")
    os.mkdir(large)
    left, i = large_mib, 0
    while left > 0:
        n = min(left, 192)
        with open(os.path.join(large, b"f%d" % i), "wb") as f:
            for j in range(n):
                # Every MiB differs: the first 8 bytes carry its number.
                f.write(struct.pack("<Q", i << 32 | j) + chunk[8:])
        left -= n
        i += 1
    small = os.path.join(root, b"small")
    os.mkdir(small)
    rng = random.Random(7)
    budget, k = small_mib << 20, 0
    while budget > 0:
        d = os.path.join(small, b"d%02d" % (k % 40))
        if not os.path.isdir(d):
            os.mkdir(d)
        size = min(budget, rng.randrange(1, 64 << 10))
        with open(os.path.join(d, b"file-%06d" % k), "wb") as f:
            f.write(chunk[(k * 4096) % (1 << 19):][:size])
        budget -= size
        k += 1
    return k


def hyperfine(work, name, prepare, commands, runs):
    out = os.path.join(work, name + ".json")
    cmd = ["hyperfine", "--runs", str(runs), "--prepare", prepare, "--export-json", out]
    for label, c in commands:
        cmd += ["-n", label, c]
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    res = json.load(open(out))["results"]
    return {r["command"]: r["median"] for r in res}


def cmd_speed(a):
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    image, key = os.path.join(work, "speed.img"), os.path.join(work, "key")
    with open(key, "wb") as f:
        f.write(os.urandom(64))
    total_mib = a.large_mib + a.small_mib
    # Zero-filled, not sparse: `dd` of the image then reads every byte.
    run("dd", "if=/dev/zero", "of=" + image, "bs=4M",
        "count=%d" % ((total_mib * 5 // 4 + 160) // 4))
    run("mkfs.ext4", "-q", "-F", "-O", "encrypt,stable_inodes", "-b", "4096", "-I", "256",
        "-E", "lazy_itable_init=0,lazy_journal_init=0", image)
    with Mount(image) as mnt:
        identifier = add_key(mnt, open(key, "rb").read(), 2)
        d = os.path.join(os.fsencode(mnt), b"vault")
        os.mkdir(d)
        set_policy(d, 2, 0x02, 0, identifier)
        small_files = make_speed_tree(d, a.large_mib, a.small_mib)
        run("sync")
    out = os.path.join(work, "out")
    prepare = f"rm -rf {out}; mkdir {out}; sync; echo 3 > /proc/sys/vm/drop_caches"
    mdu, rows = a.mdu, []
    with Mount(image) as mnt:
        add_key(mnt, open(key, "rb").read(), 2)
        v = os.path.join(mnt, "vault")
        for what, sub, mib in [("large files", "large", a.large_mib),
                               (f"{small_files} small files", "small", a.small_mib),
                               ("the whole tree", "", total_mib)]:
            src = os.path.join(v, sub) if sub else v
            r = hyperfine(work, "extract-" + (sub or "all"), prepare, [
                ("kernel", f"cp -a {src} {out}/k"),
                ("mdu", f"{mdu} fscrypt extract {image} {os.path.join('vault', sub)} --key {key} --out {out}/m"),
            ], a.runs)
            rows.append((f"extract {what} ({mib} MiB): `cp -a` from the mount vs "
                         "`mdu fscrypt extract`", mib, r["kernel"], r["mdu"]))
        f0 = os.path.join(v, "large", "f0")
        mib = os.path.getsize(f0) >> 20
        r = hyperfine(work, "cat", prepare, [
            ("kernel", f"cat {f0} > /dev/null"),
            ("mdu", f"{mdu} fscrypt cat {image} vault/large/f0 --key {key} > /dev/null"),
        ], a.runs)
        rows.append((f"one {mib} MiB file to /dev/null: `cat` from the mount vs "
                     "`mdu fscrypt cat`", mib, r["kernel"], r["mdu"]))
    r = hyperfine(work, "floor", prepare, [("dd", f"dd if={image} of=/dev/null bs=4M")], a.runs)
    image_mib = os.path.getsize(image) >> 20
    print("| case | kernel | mdu | mdu / kernel |")
    print("|---|---:|---:|---:|")
    for what, mib, k, m in rows:
        print(f"| {what} | {k:.2f} s ({mib / k:.0f} MiB/s) | {m:.2f} s ({mib / m:.0f} MiB/s) "
              f"| ×{k / m:.2f} |")
    print(f"| floor: `dd` of the whole image ({image_mib} MiB), cold | "
          f"{r['dd']:.2f} s ({image_mib / r['dd']:.0f} MiB/s) | | |")
    print(f"\nMedians of {a.runs} runs (hyperfine), the page cache dropped before each run. "
          f"The kernel's xts(aes): {kernel_xts_driver()}.")


def kernel_xts_driver():
    """The driver behind the kernel's xts(aes), and its priority."""
    try:
        blocks = open("/proc/crypto").read().split("\n\n")
    except OSError:
        return "unknown (/proc/crypto unreadable)"
    best = None
    for b in blocks:
        f = dict(line.split(":", 1) for line in b.splitlines() if ":" in line)
        f = {k.strip(): v.strip() for k, v in f.items()}
        if f.get("name") == "xts(aes)":
            prio = int(f.get("priority", "0"))
            if best is None or prio > best[0]:
                best = (prio, f.get("driver", "?"))
    return "none" if best is None else f"{best[1]} (priority {best[0]})"


def cmd_probe(_a):
    if os.geteuid() != 0:
        sys.exit("needs root (mount -o loop and the fscrypt ioctls)")
    if not os.path.exists("/dev/loop-control"):
        sys.exit("no loop devices (/dev/loop-control is missing)")
    with tempfile.TemporaryDirectory() as t:
        image = os.path.join(t, "probe.img")
        try:
            mkfs(image, 4096, 256, 8)
        except (OSError, subprocess.CalledProcessError) as e:
            sys.exit(f"mkfs.ext4 -O encrypt failed: {e}")
        try:
            with Mount(image) as mnt:
                identifier = add_key(mnt, bytes(range(64)), 2)
                d = os.path.join(mnt, "d")
                os.mkdir(d)
                set_policy(d, 2, 0x03, 0, identifier)
                with open(os.path.join(d, "f"), "wb") as f:
                    f.write(b"x")
        except subprocess.CalledProcessError as e:
            sys.exit(f"mount -o loop failed: {e.stderr.decode(errors='replace').strip()}")
        except OSError as e:
            sys.exit(f"the kernel refused ext4 encryption: {e}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("probe")
    m = sub.add_parser("make")
    m.add_argument("image")
    m.add_argument("manifest")
    m.add_argument("--policy", required=True, choices=sorted(POLICIES))
    m.add_argument("--key", required=True)
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--scale", choices=["small", "large"], default="small")
    sp = sub.add_parser("speed")
    sp.add_argument("--mdu", required=True, help="the mdu binary")
    sp.add_argument("--work", required=True, help="a directory for the image and outputs")
    sp.add_argument("--runs", type=int, default=5)
    sp.add_argument("--large-mib", type=int, default=768)
    sp.add_argument("--small-mib", type=int, default=256)
    dy = sub.add_parser("dirty")
    dy.add_argument("image")
    dy.add_argument("copy")
    dy.add_argument("manifest")
    dy.add_argument("--policy", required=True, choices=sorted(POLICIES))
    dy.add_argument("--key", required=True)
    sp2 = sub.add_parser("special")
    sp2.add_argument("image")
    sp2.add_argument("manifest")
    sp2.add_argument("--policy", required=True, choices=sorted(POLICIES))
    sp2.add_argument("--key", required=True)
    sp2.add_argument("--cp-to", required=True)
    c = sub.add_parser("cat")
    c.add_argument("image")
    c.add_argument("path", help="hex of the path below the mount point")
    c.add_argument("--key", required=True)
    c.add_argument("--policy", required=True, choices=sorted(POLICIES))
    a = p.parse_args()
    {"probe": cmd_probe, "make": cmd_make, "dirty": cmd_dirty, "special": cmd_special,
     "cat": cmd_cat, "speed": cmd_speed}[a.cmd](a)


if __name__ == "__main__":
    main()
