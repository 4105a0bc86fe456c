use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::sync::mpsc;
use std::time::Duration;

use super::{READ_BUF_LEN, Source};
use crate::{Error, dmverity, fsverity};

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + i / 4099) as u8).collect()
}

/// A seekable reader that says (by seeking to its end) it holds
/// `claimed` bytes but whose reads end after `real` of them: a file
/// truncated while it is read.
struct Shrinking {
    inner: Cursor<Vec<u8>>,
    claimed: u64,
}

impl Shrinking {
    fn new(claimed: usize, real: usize) -> Shrinking {
        let mut d = data(claimed);
        d.truncate(real);
        Shrinking {
            inner: Cursor::new(d),
            claimed: claimed as u64,
        }
    }
}

impl Read for Shrinking {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf)
    }
}

impl Seek for Shrinking {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match pos {
            SeekFrom::End(off) => {
                let to = self
                    .claimed
                    .checked_add_signed(off)
                    .ok_or(io::ErrorKind::InvalidInput)?;
                self.inner.seek(SeekFrom::Start(to))
            }
            other => self.inner.seek(other),
        }
    }
}

fn is_eof(r: Result<impl std::fmt::Debug, Error>, expected: u64, got: u64, what: &str) {
    match r {
        Err(Error::UnexpectedEof {
            expected: e,
            got: g,
        }) => {
            assert_eq!((e, g), (expected, got), "{what}");
        }
        other => {
            panic!("{what}: expected UnexpectedEof {{ {expected}, {got} }}, got {other:?}")
        }
    }
}

#[test]
fn a_source_that_ends_before_its_given_length_is_unexpected_eof_not_a_digest_of_the_prefix() {
    let p = fsverity::Params::default();
    // Small (one read) and large (the read ring and its thread).
    for (promised, real) in [
        (100_000usize, 60_000usize),
        (3 * READ_BUF_LEN + 5, 2 * READ_BUF_LEN + 7),
    ] {
        let d = data(real);
        let what = format!("{real} of {promised} bytes");
        is_eof(
            fsverity::digest(Source::reader(&d[..]).with_len(promised as u64), &p),
            promised as u64,
            real as u64,
            &format!("plain reader, {what}"),
        );
        is_eof(
            fsverity::digest(
                Source::chunks(d.chunks(7_000).map(Ok)).with_len(promised as u64),
                &p,
            ),
            promised as u64,
            real as u64,
            &format!("chunks, {what}"),
        );
        is_eof(
            fsverity::digest(Source::bytes(&d).with_len(promised as u64), &p),
            promised as u64,
            real as u64,
            &format!("bytes, {what}"),
        );
        is_eof(
            fsverity::digest(Source::seekable(Shrinking::new(promised, real)), &p),
            promised as u64,
            real as u64,
            &format!("shrinking seekable reader, {what}"),
        );
        let mut hash = Cursor::new(Vec::new());
        is_eof(
            dmverity::format(
                Source::seekable(Shrinking::new(promised, real)),
                &mut hash,
                &dmverity::Params::default(),
            ),
            promised as u64,
            real as u64,
            &format!("dm-verity format, {what}"),
        );
    }
}

#[test]
fn a_small_input_that_shrinks_is_unexpected_eof_among_many_files() {
    let p = fsverity::Params::default();
    let good = data(5000);
    let sources = vec![
        Source::bytes(&good),
        Source::seekable(Shrinking::new(9000, 4000)),
        Source::reader(&good[..]).with_len(6000),
    ];
    let r: Vec<_> = fsverity::digest_many(sources, &p).collect();
    assert_eq!(
        r[0].as_ref().unwrap(),
        &fsverity::digest(&good, &p).unwrap()
    );
    let mut r = r.into_iter().skip(1);
    is_eof(r.next().unwrap(), 9000, 4000, "shrinking seekable reader");
    is_eof(r.next().unwrap(), 6000, 5000, "plain reader");
}

#[test]
fn dm_verity_verify_of_a_source_shorter_than_promised_is_unexpected_eof() {
    let d = data(40 * 4096);
    let p = dmverity::Params::default();
    let mut hash = Cursor::new(Vec::new());
    let root = dmverity::format(&d, &mut hash, &p).unwrap().root_hash();
    let short = &d[..25 * 4096 + 100];
    is_eof(
        dmverity::verify(
            Source::reader(short).with_len(d.len() as u64),
            &mut hash,
            &p,
            &root,
        ),
        d.len() as u64,
        short.len() as u64,
        "plain reader",
    );
    is_eof(
        dmverity::verify(
            Source::seekable(Shrinking::new(d.len(), short.len())),
            &mut hash,
            &p,
            &root,
        ),
        d.len() as u64,
        short.len() as u64,
        "shrinking seekable reader",
    );
    // A source that is short by its own account is a missing block (a
    // verification failure), as before.
    let pinned = dmverity::Params {
        data_blocks: Some(40),
        ..p
    };
    let r = dmverity::verify(
        Source::seekable(Cursor::new(short)),
        &mut hash,
        &pinned,
        &root,
    );
    assert!(
        matches!(r, Err(Error::MissingDataBlock { block: 25, .. })),
        "{r:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_path_without_a_size_is_refused_before_it_is_read() {
    let p = fsverity::Params::default();
    let dir = std::env::temp_dir().join(format!("mdu-verity-fifo-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    let made = std::process::Command::new("mkfifo")
        .arg(&dir)
        .status()
        .is_ok_and(|s| s.success());
    let mut cases = vec![
        ("/dev/zero".into(), "a character device"),
        ("/dev/null".into(), "a character device"),
    ];
    if made {
        cases.push((dir.clone(), "a FIFO"));
    }
    for (path, kind) in cases {
        if !path.exists() {
            eprintln!("SKIPPED {path:?}: not on this system");
            continue;
        }
        let (tx, rx) = mpsc::channel();
        let p2 = p.clone();
        let path2: std::path::PathBuf = path;
        std::thread::spawn(move || {
            let one = fsverity::digest(Source::path(&path2), &p2);
            let many: Vec<_> =
                fsverity::digest_many([Source::path(&path2), Source::bytes(b"x")], &p2).collect();
            let _ = tx.send((path2, one, many));
        });
        let (path, one, mut many) = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("{kind}: still reading after 20 s"));
        for r in [one, many.remove(0)] {
            match r {
                Err(Error::NotSized { kind: k }) => assert_eq!(k, kind, "{path:?}"),
                other => panic!("{path:?}: expected NotSized, got {other:?}"),
            }
        }
        assert!(many[0].is_ok(), "the other file is still digested");
    }
    let _ = std::fs::remove_file(&dir);
}
