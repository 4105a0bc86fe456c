//! The 16-entry lookup tables of an alphabet, for backends whose byte
//! lookup indexes 16 entries by the low nibble of each index byte (AVX2
//! `vpshufb`). They are built once, by [`Alphabet::new`](crate::Alphabet::new)
//! (at compile time for the built-in alphabets), so no call builds a table.
//!
//! `vpshufb(table, i)` gives `table[i & 15]`, or 0 when bit 7 of `i` is set;
//! every scheme below rests on that rule. The tests model it in scalar code
//! and check every table against the alphabet for all 256 bytes.
//!
//! Encode (6-bit value `v` -> symbol), two layouts:
//!
//! * [`EncodeLayout::Runs`]: values 0..=25 and 26..=51 are two runs of
//!   consecutive bytes (`A-Z` and `a-z` in RFC 4648; symbols 52..=63 may be
//!   anything). The class index `subs(v, 51) - (v > 25 ? -1 : 0)` is 0 for
//!   the first run, 1 for the second and `v - 50` for each of the last 12
//!   values, and `v + encode_offsets[index]` is the symbol: one lookup.
//! * [`EncodeLayout::Any`]: four lookups, `v`, `v - 16`, `v - 32` and
//!   `v - 48` into `encode_rows` (row `k` of the alphabet XOR row `k - 1`).
//!   A lookup whose index went negative has bit 7 set and gives 0, so the
//!   XOR of the four is row `v >> 4` of the alphabet at `v & 15`.
//!
//! Decode (byte `x` -> 6-bit value, or an error), two layouts:
//!
//! * [`DecodeLayout::Rows`]: `m = decode_lo[x & 15] & decode_hi[x >> 4]`.
//!   Bits 0..=2 and 4..=7 of `m` are validity classes: every row of 16
//!   bytes (same high nibble) has a set of non-symbols, and there are at
//!   most 7 distinct sets among rows 0..=7 (rows 0 and 1 hold no symbol,
//!   and rows 8..=15 share their class); a byte is a symbol exactly when
//!   `m & 0xf7 == 0`. Bit 3 of `m` selects the second of at most two
//!   offsets of the row: `x + decode_offsets[(x >> 4) | m]` is the value
//!   (entries 2..=7 hold each row's first offset, 10..=15 its second). This
//!   needs every row's symbols to take at most two offsets (value minus
//!   byte), and the symbols that take the second offset to be those whose
//!   low nibble is in one set shared by all rows; true of RFC 4648 (`+` and
//!   `/` in row 2 differ), base64url (`_` in row 5 differs from `P-Z`),
//!   IMAP, crypt(3), bcrypt and any alphabet made of runs of consecutive
//!   bytes that start a row.
//! * [`DecodeLayout::Any`]: six lookups, `x - 0x20`, `x - 0x30`, ..
//!   `x - 0x70`, into `decode_rows` (rows 2..=7 of the reverse table, each
//!   XOR the row before), as for encoding; the result is the reverse table's
//!   entry (with its invalid marker) for every byte in `0x20..=0x7f`, and
//!   the kernel rejects the bytes outside that range by a compare.
#![deny(unsafe_code)]
// Only the x86-64 AVX2 kernels read the tables; other targets build them
// (and test the builder) all the same.
#![cfg_attr(not(x86_simd), allow(dead_code))]

use crate::alphabet::INVALID;

/// How a backend with 16-entry lookups turns values into symbols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EncodeLayout {
    /// One lookup of an offset: values 0..=25 and 26..=51 are runs.
    Runs,
    /// Four lookups: any alphabet.
    Any,
}

/// How a backend with 16-entry lookups turns symbols into values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DecodeLayout {
    /// Two lookups for validity, one for the offset.
    Rows,
    /// Six lookups: any alphabet.
    Any,
}

/// The tables; see the module documentation for how they are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NibbleTables {
    pub(crate) encode_layout: EncodeLayout,
    /// [`EncodeLayout::Runs`]: the byte to add to a value, by class index.
    pub(crate) encode_offsets: [u8; 16],
    /// [`EncodeLayout::Any`]: row `k` of the alphabet XOR row `k - 1`.
    pub(crate) encode_rows: [[u8; 16]; 4],
    pub(crate) decode_layout: DecodeLayout,
    /// [`DecodeLayout::Rows`]: validity classes (bits 0..=2, 4..=7) and
    /// the second-offset selector (bit 3), by low nibble.
    pub(crate) decode_lo: [u8; 16],
    /// [`DecodeLayout::Rows`]: the class bit of each row, and its selector
    /// bit, by high nibble.
    pub(crate) decode_hi: [u8; 16],
    /// [`DecodeLayout::Rows`]: the byte to add to a symbol, at `row`
    /// (first offset) and `row | 8` (second offset).
    pub(crate) decode_offsets: [u8; 16],
    /// [`DecodeLayout::Any`]: row `2 + k` of the reverse table XOR row
    /// `1 + k` (row 2 as is).
    pub(crate) decode_rows: [[u8; 16]; 6],
}

