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
