//! mdu-io from outside: outputs, inputs and the pipeline (one test
//! binary, one module each).

mod output {
    //! The output layer through its public API: what each kind of path gets,
    //! what is refused and what is left behind.

    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    use mdu_io::output::{Dir, Meta, Output, Special, Target, Time};
    use mdu_io::{Error, Overlap, Stream};

    type Result = std::result::Result<(), Box<dyn std::error::Error>>;

    fn entries(dir: &std::path::Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_new_output_has_its_name_only_once_committed_and_leaves_nothing_else() -> Result {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("out");
        let mut out = Output::to(&path).open()?;
        out.file().write_all(b"contents")?;
        assert!(!path.exists());
        out.commit()?;
        assert_eq!(std::fs::read(&path)?, b"contents");
        assert_eq!(entries(dir.path()), ["out"]);
        Ok(())
    }

    #[test]
    fn an_output_dropped_before_its_commit_leaves_the_old_file_as_it_was() -> Result {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("out");
        std::fs::write(&path, b"old")?;
        let mut out = Output::to(&path).open()?;
        out.file().write_all(b"new contents")?;
        drop(out);
        assert_eq!(std::fs::read(&path)?, b"old");
        assert_eq!(entries(dir.path()), ["out"]);
        Ok(())
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_other_hard_links_keep_the_old_contents() -> Result {
        let dir = tempfile::tempdir()?;
        let (path, other) = (dir.path().join("out"), dir.path().join("other"));
        std::fs::write(&path, b"old")?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640))?;
        std::fs::hard_link(&path, &other)?;
        let mut out = Output::to(&path).private().open()?;
        out.file().write_all(b"new")?;
        out.commit()?;
        assert_eq!(std::fs::read(&path)?, b"new");
        assert_eq!(std::fs::read(&other)?, b"old");
        let mode = std::fs::metadata(&path)?.permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
        Ok(())
    }

