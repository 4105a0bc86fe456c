//! The system OpenSSL's EVP interface as a peer of the XTS and CBC cases:
//! one context for all units, the IV re-set per unit (how a user of
//! OpenSSL encrypts sectors), no padding, out of place.
//!
//! ```
//! use mdu_bench::registry::evp::Evp;
//! use mdu_core::{Direction, Iv};
//!
//! let mut evp = Evp::cbc(&[7; 32], Direction::Encrypt);
//! let src = [0u8; 1024];
//! let mut dst = [0u8; 1024 + 16];
//! evp.run(512, Iv::plain64(1), &src, &mut dst);
//! assert_ne!(dst[..16], [0; 16]);
//! ```

use mdu_core::{Direction, Iv};
use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;

/// One keyed EVP context of the system OpenSSL.
#[allow(missing_debug_implementations)] // an OpenSSL handle
pub struct Evp {
    ctx: CipherCtx,
    dir: Direction,
}

impl Evp {
    /// AES-XTS with a 32- or 64-byte key (AES-128 or AES-256).
    ///
    /// ```
    /// let key = mdu_bench::registry::key(64);
    /// let _ = mdu_bench::registry::evp::Evp::xts(&key, mdu_core::Direction::Decrypt);
    /// ```
    pub fn xts(key: &[u8], dir: Direction) -> Evp {
        let cipher = if key.len() == 32 {
            Cipher::aes_128_xts()
        } else {
            Cipher::aes_256_xts()
        };
        Evp::new(cipher, key, dir)
    }

    /// AES-CBC with a 16- or 32-byte key, without padding.
    ///
    /// ```
    /// let _ = mdu_bench::registry::evp::Evp::cbc(&[7; 16], mdu_core::Direction::Encrypt);
    /// ```
    pub fn cbc(key: &[u8], dir: Direction) -> Evp {
        let cipher = if key.len() == 16 {
            Cipher::aes_128_cbc()
        } else {
            Cipher::aes_256_cbc()
        };
        let mut evp = Evp::new(cipher, key, dir);
        evp.ctx.set_padding(false);
        evp
    }

    fn new(cipher: &CipherRef, key: &[u8], dir: Direction) -> Evp {
        let mut ctx = CipherCtx::new().expect("OpenSSL context");
        match dir {
            Direction::Encrypt => ctx.encrypt_init(Some(cipher), Some(key), None),
            Direction::Decrypt => ctx.decrypt_init(Some(cipher), Some(key), None),
        }
        .expect("an OpenSSL key");
        Evp { ctx, dir }
    }

    /// `src` into `dst` as units of `unit` bytes, unit `i` under
    /// `first + i`. `dst` must be 16 bytes longer than `src` (OpenSSL's
    /// output rule).
    ///
    /// ```
    /// use mdu_bench::registry::evp::Evp;
    /// use mdu_core::{Direction, Iv};
    /// let mut dst = [0u8; 48];
    /// let key = mdu_bench::registry::key(64);
    /// Evp::xts(&key, Direction::Encrypt).run(32, Iv::ZERO, &[1; 32], &mut dst);
    /// ```
    pub fn run(&mut self, unit: usize, first: Iv, src: &[u8], dst: &mut [u8]) {
        for (i, u) in src.chunks(unit).enumerate() {
            let iv = first.advance(i as u128).0;
            match self.dir {
                Direction::Encrypt => self.ctx.encrypt_init(None, None, Some(&iv)),
                Direction::Decrypt => self.ctx.decrypt_init(None, None, Some(&iv)),
            }
            .expect("OpenSSL IV");
            let out = &mut dst[i * unit..i * unit + unit + 16];
            let n = self
                .ctx
                .cipher_update(u, Some(out))
                .expect("OpenSSL update");
            debug_assert_eq!(n, unit);
        }
    }
}

/// The system OpenSSL's row name ("OpenSSL 3.0 EVP").
///
/// ```
/// assert!(mdu_bench::registry::evp::system_label().ends_with(" EVP"));
/// ```
pub fn system_label() -> String {
    format!(
        "{} EVP",
        crate::openssl_peer::short_name(openssl::version::version())
    )
}

/// The recent OpenSSL's short name ("OpenSSL 3.6"), the prefix of its rows.
#[cfg(mdu_openssl_peer)]
pub(crate) fn recent_name() -> String {
    crate::openssl_peer::short_name(crate::openssl_peer::version())
}