/// Whether the alphabet's values 0..=25 and 26..=51 are two runs of
/// consecutive bytes.
const fn encode_runs(enc: &[u8; 64]) -> bool {
    let mut i = 1;
    while i < 52 {
        if i != 26 && enc[i].wrapping_sub(enc[i - 1]) != 1 {
            return false;
        }
        i += 1;
    }
    true
}

/// The offsets of the symbols of row `h` (bytes `16h..16h + 16`): the first
/// offset, the second (if any), the low nibbles that take each, and whether
/// the row has no more than two.
struct RowOffsets {
    first: u8,
    second: u8,
    first_set: u16,
    second_set: u16,
    at_most_two: bool,
}

const fn row_offsets(dec: &[u8; 256], h: usize) -> RowOffsets {
    let mut r = RowOffsets {
        first: 0,
        second: 0,
        first_set: 0,
        second_set: 0,
        at_most_two: true,
    };
    let mut l = 0;
    while l < 16 {
        let x = 16 * h + l;
        if dec[x] != INVALID {
            let off = dec[x].wrapping_sub(x as u8);
            if r.first_set == 0 || off == r.first {
                r.first = off;
                r.first_set |= 1 << l;
            } else if r.second_set == 0 || off == r.second {
                r.second = off;
                r.second_set |= 1 << l;
            } else {
                r.at_most_two = false;
            }
        }
        l += 1;
    }
    r
}

/// The second-offset selector bit of [`DecodeLayout::Rows`].
const SELECT: u8 = 0x08;

/// The [`DecodeLayout::Rows`] tables, or `None` if the alphabet does not fit
/// that layout.
const fn decode_rows_layout(dec: &[u8; 256]) -> Option<([u8; 16], [u8; 16], [u8; 16])> {
    let mut lo = [0u8; 16];
    let mut hi = [0u8; 16];
    let mut offsets = [0u8; 16];
    // Validity classes: one bit per distinct non-empty set of non-symbols
    // among rows 0..=7. Row 0 (no symbol) takes the first class, which
    // rows 8..=15 share.
    let bits = [0x01u8, 0x02, 0x04, 0x10, 0x20, 0x40, 0x80];
    let mut classes = [0u16; 7];
    let mut count = 0;
    let mut h = 0;
    while h < 8 {
        let mut invalid = 0u16;
        let mut l = 0;
        while l < 16 {
            if dec[16 * h + l] == INVALID {
                invalid |= 1 << l;
            }
            l += 1;
        }
        if invalid != 0 {
            let mut c = 0;
            while c < count && classes[c] != invalid {
                c += 1;
            }
            if c == count {
                if count == classes.len() {
                    return None;
                }
                classes[c] = invalid;
                count += 1;
                let mut l = 0;
                while l < 16 {
                    if invalid & (1 << l) != 0 {
                        lo[l] |= bits[c];
                    }
                    l += 1;
                }
            }
            hi[h] |= bits[c];
        }
        h += 1;
    }
    if classes[0] != 0xffff {
        return None;
    }
    let mut h = 8;
    while h < 16 {
        hi[h] = bits[0];
        h += 1;
    }
    // Offsets: rows 2..=7 hold every symbol (printable ASCII).
    let mut rows: [RowOffsets; 6] = [
        row_offsets(dec, 2),
        row_offsets(dec, 3),
        row_offsets(dec, 4),
        row_offsets(dec, 5),
        row_offsets(dec, 6),
        row_offsets(dec, 7),
    ];
    let mut split = 0u32; // rows (bit k: row 2 + k) with two offsets
    let mut k = 0;
    while k < 6 {
        if !rows[k].at_most_two {
            return None;
        }
        if rows[k].second_set != 0 {
            split |= 1 << k;
        }
        k += 1;
    }
    // The selector set: for each split row, either offset may be the
    // second one; find a choice where one set of low nibbles holds exactly
    // the second-offset symbols of every split row.
    let mut choice = 0u32;
    let found = loop {
        if choice & !split == 0 {
            let mut sel = 0u16;
            let mut k = 0;
            while k < 6 {
                if split & (1 << k) != 0 {
                    sel |= if choice & (1 << k) != 0 {
                        rows[k].first_set
                    } else {
                        rows[k].second_set
                    };
                }
                k += 1;
            }
            let mut ok = true;
            let mut k = 0;
            while k < 6 {
                if split & (1 << k) != 0 {
                    let keep = if choice & (1 << k) != 0 {
                        rows[k].second_set
                    } else {
                        rows[k].first_set
                    };
                    if keep & sel != 0 {
                        ok = false;
                    }
                }
                k += 1;
            }
            if ok {
                break Some(sel);
            }
        }
        if choice >= split {
            break None;
        }
        choice += 1;
    };
    let Some(sel) = found else {
        return None;
    };
    let mut l = 0;
    while l < 16 {
        if sel & (1 << l) != 0 {
            lo[l] |= SELECT;
        }
        l += 1;
    }
    let mut k = 0;
    while k < 6 {
        let h = 2 + k;
        if choice & (1 << k) != 0 {
            let r = &mut rows[k];
            (r.first, r.second) = (r.second, r.first);
        }
        offsets[h] = rows[k].first;
        offsets[h | 8] = rows[k].second;
        if split & (1 << k) != 0 {
            hi[h] |= SELECT;
        }
        k += 1;
    }
    Some((lo, hi, offsets))
}

