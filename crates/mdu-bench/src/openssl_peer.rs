//! A recent OpenSSL (3.5 or later, built from the `openssl-src` crate's
//! source in release builds; see `build.rs`) as a peer of the XTS and CBC
//! paths, beside the system OpenSSL of the `openssl` crate.
//!
//! OpenSSL 3.5 added an AVX-512 VAES XTS path (`aesni-xts-avx512`) that
//! the system OpenSSL 3.0 lacks; `xts_avx512()` says whether OpenSSL's own
//! test finds it eligible on this CPU.
//!
//! ```no_run
//! # #[cfg(mdu_openssl_peer)]
//! # {
//! use mdu_bench::openssl_peer::{Cipher, version};
//!
//! let key: Vec<u8> = (0..64).collect();
//! let mut c = Cipher::xts(&key, true).expect("an XTS key");
//! let (src, mut dst) = ([0u8; 512], [0u8; 512]);
//! c.crypt(&[0; 16], &src, &mut dst);
//! println!("{}", version());
//! # }
//! ```

/// The short name of an OpenSSL version string: "OpenSSL 3.0" for
/// "OpenSSL 3.0.19 27 Jan 2026".
///
/// ```
/// assert_eq!(mdu_bench::openssl_peer::short_name("OpenSSL 3.6.3 9 Jun 2026"), "OpenSSL 3.6");
/// ```
pub fn short_name(version: &str) -> String {
    let number = version.split_whitespace().nth(1).unwrap_or("?");
    let minor: Vec<&str> = number.split('.').take(2).collect();
    format!("OpenSSL {}", minor.join("."))
}

/// Why the recent OpenSSL peer is not in this build (a debug build,
/// another target, a failed OpenSSL build), or `None` when it is.
pub fn skipped() -> Option<&'static str> {
    option_env!("MDU_OPENSSL_PEER_SKIPPED")
}

#[cfg(mdu_openssl_peer)]
pub use imp::{Cipher, SOURCE, version, xts_avx512};

#[cfg(mdu_openssl_peer)]
mod imp {
    use std::ffi::{CStr, c_int, c_void};

    use mdu_core::Iv;

    /// The crate the OpenSSL source came from, with its OpenSSL version.
    pub const SOURCE: &str = env!("MDU_OPENSSL_PEER_SOURCE");

    mod ffi {
        use std::ffi::{c_char, c_int, c_void};

        // csrc/openssl_peer.c, linked with its libcrypto by build.rs.
        #[link(name = "mdu_openssl_peer", kind = "static")]
        unsafe extern "C" {
            pub(super) fn mdu_ossl_new(
                name: *const c_char,
                key: *const u8,
                enc: c_int,
            ) -> *mut c_void;
            pub(super) fn mdu_ossl_crypt(
                ctx: *mut c_void,
                iv: *const u8,
                src: *const u8,
                dst: *mut u8,
                len: usize,
            ) -> c_int;
            pub(super) fn mdu_ossl_free(ctx: *mut c_void);
            pub(super) fn mdu_ossl_version() -> *const c_char;
            pub(super) fn mdu_ossl_xts_avx512() -> c_int;
        }
    }

    /// The OpenSSL version string ("OpenSSL 3.6.3 ...").
    pub fn version() -> &'static str {
        // SAFETY: OpenSSL returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(ffi::mdu_ossl_version()) }
            .to_str()
            .unwrap_or("OpenSSL (version not UTF-8)")
    }

    /// Whether OpenSSL's AVX-512 VAES XTS path runs on this CPU, by
    /// OpenSSL's own test (AVX-512 F/BW/DQ/VL, VAES, VPCLMULQDQ, VBMI2).
    pub fn xts_avx512() -> bool {
        // SAFETY: a CPUID test without arguments.
        unsafe { ffi::mdu_ossl_xts_avx512() != 0 }
    }

    /// One EVP cipher context, keyed, without padding.
    pub struct Cipher {
        ctx: *mut c_void,
    }

    impl Cipher {
        /// AES-XTS with a 32- or 64-byte key (AES-128 or AES-256), or
        /// `None` for another length or a key OpenSSL refuses (two equal
        /// halves).
        pub fn xts(key: &[u8], enc: bool) -> Option<Cipher> {
            match key.len() {
                32 => Cipher::new(c"AES-128-XTS", key, enc),
                64 => Cipher::new(c"AES-256-XTS", key, enc),
                _ => None,
            }
        }

        /// AES-CBC with a 16- or 32-byte key, without padding.
        pub fn cbc(key: &[u8], enc: bool) -> Option<Cipher> {
            match key.len() {
                16 => Cipher::new(c"AES-128-CBC", key, enc),
                32 => Cipher::new(c"AES-256-CBC", key, enc),
                _ => None,
            }
        }

        /// `key` holds the key length of cipher `name` (the callers above).
        fn new(name: &CStr, key: &[u8], enc: bool) -> Option<Cipher> {
            // SAFETY: `name` is NUL-terminated; `key` holds the cipher's
            // key length (the callers), all OpenSSL reads of it.
            let ctx = unsafe { ffi::mdu_ossl_new(name.as_ptr(), key.as_ptr(), c_int::from(enc)) };
            (!ctx.is_null()).then_some(Cipher { ctx })
        }

        /// `src` to `dst` (of the same length) as units of `unit` bytes, the
        /// IV re-set per unit: unit `i` under `first + i` (how a user of
        /// OpenSSL encrypts sectors; `unit == src.len()` is one message).
        pub fn crypt_units(&mut self, unit: usize, first: Iv, src: &[u8], dst: &mut [u8]) {
            assert_eq!(src.len(), dst.len(), "one output byte per input byte");
            for (i, (s, d)) in src.chunks(unit).zip(dst.chunks_mut(unit)).enumerate() {
                self.crypt(&first.advance(i as u128).0, s, d);
            }
        }

        /// One message: `src` to `dst` (of the same length, below 2^31)
        /// under `iv`. Panics if OpenSSL refuses the message (an XTS
        /// message under 16 bytes, a CBC message not of whole blocks).
        pub fn crypt(&mut self, iv: &[u8; 16], src: &[u8], dst: &mut [u8]) {
            assert_eq!(src.len(), dst.len(), "one output byte per input byte");
            // SAFETY: `ctx` is a live context; `iv` is 16 bytes, the IV
            // length of XTS and CBC; OpenSSL reads `src.len()` bytes of
            // `src` and, without padding, writes as many to `dst`.
            let ok = unsafe {
                ffi::mdu_ossl_crypt(
                    self.ctx,
                    iv.as_ptr(),
                    src.as_ptr(),
                    dst.as_mut_ptr(),
                    src.len(),
                )
            };
            assert!(ok == 1, "OpenSSL refused a {}-byte message", src.len());
        }
    }

    impl Drop for Cipher {
        fn drop(&mut self) {
            // SAFETY: `ctx` came from `mdu_ossl_new` and is freed once.
            unsafe { ffi::mdu_ossl_free(self.ctx) }
        }
    }
}
