//! Regular-file outputs replaced atomically: unnamed temporary files,
//! their names, the signal handlers that remove them, and what killed runs
//! left behind.

use super::*;
use crate::flock::{Flock, try_flock};

/// A regular-file output being written: a temporary file in the target's
/// directory.
#[derive(Debug)]
pub(super) struct Atomic {
    pub(super) file: File,
    /// The resolved target path.
    target: PathBuf,
    /// The temporary file's name while it has one (the fallback without
    /// `O_TMPFILE`), registered for removal on a signal.
    named: Option<Registered>,
}

impl Atomic {
    pub(super) fn create(
        target: &Path,
        existing: Option<&Metadata>,
        spec: &OutputSpec<'_>,
    ) -> Result<Atomic, Error> {
        let dir = parent_dir(target);
        let mode = if spec.private { 0o600 } else { 0o666 };
        let (file, named) = match open_unnamed(dir, mode) {
            Some(f) => {
                // Nobody else can reach it yet: the lock is this process's,
                // and holds from before the file has a name (a file system
                // without locks leaves it unlocked, and then no other run
                // can take a lock there either).
                let _ = try_flock(&f, Flock::Exclusive);
                (f, None)
            }
            None => {
                let (f, reg) = open_named(dir, mode)
                    .map_err(|e| Error::io(target, "create a temporary file next to it", e))?;
                (f, Some(reg))
            }
        };
        remove_stale(dir);
        let mut a = Atomic {
            file,
            target: target.to_owned(),
            named,
        };
        if let Some(meta) = existing {
            // The new file takes the old one's owner (when root can give
            // it; a change of owner clears set-id bits, so it comes first)
            // and permissions.
            if euid() == 0 {
                let _ = std::os::unix::fs::fchown(&a.file, Some(meta.uid()), Some(meta.gid()));
            }
            let _ = a
                .file
                .set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o7777));
            if spec.keep_existing {
                let mut old =
                    File::open(target).map_err(|e| Error::io(target, "open for reading", e))?;
                io::copy(&mut old, &mut a.file)
                    .map_err(|e| Error::io(target, "copy its current contents", e))?;
                a.file
                    .seek(SeekFrom::Start(0))
                    .map_err(|e| Error::io(target, "seek", e))?;
            }
        }
        if let Some((offset, len)) = spec.reserve {
            reserve(&a.file, offset, len)
                .map_err(|e| Error::io(target, "reserve space for the output", e))?;
        }
        Ok(a)
    }

    pub(super) fn commit(mut self, shown: &Path) -> Result<(), Error> {
        sync(&self.file).map_err(|e| Error::io(shown, "flush the output", e))?;
        let dir = parent_dir(&self.target).to_owned();
        let tmp = match self.named.take() {
            Some(reg) => reg,
            // A new output: named in one step, nothing to leave behind.
            None => match link_proc(&self.file, &self.target) {
                Ok(()) => return sync_dir(&dir),
                // An existing output (or one created meanwhile): a
                // temporary name, renamed over it right away.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    link_unnamed(&self.file, &dir)
                        .map_err(|e| Error::io(shown, "give the new file a name", e))?
                }
                Err(e) => return Err(Error::io(shown, "give the new file its name", e)),
            },
        };
        let renamed = std::fs::rename(&tmp.path, &self.target);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&tmp.path);
        }
        tmp.release();
        renamed.map_err(|e| Error::io(shown, "rename the temporary file onto it", e))?;
        sync_dir(&dir)
    }
}

impl Drop for Atomic {
    fn drop(&mut self) {
        if let Some(reg) = self.named.take() {
            let _ = std::fs::remove_file(&reg.path);
            reg.release();
        }
    }
}

/// Syncs the directory `dir` after a name was given or replaced in it.
fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|d| sync(&d))
        .map_err(|e| Error::io(dir, "sync the directory after naming the output", e))
}

/// A temporary file without a name (`O_TMPFILE`) in `dir`, opened for
/// reading and writing with `mode`, that [`link_proc`] can name: `None`
/// where the file system cannot make one, or `/proc/self/fd` is missing.
/// (Atomic outputs lock theirs at once; the in-place journals of
/// `mdu-inplace` are made here too.)
///
/// ```
/// let dir = tempfile::tempdir()?;
/// if let Some(f) = mdu_io::output::open_unnamed(dir.path(), 0o600) {
///     // No name yet: the directory is empty.
///     assert_eq!(std::fs::read_dir(dir.path())?.count(), 0);
///     # drop(f);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_unnamed(dir: &Path, mode: u32) -> Option<File> {
    use std::os::fd::AsRawFd;
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .mode(mode)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
        .ok()?;
    // Naming it needs /proc/self/fd (or CAP_DAC_READ_SEARCH): check now,
    // not after the work.
    std::fs::symlink_metadata(format!("/proc/self/fd/{}", f.as_raw_fd())).ok()?;
    Some(f)
}