impl NibbleTables {
    /// The tables of the alphabet with symbols `enc` and reverse table `dec`.
    pub(crate) const fn new(enc: &[u8; 64], dec: &[u8; 256]) -> NibbleTables {
        let mut encode_offsets = [0u8; 16];
        encode_offsets[0] = enc[0];
        encode_offsets[1] = enc[26].wrapping_sub(26);
        let mut v = 52;
        while v < 64 {
            encode_offsets[v - 50] = enc[v].wrapping_sub(v as u8);
            v += 1;
        }
        let mut encode_rows = [[0u8; 16]; 4];
        let mut decode_rows = [[0u8; 16]; 6];
        let mut l = 0;
        while l < 16 {
            let mut k = 0;
            while k < 4 {
                let prev = if k == 0 { 0 } else { enc[16 * (k - 1) + l] };
                encode_rows[k][l] = enc[16 * k + l] ^ prev;
                k += 1;
            }
            let mut k = 0;
            while k < 6 {
                let prev = if k == 0 { 0 } else { dec[16 * (k + 1) + l] };
                decode_rows[k][l] = dec[16 * (k + 2) + l] ^ prev;
                k += 1;
            }
            l += 1;
        }
        let (decode_layout, (decode_lo, decode_hi, decode_offsets)) = match decode_rows_layout(dec)
        {
            Some(t) => (DecodeLayout::Rows, t),
            None => (DecodeLayout::Any, ([0; 16], [0; 16], [0; 16])),
        };
        NibbleTables {
            encode_layout: if encode_runs(enc) {
                EncodeLayout::Runs
            } else {
                EncodeLayout::Any
            },
            encode_offsets,
            encode_rows,
            decode_layout,
            decode_lo,
            decode_hi,
            decode_offsets,
            decode_rows,
        }
    }
}

#[cfg(test)]
mod tests {
    //! Scalar models of the vector steps, run over every byte.
    extern crate std;

    use super::*;
    use crate::alphabet::Alphabet;

    /// `vpshufb` on one byte.
    fn shuf(t: &[u8; 16], i: u8) -> u8 {
        if i & 0x80 != 0 {
            0
        } else {
            t[usize::from(i & 15)]
        }
    }

    fn encode_runs_model(t: &NibbleTables, v: u8) -> u8 {
        let idx = v.saturating_sub(51).wrapping_add(u8::from(v > 25));
        v.wrapping_add(shuf(&t.encode_offsets, idx))
    }

    fn encode_any_model(t: &NibbleTables, v: u8) -> u8 {
        (0..4).fold(0, |r, k| {
            r ^ shuf(&t.encode_rows[k], v.wrapping_sub(16 * k as u8))
        })
    }

    /// `Some(value)` for a symbol, `None` for a rejected byte.
    fn decode_rows_model(t: &NibbleTables, x: u8) -> Option<u8> {
        let hi = x >> 4;
        let m = shuf(&t.decode_lo, x & 15) & shuf(&t.decode_hi, hi);
        let value = x.wrapping_add(shuf(&t.decode_offsets, hi | m));
        (m & !SELECT == 0).then_some(value)
    }

    fn decode_any_model(t: &NibbleTables, x: u8) -> Option<u8> {
        let r = (0..6).fold(0, |r, k| {
            r ^ shuf(&t.decode_rows[k], x.wrapping_sub(0x20 + 16 * k as u8))
        });
        let outside = (x as i8) < 0x20;
        (!outside && r & 0x80 == 0).then_some(r)
    }

