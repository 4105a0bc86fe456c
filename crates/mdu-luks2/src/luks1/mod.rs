//! LUKS1 images as plain files: read the header as untrusted input, dump it
//! as `cryptsetup luksDump` does, open a key slot with a passphrase, decrypt
//! the data, format a new image, add, change and kill key slots, set the
//! UUID, erase every slot, back the header up and restore it, byte for
//! byte as cryptsetup 2.6 does.
//!
//! A LUKS1 header is one 1024-byte copy at offset 0 (no checksum, no second
//! copy): [`Header::load`] checks every field and every key slot's place
//! against the others and the image before anything is used. Each key slot
//! holds the volume key split into 4000 anti-forensic stripes
//! ([`af`](crate::af)), encrypted with the data cipher under a PBKDF2 key
//! of the passphrase; the hash (`sha1`, `sha256`, `sha512`, `ripemd160`,
//! `whirlpool`) serves PBKDF2, the splitter and the volume-key digest. The
//! data are the cipher in 512-byte sectors from the payload offset, IV
//! sector 0 there. A mode this crate does not run (`aes-lrw-plain64`,
//! `essiv:wp256`) loads and dumps, and is refused with
//! [`Error::UnsupportedCipherMode`](crate::Error::UnsupportedCipherMode)
//! when a key slot or the data are to be decrypted. [`convert_to_luks2`]
//! and [`convert_from_luks2`] convert an image in place as `cryptsetup
//! convert` does.
//!
//! ```
//! use mdu_luks2::luks1::{self, FormatParams, Header};
//! use mdu_luks2::{Direction, WeakKeys};
//!
//! let volume_key: Vec<u8> = (0..64).collect();
//! let params = FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() };
//! let mut image = luks1::format(&params, b"passphrase", &volume_key, &mut mdu_luks2::os_random)?;
//! image.resize(image.len() + 4096, 0);
//!
//! let hdr = Header::load(&image[..])?;
//! let key = hdr.unlock(&image[..], b"passphrase")?;
//! let (offset, len) = hdr.data_range(image.len() as u64)?;
//! let mut data = image[offset as usize..][..len as usize].to_vec();
//! hdr.data_cipher(&key, WeakKeys::Refuse)?.crypt(Direction::Decrypt, 0, &mut data)?;
//! # Ok::<(), mdu_luks2::Error>(())
//! ```

mod convert;
mod dump;
mod edit;
mod format;
mod header;
mod keyslot;

pub use convert::{convert_from_luks2, convert_to_luks2, luks1_header, luks2_metadata};
pub use dump::{dump_json, dump_text, volume_key_text};
pub use edit::{Restore, backup, erase, set_uuid};
pub use format::{FormatParams, format};
pub use header::{
    DIGEST_LEN, HEADER_LEN, Header, MAX_ITERATIONS, MAX_KEY_BYTES, MIN_ITERATIONS, SALT_LEN, SLOTS,
    STRIPES, Slot, probe_version,
};
pub use keyslot::{add_keyslot, change_keyslot, kill_keyslot};