/// Gives the unnamed temporary file `f` the name `path`; fails with
/// `AlreadyExists` if something has that name (`linkat` never replaces).
///
/// ```
/// use std::io::Write;
/// let dir = tempfile::tempdir()?;
/// if let Some(mut f) = mdu_io::output::open_unnamed(dir.path(), 0o600) {
///     f.write_all(b"journal")?;
///     let path = dir.path().join("journal");
///     mdu_io::output::link_proc(&f, &path)?;
///     assert_eq!(std::fs::read(&path)?, b"journal");
///     // linkat never replaces a file.
///     assert!(mdu_io::output::link_proc(&f, &path).is_err());
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn link_proc(f: &File, path: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let proc = CString::new(format!("/proc/self/fd/{}", f.as_raw_fd()))?;
    let name = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: both paths are valid NUL-terminated strings; linkat does not
    // retain them.
    let r = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            proc.as_ptr(),
            libc::AT_FDCWD,
            name.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Names the unnamed temporary file `f` in `dir` (registered for removal
/// on a signal until it is renamed).
fn link_unnamed(f: &File, dir: &Path) -> io::Result<Registered> {
    for _ in 0..16 {
        let reg = Registered::new(dir.join(temp_name()?))?;
        match link_proc(f, &reg.path) {
            Ok(()) => return Ok(reg),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => reg.release(),
            Err(e) => {
                reg.release();
                return Err(e);
            }
        }
    }
    Err(io::Error::from(io::ErrorKind::AlreadyExists))
}

/// A new named temporary file in `dir`, registered for removal on a
/// signal.
fn open_named(dir: &Path, mode: u32) -> io::Result<(File, Registered)> {
    for _ in 0..16 {
        let reg = Registered::new(dir.join(temp_name()?))?;
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&reg.path)
        {
            // Locked, and still under its name: between the creation and the
            // lock another run may have found it unlocked and removed it as
            // left behind (it then held a lock of its own until it was done).
            Ok(f) => match try_flock(&f, Flock::Exclusive) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let _ = std::fs::remove_file(&reg.path);
                    reg.release();
                }
                _ if !same_inode(&f, &reg.path) => reg.release(),
                _ => return Ok((f, reg)),
            },
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => reg.release(),
            Err(e) => {
                reg.release();
                return Err(e);
            }
        }
    }
    Err(io::Error::from(io::ErrorKind::AlreadyExists))
}

/// Whether `path` (not followed) names the file open as `f`.
fn same_inode(f: &File, path: &Path) -> bool {
    match (f.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether `name` is one [`temp_name`] makes.
fn is_temp_name(name: &[u8]) -> bool {
    name.len() == 5 + 12
        && name.starts_with(b".mdu-")
        && name[5..].iter().all(u8::is_ascii_alphanumeric)
}

/// Removes from `dir` the temporary files that runs killed by SIGKILL
/// left behind. A file is removed only if its name is one [`temp_name`]
/// makes, it is a regular file with no other name, it belongs to this user
/// (any user, for root), and nobody holds a lock on it: every run holds
/// its temporary file locked (`flock`) from before it has a name until the
/// run ends, and the kernel drops the lock when the process dies, however
/// it dies. A run of a version of mdu that did not lock its temporary file
/// could lose it here while it runs; it then fails to rename it and leaves
/// its output as it was. Nothing here is an error: a file that cannot be
/// opened, locked or removed stays.
fn remove_stale(dir: &Path) {
    use std::os::fd::AsRawFd;
    let (Ok(entries), Ok(d)) = (std::fs::read_dir(dir), File::open(dir)) else {
        return;
    };
    let me = euid();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !is_temp_name(name.as_bytes()) {
            continue;
        }
        let Ok(c) = CString::new(name.as_bytes()) else {
            continue;
        };
        // Opened where it lies, never through a link, without waiting on
        // a FIFO.
        // SAFETY: `d` is an open directory and `c` a NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                d.as_raw_fd(),
                c.as_ptr(),
                libc::O_RDONLY
                    | libc::O_NOFOLLOW
                    | libc::O_NONBLOCK
                    | libc::O_NOCTTY
                    | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            continue;
        }
        // SAFETY: `fd` is a new open descriptor that nothing else owns.
        let f = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let Ok(m) = f.metadata() else { continue };
        if !m.is_file() || m.nlink() != 1 || (me != 0 && m.uid() != me) {
            continue;
        }
        // A shared lock, which a file opened read-only can take on every
        // file system (NFS too); the owner's exclusive lock refuses it.
        if try_flock(&f, Flock::Shared).is_err() {
            continue;
        }
        // Still the file opened (a killed run's file is not renamed by
        // anyone; a live run's cannot be locked).
        // SAFETY: a zeroed stat is a valid buffer for fstatat to fill; `d`
        // is an open directory and `c` a NUL-terminated name.
        let same = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            libc::fstatat(
                d.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            ) == 0
                && st.st_dev == m.dev()
                && st.st_ino == m.ino()
        };
        if same {
            // SAFETY: `d` is an open directory and `c` a NUL-terminated name.
            unsafe { libc::unlinkat(d.as_raw_fd(), c.as_ptr(), 0) };
        }
    }
}