    fn check(a: &Alphabet, layouts: (EncodeLayout, DecodeLayout)) {
        let t = &a.nibble;
        assert_eq!((t.encode_layout, t.decode_layout), layouts, "{a:?}");
        for v in 0..64u8 {
            let want = a.symbols()[usize::from(v)];
            if t.encode_layout == EncodeLayout::Runs {
                assert_eq!(encode_runs_model(t, v), want, "{a:?} runs v={v}");
            }
            assert_eq!(encode_any_model(t, v), want, "{a:?} any v={v}");
        }
        for x in 0..=255u8 {
            let want = a.value_of(x);
            if t.decode_layout == DecodeLayout::Rows {
                assert_eq!(decode_rows_model(t, x), want, "{a:?} rows x={x:#04x}");
            }
            assert_eq!(decode_any_model(t, x), want, "{a:?} any x={x:#04x}");
        }
    }

    fn alphabet(chars: &[u8]) -> Alphabet {
        Alphabet::new(chars.try_into().expect("64 symbols")).expect("valid alphabet")
    }

    #[test]
    fn published_alphabets_take_the_short_layouts() {
        use {DecodeLayout as D, EncodeLayout as E};
        check(&Alphabet::STANDARD, (E::Runs, D::Rows));
        check(&Alphabet::URL_SAFE, (E::Runs, D::Rows));
        check(&Alphabet::IMAP, (E::Runs, D::Rows));
        // crypt(3) and bcrypt: runs that start rows, in other orders.
        check(
            &alphabet(b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
            (E::Any, D::Rows),
        );
        check(
            &alphabet(b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
            (E::Any, D::Rows),
        );
        // Lower case first: still two runs.
        check(
            &alphabet(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"),
            (E::Runs, D::Rows),
        );
    }

    #[test]
    fn every_alphabet_has_exact_tables() {
        // Permutations of printable ASCII (with the space and `~`), so rows
        // hold up to 16 offsets and the long layouts are needed.
        let printable: std::vec::Vec<u8> = (0x20u8..=0x7e).filter(|&b| b != b'=').collect();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut any = 0;
        // Miri runs a sample: each alphabet's check is thousands of table
        // lookups, and the logic is the same for all of them.
        let count = if cfg!(miri) { 20 } else { 2000 };
        for _ in 0..count {
            let mut pool = printable.clone();
            let chars: std::vec::Vec<u8> = (0..64)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    pool.swap_remove((seed % pool.len() as u64) as usize)
                })
                .collect();
            let a = alphabet(&chars);
            let t = a.nibble;
            any += usize::from(t.decode_layout == DecodeLayout::Any);
            check(&a, (t.encode_layout, t.decode_layout));
        }
        assert!(
            any > count / 2,
            "only {any} of {count} alphabets needed the long decode layout"
        );
        // The most printable bytes in one row and the least: every row full
        // but the pad byte's, and symbols spread over all six rows.
        check(
            &alphabet(b" !\"#$%&'()*+,-./0123456789:;<>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`"),
            (EncodeLayout::Any, DecodeLayout::Rows),
        );
        check(
            &alphabet(b" 0@P`p!1AQaq\"2BRbr#3CScs$4DTdt%5EUeu&6FVfv'7GWgw(8HXhx)9IYiy*:JZ"),
            (EncodeLayout::Any, DecodeLayout::Any),
        );
    }

    #[test]
    fn the_selector_may_pick_either_offset_of_a_row() {
        // Row 5 (`P`..`_`) takes two offsets, one for `P` and `_` and one
        // for `Q`..`^`; row 2 takes one for `!` and one for `/`. Only with
        // the first offset of row 2 as its second one does a single set of
        // low nibbles (1..=14) select the second offset in both rows.
        let mut chars = std::vec::Vec::new();
        chars.push(b'P');
        chars.extend(b'a'..=b'n');
        chars.push(b'_');
        chars.extend(b'Q'..=b'^');
        chars.extend(b"!/");
        chars.extend(b'0'..=b'9');
        chars.extend(b'A'..=b'O');
        chars.extend(b'p'..=b'v');
        let a = alphabet(&chars);
        check(&a, (EncodeLayout::Any, DecodeLayout::Rows));
        assert_eq!(
            a.nibble.decode_lo[1] & SELECT,
            SELECT,
            "{:?}",
            a.nibble.decode_lo
        );
        assert_eq!(
            a.nibble.decode_lo[15] & SELECT,
            0,
            "{:?}",
            a.nibble.decode_lo
        );
    }
}
