//! Benchmark buffers: pseudo-random contents at a pseudo-random alignment.

/// A buffer of `len` pseudo-random bytes at a pseudo-random offset (0..64)
/// from a 64-byte boundary, so that no implementation is timed only on
/// conveniently aligned memory.
pub struct Buf {
    store: Vec<u8>,
    off: usize,
    len: usize,
}

/// The pseudo-random stream of `seed` (xorshift64).
fn stream(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// `dst` filled with the next draws of `next`, eight bytes each.
fn fill(dst: &mut [u8], mut next: impl FnMut() -> u64) {
    for chunk in dst.chunks_mut(8) {
        let v = next().to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
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
        let mut next = stream(seed);
        let misalign = (next() % 64) as usize;
        let mut store = vec![0u8; len + 128];
        let base = store.as_ptr() as usize;
        let off = (64 - base % 64) % 64 + misalign;
        fill(&mut store[off..off + len], next);
        Buf { store, off, len }
    }

    /// `len` bytes determined by `seed`, starting exactly `at` bytes
    /// (below 4096) past a 4096-byte boundary: buffers that several
    /// implementations of one case write get the same alignment, down to
    /// the page offset that store splits and 4 KiB aliasing depend on.
    ///
    /// ```
    /// let a = mdu_bench::buffer::Buf::random_at(100, 7, 33);
    /// assert_eq!(a.bytes().as_ptr() as usize % 4096, 33);
    /// assert_eq!(a.bytes(), mdu_bench::buffer::Buf::random(100, 7).bytes());
    /// ```
    pub fn random_at(len: usize, seed: u64, at: usize) -> Buf {
        assert!(at < 4096, "an offset within a page");
        let mut next = stream(seed);
        // The same contents as `random` (whose first draw is its offset).
        next();
        let mut store = vec![0u8; len + 8192];
        let base = store.as_ptr() as usize;
        let off = (4096 - base % 4096) % 4096 + at;
        fill(&mut store[off..off + len], next);
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
