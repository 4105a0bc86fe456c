//! The ext4 reader and the fscrypt volume over hostile images: a small
//! kernel-made image (an encrypted tree: files with holes, an indexed
//! directory of long names, fast and slow symlinks) patched at
//! fuzzer-chosen offsets, or the fuzzer's bytes as the whole image.
//! Whatever the input:
//!
//! * nothing panics (a read past the image's end is a typed error);
//! * every extent the reader returns lies inside the file system and within
//!   the file's size, in logical order without overlaps;
//! * a file's contents read whole equal its contents read block by block;
//! * each no-key name listed decodes (with the base64url and no-key-name
//!   parsers) to a name that matches the entry's stored ciphertext, and a
//!   decrypted name re-encrypts to the stored bytes;
//! * a name listed looks up to the entry's inode.
#![no_main]

use std::io::Read;
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mdu_fscrypt::NamesCipher;
use mdu_core::io::{IoError, ReadAt};
use mdu_fscrypt::ext4::ROOT_INO;
use mdu_fscrypt::key::MasterKey;
use mdu_fscrypt::nokey;
use mdu_fscrypt::volume::{Keyring, NameForm, Volume};

/// The master key of the seed image's encrypted tree.
fn master() -> MasterKey {
    MasterKey::new(&(0x40u8..0x80).collect::<Vec<_>>()).unwrap()
}

fn seed() -> &'static [u8] {
    static SEED: OnceLock<Vec<u8>> = OnceLock::new();
    SEED.get_or_init(|| {
        let gz = include_bytes!("../seeds/ext4-fscrypt.img.gz");
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    })
}

/// The image as the reader sees it: a read past its end is an error the
/// reader must turn into a typed one (a truncated image is a normal input).
struct Checked<'a>(&'a [u8]);

impl ReadAt for Checked<'_> {
    fn size(&self) -> Result<u64, IoError> {
        Ok(self.0.len() as u64)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), IoError> {
        self.0.read_exact_at(buf, offset)
    }
}

#[derive(Arbitrary, Debug)]
enum Input {
    /// Bytes written over the seed image.
    Patched(Vec<(u32, Vec<u8>)>),
    /// The whole image.
    Raw(Vec<u8>),
}

fuzz_target!(|input: Input| {
    let image = match input {
        Input::Raw(bytes) => bytes,
        Input::Patched(patches) => {
            let mut image = seed().to_vec();
            for (at, bytes) in patches.into_iter().take(16) {
                let at = at as usize % image.len();
                let n = bytes.len().min(image.len() - at);
                image[at..at + n].copy_from_slice(&bytes[..n]);
            }
            image
        }
    };
    for with_key in [true, false] {
        let mut keys = Keyring::new();
        if with_key {
            keys.add(master());
        }
        let Ok(vol) = Volume::open(Checked(&image), keys) else {
            return;
        };
        walk(&vol, with_key);
    }
});

/// Walks the tree breadth first, over at most 64 directories and files.
fn walk(vol: &Volume<Checked<'_>>, with_key: bool) {
    let fs = vol.ext4();
    let sb = fs.superblock().clone();
    let bs = u64::from(fs.block_size());
    let mut queue = vec![(ROOT_INO, b"/".to_vec())];
    let mut visited = 0;
    while let Some((ino, path)) = queue.pop() {
        visited += 1;
        if visited > 64 {
            return;
        }
        let Ok(inode) = vol.inode(ino) else { continue };
        if let Ok(extents) = fs.extents(&inode) {
            let mut next = 0;
            for e in &extents {
                assert!(e.len > 0 && e.logical >= next, "{e:?} out of order");
                assert!(
                    e.physical + e.len <= sb.blocks_count,
                    "{e:?} past the file system"
                );
                assert!(
                    (e.logical + e.len) * bs < inode.size.saturating_add(bs),
                    "{e:?} past the size {}",
                    inode.size
                );
                next = e.logical + e.len;
            }
        }
        if inode.is_file() && inode.size <= 1 << 20 {
            if let Ok(contents) = vol.contents(&inode)
                && let Ok(whole) = contents.read_to_vec()
            {
                let mut block = vec![0u8; bs as usize];
                for (i, chunk) in whole.chunks(bs as usize).enumerate() {
                    let n = contents
                        .read(i as u64, &mut block)
                        .expect("a read that succeeded whole");
                    assert_eq!(&block[..n], chunk, "block {i} of inode {ino}");
                }
            }
        }
        if inode.is_symlink() {
            let _ = vol.read_link(&inode);
        }
        if !inode.is_dir() {
            continue;
        }
        let Ok(entries) = vol.list(ino) else { continue };
        // In a damaged tree a path may lead elsewhere (a duplicate name on
        // the way): check lookups only where it leads here.
        let resolves_here = vol.lookup(&path) == Ok(ino);
        let names = vol
            .context(&inode)
            .ok()
            .flatten()
            .filter(|_| with_key)
            .and_then(|ctx| NamesCipher::new(&master(), &ctx, u64::from(ino), vol.info()).ok());
        for e in &entries {
            match e.form {
                NameForm::NoKey => {
                    let parsed = nokey::decode(&e.name).expect("a no-key name we made parses");
                    assert!(
                        parsed.matches(&e.stored),
                        "no-key name does not match its entry"
                    );
                }
                NameForm::Decrypted => {
                    if let Some(c) = &names {
                        // The stored name may carry padding the kernel
                        // would not write; a clean re-encryption must
                        // decrypt to the same name.
                        let again = c.encrypt_name(&e.name).expect("a decrypted name encrypts");
                        assert_eq!(c.decrypt_name(&again).unwrap(), e.name);
                    }
                }
                NameForm::Clear => {}
            }
            if e.name.is_empty() || e.name.contains(&b'/') || e.name == b"." || e.name == b".." {
                continue;
            }
            let mut child = path.clone();
            child.extend_from_slice(&e.name);
            if resolves_here && let Ok(found) = vol.lookup(&child) {
                // Two entries may share a name in a damaged directory;
                // the first one is found.
                let first = entries.iter().find(|x| x.name == e.name).unwrap();
                assert_eq!(found, first.ino, "lookup of a listed name");
            }
            child.push(b'/');
            queue.push((e.ino, child));
        }
    }
}
