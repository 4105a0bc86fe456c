//! Intel ISA-L's erasure-code encoder (`ec_encode_data`) as a peer of the
//! dm-verity FEC encoder, when `libisal` was found at build time (see
//! `build.rs`; [`skipped`] says why it was not).
//!
//! # The same parity, from a matrix
//!
//! dm-verity's parity is linear in the message: for RS(255, `k`) with
//! `k = 255 - roots`, the parity of a codeword is `P · m`, where `P` is a
//! `roots × k` matrix over GF(2^8) (polynomial `0x11d`, ISA-L's field too)
//! whose column `i` is the parity of the unit message `e_i`.
//! [`FecIsal::new`] takes those columns from mdu's own encoder: one image of
//! `k` blocks of 512 bytes (one round) whose block `i` holds a 1 at byte
//! `i`, so that codeword `i` of the round is exactly `e_i`.
//!
//! # The layout ISA-L needs
//!
//! `ec_encode_data(len, k, rows, tables, data, coding)` computes, for every
//! position `c < len`, `coding[j][c] = Σ_i P[j][i] · data[i][c]`: each
//! position is one codeword. Codeword `c = n·bs + b` (round `n`, byte `b`
//! of a block) takes its message byte `i` from byte `b` of block `i·R + n`,
//! which is byte `i·R·bs + c` of the input. So source `i` is simply the
//! `R` blocks `i·R .. (i+1)·R` of the input, `len = R·bs` bytes, in place;
//! only the source that straddles the end of the input is copied (padded
//! with zeros), and the sources past it are one zero buffer. The parity
//! comes out as `roots` rows of `R·bs` bytes; dm-verity stores the parity of
//! codeword `c` at `c·roots`, so the rows are transposed, range by range,
//! into that order.

/// Why the ISA-L peer is not in this build (`libisal` not found, or
/// another target), or `None` when it is.
pub fn skipped() -> Option<&'static str> {
    option_env!("MDU_ISAL_SKIPPED")
}

#[cfg(mdu_isal)]
pub use imp::{EcTables, FecIsal, VERSION, kernel};

#[cfg(mdu_isal)]
mod imp {
    use std::ffi::c_int;

    use mdu_verity::dmverity::fec::{self, Layout};

    /// The ISA-L version `pkg-config` reported when mdu-bench was built.
    pub const VERSION: &str = env!("MDU_ISAL_VERSION");

    mod ffi {
        use std::ffi::c_int;

        #[link(name = "isal")]
        unsafe extern "C" {
            /// Expands the `rows × k` matrix `a` (row-major) into 32-byte
            /// product tables, `32 · k · rows` bytes at `gftbls`.
            pub(super) fn ec_init_tables(k: c_int, rows: c_int, a: *mut u8, gftbls: *mut u8);
            /// `coding[j][c] = Σ_i a[j][i] · data[i][c]` for `c < len`.
            pub(super) fn ec_encode_data(
                len: c_int,
                k: c_int,
                rows: c_int,
                gftbls: *mut u8,
                data: *mut *mut u8,
                coding: *mut *mut u8,
            );
        }
    }

