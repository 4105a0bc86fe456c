//! Benchmark buffers: pseudo-random contents at a pseudo-random alignment.

/// A buffer of `len` pseudo-random bytes at a pseudo-random offset (0..64)
/// from a 64-byte boundary, so that no implementation is timed only on
/// conveniently aligned memory.
pub struct Buf {
    store: Vec<u8>,
    off: usize,
    len: usize,
}

impl Buf {
    /// `len` bytes determined by `seed`, starting `seed`-determined 0..64
    /// bytes past a 64-byte boundary.
    ///
    /// ```
    /// let a = mdu_bench::buffer::Buf::random(100, 7);
    /// let b = mdu_bench::buffer::Buf::random(100, 7);
    /// assert_eq!(a.bytes(), b.bytes());
    /// assert_eq!(a.bytes().len(), 100);
    /// ```
    pub fn random(len: usize, seed: u64) -> Buf {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut store = vec![0u8; len + 128];
        let base = store.as_ptr() as usize;
        let misalign = (next() % 64) as usize;
        let off = (64 - base % 64) % 64 + misalign;
        // The contents depend on the seed only, not on where they landed.
        for chunk in store[off..off + len].chunks_mut(8) {
            let v = next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        Buf { store, off, len }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.store[self.off..self.off + self.len]
    }

    /// The bytes, writable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.store[self.off..self.off + self.len]
    }
}
