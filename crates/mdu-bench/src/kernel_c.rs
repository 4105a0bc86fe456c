//! The kernel's two base64url encoders for fscrypt no-key names, as C
//! baselines: the 2021-2025 bit-accumulator encoder and the 3-byte block
//! encoder that replaced it.

mod ffi {
    unsafe extern "C" {
        pub(super) fn mdu_c_b64url_bitstream(src: *const u8, len: usize, dst: *mut u8) -> usize;
        pub(super) fn mdu_c_b64url_block(src: *const u8, len: usize, dst: *mut u8) -> usize;
    }
}

/// The number of base64url characters (no padding) for `len` bytes.
///
/// ```
/// assert_eq!(mdu_bench::kernel_c::encoded_len(4), 6);
/// ```
pub fn encoded_len(len: usize) -> usize {
    (len / 3) * 4 + [0, 2, 3][len % 3]
}

/// Checks the output room and returns the encoded length.
fn room(src: &[u8], dst: &[u8]) -> Option<usize> {
    let need = encoded_len(src.len());
    (dst.len() >= need).then_some(need)
}

/// Encodes `src` as unpadded base64url into `dst` with the bit-accumulator
/// encoder; returns the number of characters, or `None` if `dst` is shorter
/// than [`encoded_len`].
///
/// ```
/// let mut out = [0u8; 8];
/// let n = mdu_bench::kernel_c::bitstream_encode(b"foob", &mut out).unwrap();
/// assert_eq!(&out[..n], b"Zm9vYg");
/// ```
pub fn bitstream_encode(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let need = room(src, dst)?;
    // SAFETY: `src` is valid for `src.len()` reads, and `dst` holds at least
    // `encoded_len(src.len())` bytes, the most the C function writes.
    let n = unsafe { ffi::mdu_c_b64url_bitstream(src.as_ptr(), src.len(), dst.as_mut_ptr()) };
    debug_assert_eq!(n, need);
    Some(n)
}

/// Encodes `src` as unpadded base64url into `dst` with the 3-byte block
/// encoder; returns the number of characters, or `None` if `dst` is shorter
/// than [`encoded_len`].
///
/// ```
/// let mut out = [0u8; 8];
/// let n = mdu_bench::kernel_c::block_encode(b"fooba", &mut out).unwrap();
/// assert_eq!(&out[..n], b"Zm9vYmE");
/// ```
pub fn block_encode(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let need = room(src, dst)?;
    // SAFETY: as for `bitstream_encode`: bounded reads of `src`, at most
    // `encoded_len(src.len())` writes into `dst`, which is that long.
    let n = unsafe { ffi::mdu_c_b64url_block(src.as_ptr(), src.len(), dst.as_mut_ptr()) };
    debug_assert_eq!(n, need);
    Some(n)
}
