//! The digests of many inputs at once: small inputs are read whole and
//! hashed together, so that their blocks pair up across inputs for the
//! two-way kernel, and groups of inputs are spread over the rayon pool.

use std::cell::RefCell;
use std::collections::VecDeque;

use super::{DESCRIPTOR_LEN, FileDigest, Params, descriptor_of, digest};
use crate::hash::{BlockHasher, fresh_state};
use crate::merkle::roots_of_many;
use crate::{Digest, Error, HashAlg, Source, sha256};

/// Inputs of at most this many bytes are read whole and hashed together
/// with the other small inputs of their group; larger ones are hashed one
/// at a time like [`digest`], on every thread of the pool.
const SMALL_MAX: u64 = 1 << 20;
/// Inputs per group: one task of the rayon pool.
const GROUP: usize = 8;
/// Inputs taken from the caller's iterator at a time: the first batch is
/// small so that the first results come early; later ones are larger.
const FIRST_BATCH: usize = 32;
const MAX_BATCH: usize = 512;

/// The fs-verity digests of many inputs, in the order given, as an
/// iterator of results (one per input; an input that cannot be read is an
/// `Err` in its place and does not stop the others).
///
/// This is what `fsverity digest FILE...` computes, faster for many small
/// files: inputs are taken in batches (32 at first, then up to 512) and the
/// batch is split into groups of 8 spread over the rayon pool. Within a
/// group, every input of at most 1 MiB that can tell its size (bytes, a
/// [`Source::path`] to a regular file, a seekable reader) is read whole and
/// the trees of all of them are built together: each level of every input
/// is one list of equal-length blocks, hashed in pairs across inputs, and
/// the descriptors are hashed in pairs too. Larger inputs are hashed like
/// [`digest()`], with every thread of the pool. Each file is opened and read
/// on the thread that hashes it.
///
/// A caller that stops at the first error (as `fsverity digest` does) stops
/// the work: the iterator is lazy, and reads at most one batch ahead of the
/// results taken from it. With invalid parameters the only item is the
/// error.
///
/// ```
/// use mdu_verity::{fsverity, Source};
/// let p = fsverity::Params::default();
/// let files = [vec![1u8; 5000], vec![], vec![2u8; 70_000]];
/// let got: Vec<_> = fsverity::digest_many(files.iter().map(Source::from), &p)
///     .collect::<Result<_, _>>()?;
/// for (f, d) in files.iter().zip(&got) {
///     assert_eq!(*d, fsverity::digest(f, &p)?);
/// }
/// let mut it = fsverity::digest_many([Source::path("/no/such/file")], &p);
/// assert!(matches!(it.next(), Some(Err(mdu_verity::Error::Io(_)))));
/// assert!(it.next().is_none());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn digest_many<'a, I>(inputs: I, params: &Params) -> DigestMany<'a, I::IntoIter>
where
    I: IntoIterator<Item = Source<'a>>,
{
    let kit = params.validate().and_then(|()| {
        Ok(Kit {
            hasher: params.hasher()?,
            plain: fresh_state(params.backend)?,
        })
    });
    let (kit, ready) = match kit {
        Ok(k) => (Some(k), VecDeque::new()),
        Err(e) => (None, VecDeque::from([Err(e)])),
    };
    DigestMany {
        inputs: inputs.into_iter(),
        params: params.clone(),
        kit,
        ready,
        batch: FIRST_BATCH,
    }
}

/// What every group hashes with.
struct Kit {
    /// The salted block hasher.
    hasher: BlockHasher,
    /// A fresh, unsalted state for the descriptors.
    plain: sha256::State,
}

/// The iterator of [`digest_many`].
///
/// ```
/// use mdu_verity::{fsverity, Source};
/// let it = fsverity::digest_many([Source::bytes(b"abc")], &Default::default());
/// assert_eq!(it.count(), 1);
/// ```
pub struct DigestMany<'a, I: Iterator<Item = Source<'a>>> {
    inputs: I,
    params: Params,
    /// `None` when the parameters were refused: nothing more to do.
    kit: Option<Kit>,
    ready: VecDeque<Result<FileDigest, Error>>,
    batch: usize,
}

