//! Inputs: sizes decided from the file type, directories refused, maps.

use mdu_io::Error;
use mdu_io::input::{self, Input};

type Result = std::result::Result<(), Box<dyn std::error::Error>>;

#[test]
fn inputs_without_a_size_are_refused_before_they_are_opened() {
    for path in ["/dev/zero", "/dev/null"] {
        let e = input::input_size(path.as_ref()).unwrap_err();
        assert!(
            matches!(
                e,
                Error::NotSized {
                    kind: "a character device",
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "{path}: the input is a character device, which has no size to read up to: \
                 expected a regular file or a block device"
            )
        );
        assert!(input::open_data(path.as_ref(), true).is_err());
    }
}

#[test]
fn a_directory_is_no_input() -> Result {
    let dir = tempfile::tempdir()?;
    let e = input::open_read(dir.path()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: the input is a directory: expected a regular file or a block device",
            dir.path().display()
        )
    );
    Ok(())
}

#[test]
fn a_mapped_file_is_its_bytes_and_an_empty_one_is_read() -> Result {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("in");
    let data: Vec<u8> = (0..100_000).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data)?;
    let (Input::Mapped(windows), 100_000) = input::open_data(&path, true)? else {
        panic!("a regular file maps");
    };
    let mut got = Vec::new();
    for w in windows {
        got.extend_from_slice(&w?);
    }
    assert!(got == data);
    std::fs::write(&path, b"")?;
    assert!(matches!(
        input::open_data(&path, true)?,
        (Input::File(_), 0)
    ));
    Ok(())
}

#[test]
fn read_full_fills_the_buffer_across_short_reads() -> Result {
    /// A reader that gives at most 3 bytes a call.
    struct Trickle<'a>(&'a [u8]);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(3).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let mut buf = [0u8; 8];
    assert_eq!(input::read_full(&mut Trickle(b"abcdefghij"), &mut buf)?, 8);
    assert_eq!(&buf, b"abcdefgh");
    assert_eq!(input::read_full(&mut Trickle(b"xy"), &mut buf)?, 2);
    Ok(())
}
