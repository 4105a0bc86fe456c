//! The shape of every cipher whose key is expanded for one AES backend.

use crate::__private::Mode;
use crate::{Backend, Cipher, Ecb, EcbMode, Kernels, KeySize, SetupError};

/// A cipher whose key is expanded for one backend of mode
/// [`Mode`](WithBackend::Mode): [`Cipher<M, K>`](Cipher)
/// (`mdu_xts::Xts<K>`, `mdu_cbc::Cbc<K>`), [`Ecb<K>`] and the ciphers built
/// on it (`mdu_hctr2::Hctr2<K>`). Code generic over it builds one key on
/// each backend this CPU runs: the shared conformance checks of
/// `mdu_aes::testing` (feature `testing`), benchmarks.
///
/// ```
/// use mdu_aes::{Aes256, Backend, Ecb, SetupError, WithBackend};
///
/// /// The names of the backends `C` runs on here, best first.
/// fn names<C: WithBackend>(key: &[u8]) -> Result<Vec<&'static str>, SetupError> {
///     Backend::<C::Mode>::available()
///         .iter()
///         .map(|&b| Ok(C::with_backend(key, b)?.backend().name()))
///         .collect()
/// }
/// assert_eq!(names::<Ecb<Aes256>>(&[1; 32])?.last(), Some(&"generic"));
/// assert_eq!(<mdu_xts::XtsAes256 as WithBackend>::KEY_LEN, 64);
/// # Ok::<(), SetupError>(())
/// ```
pub trait WithBackend: Sized {
    /// The AES mode whose backends the key runs on (`EcbMode` for [`Ecb`]
    /// and the ciphers built on it).
    type Mode: Mode;

    /// Length of the key in bytes.
    const KEY_LEN: usize;

    /// Expands `key` for the best backend of this CPU (the type's own
    /// `new`).
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`] unless `key` is
    /// [`KEY_LEN`](Self::KEY_LEN) bytes, or a key the cipher refuses
    /// ([`SetupError::WeakKey`]).
    fn new(key: &[u8]) -> Result<Self, SetupError>;

    /// Expands `key` for `backend` (the type's own `with_backend`).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), then [`SetupError::BackendUnavailable`] if
    /// this CPU cannot run `backend`.
    fn with_backend(key: &[u8], backend: Backend<Self::Mode>) -> Result<Self, SetupError>;

    /// The backend the key was expanded for.
    fn backend(&self) -> Backend<Self::Mode>;
}

impl<M: Kernels, K: KeySize> WithBackend for Cipher<M, K> {
    type Mode = M;
    const KEY_LEN: usize = Cipher::<M, K>::KEY_LEN;

    fn new(key: &[u8]) -> Result<Self, SetupError> {
        Cipher::new(key)
    }

    fn with_backend(key: &[u8], backend: Backend<M>) -> Result<Self, SetupError> {
        Cipher::with_backend(key, backend)
    }

    fn backend(&self) -> Backend<M> {
        Cipher::backend(self)
    }
}

impl<K: KeySize> WithBackend for Ecb<K> {
    type Mode = EcbMode;
    const KEY_LEN: usize = K::LEN;

    fn new(key: &[u8]) -> Result<Self, SetupError> {
        Ecb::new(key)
    }

    fn with_backend(key: &[u8], backend: Backend<EcbMode>) -> Result<Self, SetupError> {
        Ecb::with_backend(key, backend)
    }

    fn backend(&self) -> Backend<EcbMode> {
        Ecb::backend(self)
    }
}