impl<'a, I: Iterator<Item = Source<'a>>> Iterator for DigestMany<'a, I> {
    type Item = Result<FileDigest, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ready.is_empty()
            && let Some(kit) = &self.kit
        {
            let batch: Vec<Source<'a>> = self.inputs.by_ref().take(self.batch).collect();
            self.batch = (self.batch * 2).min(MAX_BATCH);
            self.ready = digest_batch(batch, &self.params, kit).into();
        }
        self.ready.pop_front()
    }
}

impl<'a, I: Iterator<Item = Source<'a>>> std::fmt::Debug for DigestMany<'a, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DigestMany")
            .field("params", &self.params)
            .field("ready", &self.ready.len())
            .finish()
    }
}

/// The digests of one batch, in order, its groups on the rayon pool.
fn digest_batch(
    batch: Vec<Source<'_>>,
    params: &Params,
    kit: &Kit,
) -> Vec<Result<FileDigest, Error>> {
    let mut groups: Vec<Vec<Source<'_>>> = Vec::new();
    let mut it = batch.into_iter().peekable();
    while it.peek().is_some() {
        groups.push(it.by_ref().take(GROUP).collect());
    }
    #[cfg(feature = "rayon")]
    let done: Vec<Vec<Result<FileDigest, Error>>> = {
        use rayon::prelude::*;
        groups
            .into_par_iter()
            .map(|g| digest_group(g, params, kit))
            .collect()
    };
    #[cfg(not(feature = "rayon"))]
    let done: Vec<Vec<Result<FileDigest, Error>>> = groups
        .into_iter()
        .map(|g| digest_group(g, params, kit))
        .collect();
    done.into_iter().flatten().collect()
}

thread_local! {
    /// Read buffers of the small inputs, kept between groups.
    static BUFS: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// The digests of one group: the small inputs together, the others one by
/// one.
fn digest_group(
    group: Vec<Source<'_>>,
    params: &Params,
    kit: &Kit,
) -> Vec<Result<FileDigest, Error>> {
    let mut bufs = BUFS.with(|b| std::mem::take(&mut *b.borrow_mut()));
    if bufs.len() < group.len() {
        bufs.resize_with(group.len(), Vec::new);
    }
    let mut out: Vec<Option<Result<FileDigest, Error>>> = Vec::with_capacity(group.len());
    let mut small = Vec::new();
    for (i, mut src) in group.into_iter().enumerate() {
        match src.read_small(SMALL_MAX, &mut bufs[i]) {
            Ok(true) => {
                small.push(i);
                out.push(None);
            }
            Ok(false) => out.push(Some(digest(src, params))),
            Err(e) => out.push(Some(Err(e))),
        }
    }
    if !small.is_empty() {
        let inputs: Vec<&[u8]> = small.iter().map(|&i| bufs[i].as_slice()).collect();
        for (&i, d) in small.iter().zip(digests_of_small(&inputs, params, kit)) {
            out[i] = Some(Ok(d));
        }
    }
    for b in &mut bufs {
        // Keep the buffers of ordinary sizes for the next group.
        if b.capacity() > 2 * SMALL_MAX as usize {
            *b = Vec::new();
        }
    }
    BUFS.with(|b| *b.borrow_mut() = bufs);
    // Every slot was filled above: the small inputs by `digests_of_small`,
    // which returns one digest per input.
    out.into_iter().flatten().collect()
}

/// The file digests of small inputs in memory, built together.
fn digests_of_small(inputs: &[&[u8]], params: &Params, kit: &Kit) -> Vec<FileDigest> {
    let bs = params.block_size as usize;
    let roots = roots_of_many(&kit.hasher, bs, inputs);
    let descriptors: Vec<[u8; DESCRIPTOR_LEN]> = inputs
        .iter()
        .zip(&roots)
        .map(|(d, root)| descriptor_of(params, d.len() as u64, root))
        .collect();
    let mut digests = Vec::with_capacity(inputs.len());
    match params.hash {
        HashAlg::Sha256 => {
            let mut pairs = descriptors.chunks_exact(2);
            for pair in &mut pairs {
                let (a, b) = kit.plain.finup2x(&pair[0], &pair[1]);
                digests.push(Digest::from_slice(&a));
                digests.push(Digest::from_slice(&b));
            }
            for d in pairs.remainder() {
                digests.push(Digest::from_slice(&kit.plain.finup(d)));
            }
        }
        _ => digests.extend(descriptors.iter().map(|d| params.hash.hash(d))),
    }
    digests
        .into_iter()
        .map(|digest| FileDigest {
            alg: params.hash,
            digest,
        })
        .collect()
}