    #[test]
    fn a_file_the_user_may_not_write_is_refused_naming_its_mode() -> Result {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            eprintln!("SKIPPED: root may write any file");
            return Ok(());
        }
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("ro");
        std::fs::write(&path, b"old")?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444))?;
        let e = Output::to(&path).open().err().unwrap();
        assert!(matches!(e, Error::NotWritable { mode: 0o444, .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("{}: cannot replace it: ", path.display())),
            "{msg}"
        );
        assert!(
            msg.ends_with(" (mode 0444); make it writable or remove it first"),
            "{msg}"
        );
        assert_eq!(std::fs::read(&path)?, b"old");
        Ok(())
    }

    #[test]
    fn a_symbolic_link_is_written_through_and_a_dangling_one_refused() -> Result {
        let dir = tempfile::tempdir()?;
        let (target, link) = (dir.path().join("target"), dir.path().join("link"));
        std::os::unix::fs::symlink(&target, &link)?;
        let e = Output::to(&link).open().err().unwrap();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: is a symbolic link to nothing: not writing through a dangling symbolic link \
             (create its target first, or remove the link)",
                link.display()
            )
        );
        std::fs::write(&target, b"old")?;
        let mut out = Output::to(&link).open()?;
        out.file().write_all(b"new")?;
        out.commit()?;
        assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink());
        assert_eq!(std::fs::read(&target)?, b"new");
        Ok(())
    }

    #[test]
    fn an_input_under_another_name_is_refused_before_anything_is_written() -> Result {
        let dir = tempfile::tempdir()?;
        let (input, alias) = (dir.path().join("in"), dir.path().join("alias"));
        std::fs::write(&input, b"data")?;
        std::fs::hard_link(&input, &alias)?;
        let e = Output::to(&alias)
            .not_same_as(&input, std::fs::metadata(&input)?)
            .open()
            .err()
            .unwrap();
        assert!(matches!(
            e,
            Error::Overlap {
                why: Overlap::SameFile,
                ..
            }
        ));
        assert_eq!(
            e.to_string(),
            format!(
                "{} and {}: they are the same file; the output would overwrite input not yet read \
             (give another output)",
                input.display(),
                alias.display()
            )
        );
        assert_eq!(entries(dir.path()), ["alias", "in"]);
        Ok(())
    }

    #[test]
    fn streams_are_written_in_place_and_refused_where_positions_are_needed() -> Result {
        let dir = tempfile::tempdir()?;
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes())?;
        // SAFETY: `c` is a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = Output::to(&fifo).seekable_only().open().err().unwrap();
        assert!(matches!(
            e,
            Error::NotSeekable {
                stream: Stream::Fifo,
                ..
            }
        ));
        assert_eq!(
            e.to_string(),
            format!(
                "{}: is a FIFO, but this output is written at positions: give a regular file or a \
             block device",
                fifo.display()
            )
        );
        let mut null = Output::to("/dev/null".as_ref()).open()?;
        assert!(!null.seekable());
        null.file().write_all(b"gone")?;
        null.commit()?;
        Ok(())
    }

    #[test]
    fn directories_are_not_outputs() -> Result {
        let dir = tempfile::tempdir()?;
        let e = Output::to(dir.path()).open().err().unwrap();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: is a directory: an output must be a file, a block or character device, or a FIFO",
                dir.path().display()
            )
        );
        assert!(matches!(
            Target::resolve(dir.path()),
            Err(Error::NotAnOutput { .. })
        ));
        Ok(())
    }

    #[test]
    fn a_tree_goes_into_a_new_or_empty_directory_and_never_over_an_entry() -> Result {
        let dir = tempfile::tempdir()?;
        let top = dir.path().join("tree");
        let out = Dir::create(&top)?;
        out.dir(b"d")?;
        out.file(b"d/f")?.write_all(b"x")?;
        assert!(out.file(b"d/f").is_err());
        assert!(out.dir(b"d").is_err());
        let e = Dir::create(&top).err().unwrap();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: exists and is not empty; nothing is overwritten",
                top.display()
            )
        );
        // An existing empty directory is taken.
        std::fs::create_dir(dir.path().join("empty"))?;
        Dir::create(&dir.path().join("empty"))?;
        Ok(())
    }

    #[test]
    fn entries_of_a_tree_get_their_modes_and_times_and_special_files_are_made_as_asked() -> Result {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let dir = tempfile::tempdir()?;
        let out = Dir::create(&dir.path().join("tree"))?;
        let t = |secs| Time { secs, nsecs: 123 };
        let meta = |mode, secs| Meta {
            mode,
            atime: t(secs),
            mtime: t(secs + 1),
        };
        out.dir(b"d")?;
        let f = out.file(b"d/f")?;
        out.finish(b"d/f", &f, &meta(0o1755, 10))?;
        out.special(b"d/fifo", Special::Fifo, &meta(0o620, -10))?;
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        if root {
            let null = Special::CharDevice { major: 1, minor: 3 };
            out.special(b"d/null", null, &meta(0o600, 20))?;
            let m = std::fs::symlink_metadata(out.path(b"d/null"))?;
            assert!(m.file_type().is_char_device());
            assert_eq!(m.rdev(), libc::makedev(1, 3));
        } else {
            eprintln!("SKIPPED: device nodes are made only as root");
        }
        out.finish_dir(b"d", &meta(0o750, 30))?;
        for (rel, mode, secs) in [
            (&b"d/f"[..], 0o1755, 10),
            (b"d/fifo", 0o620, -10),
            (b"d", 0o750, 30),
        ] {
            let m = std::fs::symlink_metadata(out.path(rel))?;
            assert_eq!(m.mode() & 0o7777, mode, "{}", String::from_utf8_lossy(rel));
            assert_eq!((m.mtime(), m.mtime_nsec()), (secs + 1, 123));
            assert_eq!((m.atime(), m.atime_nsec()), (secs, 123));
        }
        Ok(())
    }
}

mod input {
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
}

mod pipeline {
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
}
