#!/usr/bin/env python3
"""Per-sector reference for dm-crypt plain mode with AES-XTS and AES-CBC,
built on the XTS and CBC of Python `cryptography` and written straight from
the dm-crypt IV generator definitions (one sector, one IV, one cipher call
at a time).

Usage: dmcrypt_ref.py MANIFEST.json

The manifest is a list of cases:
  {"op": "encrypt"|"decrypt", "chain": "xts"|"cbc", "mode": "plain64",
   "key": "<path>", "sector_size": 4096, "iv_offset": 0, "large": false,
   "offset": 0, "input": "<path>", "output": "<path>"}

encrypt: output = offset*512 zero bytes || ciphertext of the whole input.
decrypt: output = plaintext of input[offset*512:].
"""

import hashlib
import json
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

MASK64 = (1 << 64) - 1


def xts(key, tweak, data, encrypt):
    c = Cipher(algorithms.AES(key), modes.XTS(tweak))
    op = c.encryptor() if encrypt else c.decryptor()
    return op.update(data) + op.finalize()


def cbc(key, iv, data, encrypt):
    c = Cipher(algorithms.AES(key), modes.CBC(iv))
    op = c.encryptor() if encrypt else c.decryptor()
    return op.update(data) + op.finalize()


def sector_cipher(chain):
    return xts if chain == "xts" else cbc


def ecb_encrypt(key, block):
    op = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return op.update(block) + op.finalize()


def iv_sector(index, sector_size, iv_offset, large):
    """The sector number the IV generator sees for sector `index`."""
    cc = (iv_offset + index * (sector_size // 512)) & MASK64
    if large:
        cc >>= (sector_size // 512).bit_length() - 1
    return cc


def make_iv(chain, mode, key, s, sector_size):
    if mode == "plain":
        return (s & 0xFFFFFFFF).to_bytes(4, "little") + bytes(12)
    if mode == "plain64":
        return s.to_bytes(8, "little") + bytes(8)
    if mode == "plain64be":
        return bytes(8) + s.to_bytes(8, "big")
    if mode == "essiv:sha256":
        salt = hashlib.sha256(key).digest()
        return ecb_encrypt(salt, s.to_bytes(8, "little") + bytes(8))
    if mode == "benbi":
        return bytes(8) + (((s << 5) + 1) & MASK64).to_bytes(8, "big")
    if mode == "null":
        return bytes(16)
    if mode == "eboiv":
        # The volume's own cipher encrypting one zero block with the byte
        # offset as IV: for CBC that is E_K(offset).
        offset = (s * sector_size) & MASK64
        iv = offset.to_bytes(8, "little") + bytes(8)
        return sector_cipher(chain)(key, iv, bytes(16), True)
    raise ValueError("unknown IV mode " + mode)


def run(case):
    key = open(case["key"], "rb").read()
    ss = case["sector_size"]
    head = case["offset"] * 512
    data = open(case["input"], "rb").read()
    encrypt = case["op"] == "encrypt"
    chain = case.get("chain", "xts")
    crypt = sector_cipher(chain)
    if not encrypt:
        data = data[head:]
    assert len(data) % ss == 0 and data, "input must be whole sectors"
    out = bytearray(head if encrypt else 0)
    for i in range(len(data) // ss):
        s = iv_sector(i, ss, case["iv_offset"], case["large"])
        iv = make_iv(chain, case["mode"], key, s, ss)
        out += crypt(key, iv, data[i * ss:(i + 1) * ss], encrypt)
    with open(case["output"], "wb") as f:
        f.write(out)


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    for case in cases:
        run(case)


if __name__ == "__main__":
    main()
