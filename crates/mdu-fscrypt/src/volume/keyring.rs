//! The master keys a volume is opened with, found by identifier or descriptor.

use super::*;

/// The master keys a reader was given: v2 keys by their identifier, v1
/// keys by the descriptor their owner chose.
///
/// ```
/// use mdu_fscrypt::key::MasterKey;
/// use mdu_fscrypt::volume::Keyring;
///
/// let mut keys = Keyring::new();
/// let id = keys.add(MasterKey::new(&[7; 64])?);
/// assert_eq!(keys.identifiers().collect::<Vec<_>>(), [id]);
/// # Ok::<(), mdu_fscrypt::key::KeyError>(())
/// ```
#[derive(Debug, Default)]
pub struct Keyring {
    pub(super) v2: Vec<(KeyIdentifier, MasterKey)>,
    pub(super) v1: Vec<([u8; 8], MasterKey)>,
}

impl Keyring {
    /// No keys: names are shown as the kernel shows them without a key.
    ///
    /// See [`Keyring`].
    pub fn new() -> Keyring {
        Keyring::default()
    }

    /// Adds a v2 master key; returns its identifier.
    ///
    /// See [`Keyring`].
    pub fn add(&mut self, key: MasterKey) -> KeyIdentifier {
        let id = key.identifier();
        self.v2.push((id, key));
        id
    }

    /// Adds a v1 master key under `descriptor`.
    ///
    /// ```
    /// use mdu_fscrypt::key::MasterKey;
    /// use mdu_fscrypt::volume::Keyring;
    ///
    /// let mut keys = Keyring::new();
    /// keys.add_v1(*b"\x01\x23\x45\x67\x89\xab\xcd\xef", MasterKey::new(&[9; 64])?);
    /// assert!(!keys.is_empty());
    /// # Ok::<(), mdu_fscrypt::key::KeyError>(())
    /// ```
    pub fn add_v1(&mut self, descriptor: [u8; 8], key: MasterKey) {
        self.v1.push((descriptor, key));
    }

    /// No key at all.
    ///
    /// See [`add_v1`](Self::add_v1).
    pub fn is_empty(&self) -> bool {
        self.v1.is_empty() && self.v2.is_empty()
    }

    /// The identifiers of the v2 keys.
    ///
    /// See [`Keyring`].
    pub fn identifiers(&self) -> impl Iterator<Item = KeyIdentifier> + '_ {
        self.v2.iter().map(|(id, _)| *id)
    }

    /// The key `spec` names, if given.
    ///
    /// See [`Keyring`].
    pub fn find(&self, spec: &KeySpec) -> Option<&MasterKey> {
        match spec {
            KeySpec::V2 { identifier } => self
                .v2
                .iter()
                .find(|(id, _)| id.0 == *identifier)
                .map(|(_, k)| k),
            KeySpec::V1 { descriptor } => self
                .v1
                .iter()
                .find(|(d, _)| d == descriptor)
                .map(|(_, k)| k),
        }
    }

    pub(super) fn given(&self) -> Vec<KeySpec> {
        let v2 = self
            .v2
            .iter()
            .map(|(id, _)| KeySpec::V2 { identifier: id.0 });
        let v1 = self.v1.iter().map(|(d, _)| KeySpec::V1 { descriptor: *d });
        v2.chain(v1).collect()
    }
}