    /// The kernel ISA-L's own dispatch picks for `ec_encode_data` on this
    /// CPU, by the CPUID rule of ISA-L 2.x (ISA-L does not report it).
    pub fn kernel() -> &'static str {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx512f")
            && has!("avx512cd")
            && has!("avx512bw")
            && has!("avx512dq")
            && has!("avx512vl")
        {
            "AVX-512"
        } else if has!("avx2") {
            "AVX2"
        } else if has!("avx") {
            "AVX"
        } else {
            "SSE"
        }
    }

    /// ISA-L's product tables of one `rows × k` matrix.
    pub struct EcTables {
        k: usize,
        rows: usize,
        tables: Vec<u8>,
    }

    impl EcTables {
        /// The tables of `matrix`, `rows × k` row-major; `None` unless
        /// `1 <= k, rows <= 255` and the matrix has `rows · k` entries.
        pub fn new(k: usize, rows: usize, matrix: &[u8]) -> Option<EcTables> {
            if !(1..=255).contains(&k) || !(1..=255).contains(&rows) || matrix.len() != k * rows {
                return None;
            }
            let mut a = matrix.to_vec();
            let mut tables = vec![0u8; 32 * k * rows];
            // SAFETY: `a` holds `rows · k` bytes, all ISA-L reads of it;
            // `tables` holds the `32 · k · rows` bytes it writes; both
            // counts fit `c_int` (at most 255).
            unsafe {
                ffi::ec_init_tables(
                    k as c_int,
                    rows as c_int,
                    a.as_mut_ptr(),
                    tables.as_mut_ptr(),
                )
            };
            Some(EcTables { k, rows, tables })
        }

        /// `coding[j][c] = Σ_i matrix[j][i] · data[i][c]` for every `c` of
        /// the common length of the slices. Panics unless there are `k`
        /// sources and `rows` outputs of one length below 2^31.
        pub fn encode(&self, data: &[&[u8]], coding: &mut [&mut [u8]]) {
            assert_eq!(data.len(), self.k, "one source per message byte");
            assert_eq!(coding.len(), self.rows, "one output per parity byte");
            let len = coding[0].len();
            assert!(
                data.iter().all(|d| d.len() == len) && coding.iter().all(|c| c.len() == len),
                "sources and outputs of one length"
            );
            let len = c_int::try_from(len).expect("a length below 2^31");
            if len == 0 {
                return;
            }
            let mut src = [std::ptr::null_mut::<u8>(); 255];
            for (p, d) in src.iter_mut().zip(data) {
                // ISA-L declares its sources mutable but only reads them.
                *p = d.as_ptr().cast_mut();
            }
            let mut dst = [std::ptr::null_mut::<u8>(); 255];
            for (p, c) in dst.iter_mut().zip(coding.iter_mut()) {
                *p = c.as_mut_ptr();
            }
            // SAFETY: `src` holds `k` pointers to sources of `len` readable
            // bytes (checked above), which ISA-L only reads; `dst` holds
            // `rows` pointers to distinct outputs of `len` writable bytes
            // (distinct `&mut` slices); `tables` is the `32 · k · rows` bytes
            // `ec_init_tables` made for this `k` and `rows`. ISA-L keeps no
            // pointer after the call, and its kernel dispatch only ever
            // stores the same function pointer, so calls may run on several
            // threads at once.
            unsafe {
                ffi::ec_encode_data(
                    len,
                    self.k as c_int,
                    self.rows as c_int,
                    self.tables.as_ptr().cast_mut(),
                    src.as_mut_ptr(),
                    dst.as_mut_ptr(),
                )
            };
        }
    }

    /// dm-verity FEC parity with ISA-L: the layout of the module
    /// documentation over one [`EcTables`].
    pub struct FecIsal {
        blocks: usize,
        bs: usize,
        roots: usize,
        rounds: usize,
        tables: EcTables,
        /// One source of zeros, for the sources past the end of the input.
        zeros: Vec<u8>,
        /// Codewords per call of ISA-L.
        range: usize,
    }

    impl FecIsal {
        /// The encoder of `blocks` blocks of `bs` bytes with `roots` parity
        /// bytes per codeword, its matrix taken from mdu's encoder, calling
        /// ISA-L for `range` codewords at a time (a multiple of 64).
        pub fn new(blocks: usize, bs: usize, roots: u8, range: usize) -> Result<FecIsal, String> {
            let layout = Layout::new(blocks as u64, bs as u32, roots).map_err(|e| e.to_string())?;
            let (r, k) = (usize::from(roots), 255 - usize::from(roots));
            if range == 0 || !range.is_multiple_of(64) {
                return Err(format!("range {range} is not a positive multiple of 64"));
            }
            // Block i of a one-round image of k blocks holds a 1 at byte i:
            // codeword i is the unit message e_i, its parity column i of P.
            const UNIT_BS: usize = 512;
            let mut unit = vec![0u8; k * UNIT_BS];
            for i in 0..k {
                unit[i * UNIT_BS + i] = 1;
            }
            let parity =
                fec::encode_bytes(&unit, UNIT_BS as u32, roots).map_err(|e| e.to_string())?;
            let mut matrix = vec![0u8; r * k];
            for i in 0..k {
                for j in 0..r {
                    matrix[j * k + i] = parity[i * r + j];
                }
            }
            // Codewords past k carry zero messages: their parity must be zero.
            if parity[k * r..].iter().any(|&b| b != 0) {
                return Err("the parity of a zero message is not zero".to_string());
            }
            let tables = EcTables::new(k, r, &matrix).ok_or("matrix size")?;
            let rounds = layout.rounds() as usize;
            Ok(FecIsal {
                blocks,
                bs,
                roots: r,
                rounds,
                tables,
                zeros: vec![0u8; rounds * bs],
                range,
            })
        }

        /// The parity of `input` (`blocks · bs` bytes) in dm-verity's order,
        /// with the ranges of codewords spread over the current rayon pool
        /// when `parallel`.
        pub fn parity(&self, input: &[u8], parallel: bool) -> Vec<u8> {
            let (bs, r, rounds) = (self.bs, self.roots, self.rounds);
            assert_eq!(input.len(), self.blocks * bs, "the whole input");
            let len = rounds * bs;
            let k = 255 - r;
            // Sources 0..full are whole in the input; the next one, if the
            // input ends inside it, is copied and padded with zeros; the
            // rest are past the end.
            let full = self.blocks / rounds;
            let straddling = (!self.blocks.is_multiple_of(rounds)).then(|| {
                let mut padded = vec![0u8; len];
                let tail = &input[full * len..];
                padded[..tail.len()].copy_from_slice(tail);
                padded
            });
            let sources: Vec<&[u8]> = (0..k)
                .map(|i| match (i.cmp(&full), &straddling) {
                    (std::cmp::Ordering::Less, _) => &input[i * len..(i + 1) * len],
                    (std::cmp::Ordering::Equal, Some(padded)) => &padded[..],
                    _ => &self.zeros[..],
                })
                .collect();
            let mut out = vec![0u8; len * r];
            let range = self.range;
            let work = |(at, out): (usize, &mut [u8])| {
                let c0 = at * range;
                let n = out.len() / r;
                let data: Vec<&[u8]> = sources.iter().map(|s| &s[c0..c0 + n]).collect();
                let mut rows = vec![0u8; r * n];
                let mut coding: Vec<&mut [u8]> = rows.chunks_exact_mut(n).collect();
                self.tables.encode(&data, &mut coding);
                // Rows (j, c) to dm-verity's (c, j).
                for (j, row) in rows.chunks_exact(n).enumerate() {
                    for (c, &v) in row.iter().enumerate() {
                        out[c * r + j] = v;
                    }
                }
            };
            if parallel {
                use rayon::prelude::*;
                out.par_chunks_mut(range * r).enumerate().for_each(work);
            } else {
                out.chunks_mut(range * r).enumerate().for_each(work);
            }
            out
        }
    }
}
