#!/usr/bin/env python3
"""Kill `mdu luks reencrypt` and `cryptsetup reencrypt` at every sync point
and check that a resume loses nothing.

For each configuration the killing tool runs under strace, killed
(SIGKILL) on entry to its N-th fsync/fdatasync, for N = 1, 2, ... until a
run ends by itself. The resuming tool then finishes the run (cryptsetup:
`repair`, then `reencrypt --resume-only`; mdu: `luks reencrypt
--resume-only`), and the data are read back through the final header and
compared with the original plaintext.

Each point is reported as ok (the data read back through the final
header), untouched (killed before any byte was converted, so the data are
as they were and a new run starts over), or as LOST (the data differ) or
STUCK (no header opens them) with the resumer's message. Run as:

    luks_reencrypt_sweep.py MDU_BINARY [--size-mib 64] [--hotzone-mib 4]
        [--only TEXT] [--random N [--seed S]]

With --random N, each configuration is instead killed N times at a random
moment of its run (SIGKILL after a delay drawn up to the length of an
uninterrupted run, seeded), which also lands inside writes: a hotzone or
a header copy partly written.

It needs cryptsetup 2.6 and strace on PATH, and writes into a temporary
directory. The figures go into the closing note of the work they check.
"""

import argparse
import os
import random
import time
import shutil
import subprocess
import sys
import tempfile

PBKDF2 = ["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"]


def sh(argv, cwd):
    return subprocess.run(argv, cwd=cwd, capture_output=True)


def killed(argv, n, cwd):
    """Runs argv killed at its n-th sync; False when it ran to its end."""
    r = sh(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync,fdatasync",
            f"--inject=fsync,fdatasync:signal=KILL:when={n}"] + argv, cwd)
    return r.returncode != 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mdu")
    ap.add_argument("--size-mib", type=int, default=64)
    ap.add_argument("--hotzone-mib", type=int, default=4)
    ap.add_argument("--only", help="run only configurations whose name contains this")
    ap.add_argument("--random", type=int, default=0, help="random-moment kills per configuration")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    mdu = os.path.abspath(a.mdu)
    d = tempfile.mkdtemp(prefix="mdu-sweep-")
    try:
        run_all(mdu, d, a)
    finally:
        shutil.rmtree(d)


