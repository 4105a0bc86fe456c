//! The image the unit tests of the header writers share.

use std::io::Write;

use crate::{FormatParams, Hash, Image, KdfParams, format, os_random};

/// A new LUKS2 header region (PBKDF2 with 1000 iterations, passphrase
/// `pw`, a 1 MiB data offset) in an unnamed temporary file, and its header.
pub(crate) fn image() -> (std::fs::File, Image) {
    let params = FormatParams {
        kdf: KdfParams::Pbkdf2 {
            hash: Hash::Sha256,
            iterations: 1000,
        },
        digest_iterations: 1000,
        data_offset: 1 << 20,
        ..FormatParams::default()
    };
    let key: Vec<u8> = (0..64).collect();
    let region = format(&params, b"pw", &key, &mut os_random).unwrap();
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(&region).unwrap();
    let img = Image::load(&f).unwrap();
    (f, img)
}
