//! dm-verity forward error correction, as `veritysetup format --fec-device`
//! writes it: Reed-Solomon parity over the data and hash areas, byte for
//! byte the same.
//!
//! # The code and the layout
//!
//! * RS(255, 255 - `roots`) over GF(2^8) with the field polynomial `0x11d`,
//!   primitive element `x`, first consecutive root `alpha^0`, for
//!   `roots` = 2..=24 parity bytes per codeword ([`MIN_ROOTS`],
//!   [`MAX_ROOTS`]). Systematic: the parity is `m(x) * x^roots mod g(x)`,
//!   highest coefficient first.
//! * The protected input is `I = D || H`: the `data_blocks` whole blocks of
//!   the data device, then the hash device from the tree's first block
//!   (never the superblock) to the end of the area; both areas use one
//!   block size `bs` (data and hash block sizes must be equal).
//! * With `N` blocks in `I` and `rsn = 255 - roots` message bytes per
//!   codeword, there are `R = ceil(N / rsn)` rounds. Codeword `(n, b)`
//!   (round `n`, byte `b` of a block) takes its message byte `i` from byte
//!   `b` of block `i * R + n`, or zero past the end of `I`: the bytes of one
//!   block all land in different codewords, and one codeword takes one byte
//!   from each of `rsn` blocks `R` apart, so a burst of damage spreads over
//!   many codewords.
//! * The parity of codeword `(n, b)` is the `roots` bytes at
//!   `(n * bs + b) * roots` of the parity area, `R * bs * roots` bytes in all.
//!
//! # How it is computed
//!
//! [`Encoder`] takes the blocks of `I` in order, each exactly once, and
//! keeps the `roots`-byte LFSR state of every codeword, `R * bs * roots`
//! bytes: as large as the parity it becomes, and nothing else grows with
//! the input. Block `k` feeds round `k mod R` at position `k div R`, so
//! every codeword still sees its message in order. One block updates the
//! `bs` codewords of its round side by side: the feedback bytes of all of
//! them form one vector, multiplied by each generator coefficient at once
//! (nibble lookups with `vpshufb` on AVX2 or `tbl` on arm64, or the GFNI
//! affine instruction on ymm or zmm, where the CPU has them; 256-entry
//! tables otherwise). A buffer of many blocks holds several of each round
//! (every `R`-th block): the SIMD kernels take a column of 16 to 64
//! codewords through 16 of them at a time with its registers in vector
//! registers, so the registers are read and written once per 16 blocks,
//! and the rounds run on all threads.
//!
//! ```
//! use mdu_verity::dmverity::fec::{Encoder, Layout};
//!
//! // Three 512-byte blocks, two parity bytes per codeword: one round.
//! let layout = Layout::new(3, 512, 2)?;
//! assert_eq!((layout.rounds(), layout.parity_len()), (1, 1024));
//! let mut enc = Encoder::new(layout)?;
//! enc.push(&vec![0u8; 3 * 512])?;
//! assert_eq!(enc.finish()?, vec![0u8; 1024]); // zero data, zero parity
//! # Ok::<(), mdu_verity::Error>(())
//! ```

//!
//! # Modules
//!
//! * `gf`: GF(2^8) arithmetic and the generator polynomial;
//! * [`Layout`] (`layout`): the interleave of one FEC input;
//! * [`Encoder`] (`encode`): the parity, block by block;
//! * [`correct_round`] (`decode`): the Reed-Solomon decoder;
//! * [`Backend`] (`backend`): the encoder's LFSR kernels, what each needs
//!   of the CPU, one dispatch point, a portable kernel and one thin file
//!   per ISA over a shared vector driver;
//! * [`VerityLayout`] (`layout`): where a dm-verity image's FEC input and
//!   parity lie, computed once ([`Layout::for_verity`]);
//! * [`ReadAt`], [`WriteAt`], [`Corrections`], [`Overlay`] (`device`): the
//!   devices read and written by position, and corrected blocks over them;
//! * [`VerityEncoder`], [`encode_verity`] (`parity`): the parity of a
//!   dm-verity image from its devices, written where its layout puts it
//!   ([`Layout::for_new_verity`] predicts the layout of a new image, so
//!   the data can feed the encoder while it is hashed, through an
//!   [`EarlyEncoder`] (`early`));
//! * [`correct`] (`correct`): every round of an image decoded from its
//!   devices;
//! * [`verify_with_fec`] (`verify`): verify, correct, verify again, and
//!   [`FecOutcome::repair`]; [`verify_with_fec_after`] starts from the
//!   caller's own first verification (of a mapped image, say).

mod backend;
mod correct;
mod decode;
mod device;
mod early;
mod encode;
mod gf;
mod layout;
mod parity;
mod verify;

pub use backend::Backend;
pub use correct::{Decoded, correct};
pub use decode::{RoundFix, correct_round};
pub(crate) use device::AtCursor;
pub use device::{Corrections, Overlay};
pub use early::EarlyEncoder;
pub use encode::{Encoder, encode_bytes};
pub use layout::{Area, FecParams, Layout, VerityLayout};
/// A device read by position (mdu-core's one positioned-read trait,
/// `mdu_core::io::ReadAt`, re-exported): files and block devices, bytes
/// in memory, or a device with corrections over it ([`Overlay`]). Reads
/// through `&self`, so one device serves several readers; a device that
/// ends before a block is an erasure to the decoder, and a read past the
/// end of the FEC device is [`Error::FecParityShort`](crate::Error::FecParityShort).
///
/// ```
/// use mdu_verity::dmverity::fec::ReadAt;
/// let dev = vec![1u8, 2, 3, 4];
/// let mut buf = [0u8; 2];
/// dev.read_exact_at(&mut buf, 2)?;
/// assert_eq!((buf, dev.size()?), ([3, 4], 4));
/// assert!(dev.read_exact_at(&mut buf, 3).is_err()); // ends early
/// # Ok::<(), mdu_core::io::IoError>(())
/// ```
pub use mdu_core::io::ReadAt;
/// A device written by position (mdu-core's `mdu_core::io::WriteAt`,
/// re-exported): files and block devices, or bytes in memory in a
/// `RefCell<Vec<u8>>` (extended with zeros where a write ends past them).
///
/// ```
/// use std::cell::RefCell;
/// use mdu_verity::dmverity::fec::WriteAt;
/// let dev = RefCell::new(vec![0u8; 4]);
/// dev.write_all_at(&[7, 8], 1)?;
/// assert_eq!(*dev.borrow(), [0, 7, 8, 0]);
/// # Ok::<(), mdu_core::io::IoError>(())
/// ```
pub use mdu_core::io::WriteAt;
pub use parity::{VerityEncoder, encode_verity};
pub(crate) use verify::correct_after;
pub use verify::{FecOutcome, Shape, verify_with_fec, verify_with_fec_after};

/// Fewest parity bytes per codeword `veritysetup` accepts.
pub const MIN_ROOTS: u8 = 2;
/// Most parity bytes per codeword `veritysetup` accepts.
pub const MAX_ROOTS: u8 = 24;