/// `.mdu-` and 12 random letters.
fn temp_name() -> io::Result<OsString> {
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut r = [0u8; 12];
    getrandom::fill(&mut r).map_err(io::Error::other)?;
    let mut name = b".mdu-".to_vec();
    name.extend(r.iter().map(|b| LETTERS[usize::from(*b) % LETTERS.len()]));
    Ok(OsString::from_vec(name))
}

/// Paths to unlink if the process is ended by a signal: the temporary
/// files that have a name. A slot holds a leaked C string: the handler may
/// be reading it at any moment, so it is never freed (a few bytes per
/// output).
static CLEANUP: [AtomicPtr<libc::c_char>; 8] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 8];

/// A temporary path in [`CLEANUP`] for as long as this lives.
#[derive(Debug)]
struct Registered {
    path: PathBuf,
    c: *mut libc::c_char,
}

// SAFETY: `c` points to a leaked C string that is never written or freed,
// so any thread may hold and read it.
unsafe impl Send for Registered {}

impl Registered {
    fn new(path: PathBuf) -> io::Result<Registered> {
        install_handlers();
        let c = CString::new(path.as_os_str().as_bytes())?.into_raw();
        for slot in &CLEANUP {
            if slot
                .compare_exchange(std::ptr::null_mut(), c, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return Ok(Registered { path, c });
            }
        }
        Err(io::Error::other("too many temporary files at once"))
    }

    /// Takes the path off the list (the file was renamed or removed).
    fn release(self) {
        for slot in &CLEANUP {
            let _ = slot.compare_exchange(
                self.c,
                std::ptr::null_mut(),
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
        }
    }
}

/// Removes the registered temporary files, then dies of the same signal.
extern "C" fn on_signal(sig: libc::c_int) {
    for slot in &CLEANUP {
        let p = slot.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: `p` is a leaked, never-freed NUL-terminated string;
            // unlink is async-signal-safe.
            unsafe { libc::unlink(p) };
        }
    }
    // SAFETY: signal and raise are async-signal-safe; restoring the
    // default action and raising again ends the process with `sig`.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Installs [`on_signal`] for the signals that end a run from outside
/// (once per process). A signal the process was started with ignored
/// (`nohup`, a background job of a shell) stays ignored.
fn install_handlers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            // SAFETY: sigaction with a null new action only reads the
            // current one into a zeroed, valid struct; a zeroed sigaction
            // with a handler of the right type and an empty mask is valid,
            // and the handler only calls async-signal-safe functions.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
}

/// The effective user id of this process (0: root).
fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_told_apart_from_every_other_name() {
        let name = temp_name().unwrap();
        assert!(is_temp_name(name.as_bytes()), "{name:?}");
        for other in [
            &b".mdu-"[..],
            b".mdu-abcdefghijk",
            b".mdu-abcdefghijklm",
            b".mdu-abcdefghijk!",
            b"xmdu-abcdefghijkl",
        ] {
            assert!(!is_temp_name(other), "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn only_what_a_killed_run_left_behind_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = |n: &str| dir.path().join(n);
        // Left by a killed run: nobody holds it locked.
        std::fs::write(path(".mdu-leftoverAAAA"), b"x").unwrap();
        // A live run's: locked.
        let live = File::create(path(".mdu-liveBBBBBBBB")).unwrap();
        try_flock(&live, Flock::Exclusive).unwrap();
        // Another name, and a temporary name with a second link.
        std::fs::write(path(".mdu-short"), b"x").unwrap();
        std::fs::write(path(".mdu-linkedCCCCCC"), b"x").unwrap();
        std::fs::hard_link(path(".mdu-linkedCCCCCC"), path("other")).unwrap();
        std::fs::create_dir(path(".mdu-directoryDDD")).unwrap();
        remove_stale(dir.path());
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                ".mdu-directoryDDD",
                ".mdu-linkedCCCCCC",
                ".mdu-liveBBBBBBBB",
                ".mdu-short",
                "other"
            ]
        );
    }

    #[test]
    fn a_named_temporary_file_is_registered_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let (f, reg) = open_named(dir.path(), 0o600).unwrap();
        assert!(is_temp_name(reg.path.file_name().unwrap().as_bytes()));
        assert!(same_inode(&f, &reg.path));
        let held = |c: *mut libc::c_char| CLEANUP.iter().any(|s| s.load(Ordering::SeqCst) == c);
        let c = reg.c;
        assert!(held(c));
        // Locked: a run in the same directory leaves it.
        remove_stale(dir.path());
        assert!(reg.path.exists());
        reg.release();
        assert!(!held(c));
    }
}
