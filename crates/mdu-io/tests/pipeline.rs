//! The read -> transform -> write pipeline: offsets, ends, errors.

use std::cell::Cell;
use std::fs::File;

use mdu_io::Error;
use mdu_io::pipeline::{Pipeline, Sink, Source};

type Result = std::result::Result<(), Box<dyn std::error::Error>>;

/// `n` bytes painted with period 251, so swapped or shifted blocks show.
fn painted(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

#[test]
fn every_buffer_is_transformed_once_at_its_offset_and_written_where_it_was_read() -> Result {
    let dir = tempfile::tempdir()?;
    let (a, b) = (dir.path().join("in"), dir.path().join("out"));
    // Past two buffers of one thread (2 MiB each), and not a whole buffer.
    let data = painted((5 << 20) + 4096);
    std::fs::write(&a, &data)?;
    let (input, output) = (File::open(&a)?, File::create(&b)?);
    let mut offsets = Vec::new();
    let done = Cell::new(0u64);
    let report = |n: u64| done.set(done.get() + n);
    let n = Pipeline::new(512).progress(&report).run(
        Source {
            file: &input,
            path: &a,
            offset: 0,
            len: Some(data.len() as u64),
        },
        Sink {
            file: &output,
            path: &b,
            offset: 4096,
            seekable: true,
        },
        |buf: &mut [u8], at: u64| {
            offsets.push(at);
            // Each byte XORed with the low byte of its offset in the data.
            for (i, x) in buf.iter_mut().enumerate() {
                *x ^= (at as usize + i) as u8;
            }
            Ok::<(), std::io::Error>(())
        },
    )?;
    assert_eq!(n, data.len() as u64);
    assert_eq!(done.get(), n);
    assert_eq!(offsets, [0, 2 << 20, 4 << 20]);
    let out = std::fs::read(&b)?;
    assert_eq!(&out[..4096], &[0u8; 4096][..]);
    let want: Vec<u8> = data.iter().enumerate().map(|(i, x)| x ^ i as u8).collect();
    assert!(out[4096..] == want[..]);
    Ok(())
}

#[test]
fn a_stream_is_read_in_whole_units_and_one_that_ends_inside_a_unit_is_refused() -> Result {
    let dir = tempfile::tempdir()?;
    let (a, b) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&a, painted(1000))?;
    let (input, output) = (File::open(&a)?, File::create(&b)?);
    let e = Pipeline::new(512)
        .run(
            Source {
                file: &input,
                path: &a,
                offset: 0,
                len: None,
            },
            Sink {
                file: &output,
                path: &b,
                offset: 0,
                seekable: false,
            },
            |_: &mut [u8], _: u64| Ok::<(), std::io::Error>(()),
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::PartialUnit {
                offset: 512,
                left: 488,
                unit: 512,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "{}: at byte offset 512: 488 trailing bytes are not a whole sector: the data must be \
             a whole number of 512-byte sectors",
            a.display()
        )
    );
    Ok(())
}

#[test]
fn a_sized_input_that_ends_early_is_refused_naming_where_it_ended() -> Result {
    let dir = tempfile::tempdir()?;
    let (a, b) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&a, painted(4096))?;
    let (input, output) = (File::open(&a)?, File::create(&b)?);
    let e = Pipeline::new(512)
        .run(
            Source {
                file: &input,
                path: &a,
                offset: 1024,
                len: Some(8192),
            },
            Sink {
                file: &output,
                path: &b,
                offset: 0,
                seekable: true,
            },
            |_: &mut [u8], _: u64| Ok::<(), std::io::Error>(()),
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::EndedEarly {
                offset: 4096,
                end: 9216,
                ..
            }
        ),
        "{e}"
    );
    Ok(())
}

#[test]
fn a_transform_error_stops_the_pipeline_and_names_the_input() -> Result {
    let dir = tempfile::tempdir()?;
    let (a, b) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&a, painted(5 << 20))?;
    let (input, output) = (File::open(&a)?, File::create(&b)?);
    let mut calls = 0;
    let e = Pipeline::new(4096)
        .run(
            Source {
                file: &input,
                path: &a,
                offset: 0,
                len: Some(5 << 20),
            },
            Sink {
                file: &output,
                path: &b,
                offset: 0,
                seekable: true,
            },
            |_: &mut [u8], at: u64| {
                calls += 1;
                if at > 0 { Err("refused") } else { Ok(()) }
            },
        )
        .unwrap_err();
    assert_eq!(calls, 2);
    assert!(matches!(e, Error::Transform { .. }));
    assert_eq!(e.to_string(), format!("{}: refused", a.display()));
    Ok(())
}