def run_all(mdu, d, a):
    j = lambda n: os.path.join(d, n)
    with open(j("key"), "wb") as f:
        f.write(os.urandom(24))
    data_len = (a.size_mib - 16) << 20
    plain = os.urandom(data_len)
    with open(j("plain"), "wb") as f:
        f.write(plain)
    hz = str(a.hotzone_mib << 20)
    key = j("key")
    # The LUKS2 image of the plaintext (header inside, data at 16 MiB).
    r = sh([mdu, "luks", "encrypt", "--key-file", key] + PBKDF2 + [j("plain"), j("orig")], d)
    assert r.returncode == 0, r.stderr
    # A plaintext device with a cryptsetup detached header (to decrypt).
    shutil.copy(j("plain"), j("enc-data"))
    r = sh(["cryptsetup", "reencrypt", "-q", "--force-offline-reencrypt", "--encrypt",
            "--header", j("enc-hdr"), "--sector-size", "4096", "--key-file", key] + PBKDF2
           + [j("enc-data")], d)
    assert r.returncode == 0, r.stderr
    offline = ["--force-offline-reencrypt"]

    def read_image(img, hdr=None):
        out = j("out")
        if os.path.exists(out):
            os.remove(out)
        argv = [mdu, "luks", "decrypt", "--key-file", key]
        if hdr:
            argv += ["--header", hdr]
        r = sh(argv + [img, out], d)
        if r.returncode != 0:
            return None, r.stderr.decode(errors="replace").strip()
        with open(out, "rb") as f:
            return f.read(), ""

    def resume_mdu(img, hdr):
        argv = [mdu, "luks", "reencrypt", "--resume-only", "--key-file", key]
        if hdr:
            argv += ["--header", hdr]
        return sh(argv + [img], d)

    def resume_cs(img, hdr):
        h = ["--header", hdr] if hdr else []
        sh(["cryptsetup", "repair", "-q", "--key-file", key] + h + [img], d)
        return sh(["cryptsetup", "reencrypt", "-q", "--resume-only", "--key-file", key]
                  + offline + h + [img], d)

    # (name, setup() -> (img, hdr), argv(img, hdr), resume, check(img, hdr))
    def keychange():
        shutil.copy(j("orig"), j("img"))
        return j("img"), None

    def encrypt_setup():
        shutil.copy(j("plain"), j("img"))
        if os.path.exists(j("hdr")):
            os.remove(j("hdr"))
        return j("img"), j("hdr")

    def decrypt_setup():
        shutil.copy(j("enc-data"), j("img"))
        shutil.copy(j("enc-hdr"), j("hdr"))
        return j("img"), j("hdr")

    def check_encrypted(img, hdr):
        with open(img, "rb") as f:
            if f.read() == plain:
                # Killed before anything was converted (while the header
                # was being made): the data are as they were; a new run
                # starts over.
                return "untouched", ""
        got, why = read_image(img, hdr)
        return ("ok", "") if got == plain else (("LOST", "") if got is not None else ("STUCK", why))

    def check_plain(img, hdr):
        with open(img, "rb") as f:
            got = f.read()
        if got == plain:
            return "ok", ""
        with open(j("enc-data"), "rb") as f:
            if got == f.read():
                # Killed before any byte was converted (before the record
                # was written): a new run starts over.
                return "untouched", ""
        return "LOST", ""


    def mdu_argv(extra):
        return lambda img, hdr: ([mdu, "luks", "reencrypt", "--key-file", key, "--hotzone-size", hz]
                                 + extra + (["--header", hdr] if hdr else []) + [img])

    def cs_argv(extra):
        return lambda img, hdr: (["cryptsetup", "reencrypt", "-q", "--key-file", key,
                                  "--hotzone-size", hz] + offline + PBKDF2 + extra
                                 + (["--header", hdr] if hdr else []) + [img])

    configs = []
    for res in ["checksum", "journal"]:
        for who, resume in [("mdu", resume_mdu), ("cryptsetup", resume_cs)]:
            configs.append((f"mdu key change, {res}; resumed by {who}", keychange,
                            mdu_argv(["--resilience", res]), resume, check_encrypted))
    for who, resume in [("mdu", resume_mdu), ("cryptsetup", resume_cs)]:
        configs.append((f"mdu --encrypt --header, checksum; resumed by {who}", encrypt_setup,
                        mdu_argv(["--encrypt"] + PBKDF2), resume, check_encrypted))
        configs.append((f"mdu --decrypt --header, checksum; resumed by {who}", decrypt_setup,
                        mdu_argv(["--decrypt"]), resume, check_plain))
    for res in ["checksum", "journal"]:
        configs.append((f"cryptsetup key change, {res}; resumed by mdu", keychange,
                        cs_argv(["--resilience", res]), resume_mdu, check_encrypted))
    for res in ["checksum", "journal"]:
        configs.append((f"cryptsetup --decrypt --header (backward), {res}; resumed by mdu",
                        decrypt_setup, cs_argv(["--decrypt", "--resilience", res]), resume_mdu,
                        check_plain))
    configs.append(("cryptsetup --encrypt --header, checksum; resumed by mdu", encrypt_setup,
                    cs_argv(["--encrypt", "--sector-size", "4096"]), resume_mdu, check_encrypted))

    # Encryption with a data shift (the header at the start of the device,
    # `--reduce-device-size 8M`: the data move up by 4 MiB). The device
    # holds `kept` bytes of data and 8 MiB the file system gave up; two
    # sizes: kept a multiple of the shift, and not (a short hotzone).
    reduce = 8 << 20

    def shift_setup(total):
        def setup():
            with open(j("img"), "wb") as f:
                f.write(plain[: total - reduce] + bytes(reduce))
            return j("img"), None
        return setup

    def check_shifted(total):
        kept = total - reduce

        def check(img, hdr):
            with open(img, "rb") as f:
                head = f.read(kept)
            luks = sh(["cryptsetup", "isLuks", img], d).returncode == 0
            if not luks and head == plain[:kept]:
                return "untouched", ""
            got, why = read_image(img, None)
            if got is None:
                return "STUCK", why
            return ("ok", "") if got[:kept] == plain[:kept] else ("LOST", "")
        return check

    shift_args = ["--encrypt", "--reduce-device-size", str(reduce)]
    for total in [(a.size_mib - 16) << 20, ((a.size_mib - 16) << 20) - (2 << 20)]:
        size = f"{total >> 20} MiB"
        for who, resume in [("mdu", resume_mdu), ("cryptsetup", resume_cs)]:
            configs.append((f"mdu --encrypt --reduce-device-size 8M, {size}; resumed by {who}",
                            shift_setup(total),
                            lambda img, hdr: [mdu, "luks", "reencrypt", "--key-file", key]
                            + PBKDF2 + shift_args + [img],
                            resume, check_shifted(total)))
        configs.append((f"cryptsetup --encrypt --reduce-device-size 8M, {size}; resumed by mdu",
                        shift_setup(total),
                        lambda img, hdr: ["cryptsetup", "reencrypt", "-q", "--key-file", key]
                        + offline + PBKDF2 + shift_args + ["--sector-size", "4096", img],
                        resume_mdu, check_shifted(total)))

    # Decryption in place of a header inside the image: the header is
    # exported to a new file and the data move down to offset 0.
    shutil.copy(j("orig"), j("orig4k"))
    r = sh([mdu, "luks", "encrypt", "--key-file", key, "--sector-size", "4096"] + PBKDF2
           + [j("plain"), j("orig4k")], d)
    assert r.returncode == 0, r.stderr

    def move_setup():
        shutil.copy(j("orig4k"), j("img"))
        if os.path.exists(j("hdr")):
            os.remove(j("hdr"))
        return j("img"), j("hdr")

    def check_moved(img, hdr):
        with open(img, "rb") as f:
            got = f.read(data_len)
        if got == plain:
            return "ok", ""
        with open(img, "rb") as f, open(j("orig4k"), "rb") as g:
            if f.read() == g.read():
                return "untouched", ""
        return "LOST", ""

    def resume_mdu_moved(img, hdr):
        r = resume_mdu(img, hdr)
        if r.returncode != 0 and os.path.exists(hdr) and os.path.getsize(hdr) > 0:
            # An export interrupted before its record: run it again.
            r = sh([mdu, "luks", "reencrypt", "--decrypt", "--key-file", key, "--header", hdr, img], d)
        return r

    def resume_cs_moved(img, hdr):
        r = resume_cs(img, hdr)
        if r.returncode != 0:
            return resume_mdu_moved(img, hdr)
        return r

    for who, resume in [("mdu", resume_mdu_moved), ("cryptsetup, then mdu", resume_cs_moved)]:
        configs.append((f"mdu --decrypt --header NEW (data moved down); resumed by {who}",
                        move_setup,
                        lambda img, hdr: [mdu, "luks", "reencrypt", "--decrypt", "--key-file", key,
                                          "--header", hdr, img],
                        resume, check_moved))
    configs.append(("cryptsetup --decrypt --header NEW (data moved down); resumed by mdu",
                    move_setup,
                    lambda img, hdr: ["cryptsetup", "reencrypt", "-q", "--decrypt", "--key-file", key]
                    + offline + ["--header", hdr, img],
                    resume_mdu_moved, check_moved))

    total_bad = 0
    rng = random.Random(a.seed)
    for name, setup, argv, resume, check in configs:
        if a.only and a.only not in name:
            continue
        if a.random:
            img, hdr = setup()
            t0 = time.monotonic()
            sh(argv(img, hdr), d)
            length = time.monotonic() - t0
            counts = {"ok": 0, "untouched": 0, "LOST": 0, "STUCK": 0, "finished": 0}
            bad = []
            for t in range(a.random):
                img, hdr = setup()
                delay = rng.uniform(0, length)
                p = subprocess.Popen(argv(img, hdr), cwd=d, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
                time.sleep(delay)
                p.kill()
                if p.wait() == 0:
                    counts["finished"] += 1
                    continue
                resume(img, hdr)
                verdict, why = check(img, hdr)
                counts[verdict] += 1
                if verdict not in ("ok", "untouched"):
                    bad.append(f"  kill after {delay:.3f} s: {verdict} {why}")
            total_bad += len(bad)
            print(f"{name}: {a.random} random kills (run {length:.2f} s): {counts['ok']} ok, "
                  f"{counts['untouched']} untouched, {counts['finished']} ran to the end, "
                  f"{counts['LOST']} lost, {counts['STUCK']} stuck", flush=True)
            for line in bad:
                print(line, flush=True)
            continue
        counts = {"ok": 0, "untouched": 0, "LOST": 0, "STUCK": 0}
        bad = []
        n = 1
        while True:
            img, hdr = setup()
            if not killed(argv(img, hdr), n, d):
                break
            resume(img, hdr)
            verdict, why = check(img, hdr)
            counts[verdict] += 1
            if verdict not in ("ok", "untouched"):
                bad.append(f"  sync {n}: {verdict} {why}")
            n += 1
        total_bad += len(bad)
        print(f"{name}: {n - 1} kill points: {counts['ok']} ok, {counts['untouched']} "
              f"untouched (killed before any byte was converted), {counts['LOST']} lost, "
              f"{counts['STUCK']} stuck", flush=True)
        for line in bad:
            print(line, flush=True)
    sys.exit(1 if total_bad else 0)


if __name__ == "__main__":
    main()
