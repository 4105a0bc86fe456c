//! The terminal: a passphrase typed without echo, and cryptsetup's "Are
//! you sure?" confirmation.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};

use zeroize::Zeroizing;

use crate::error::CliError;

/// The longest passphrase typed on a terminal (cryptsetup's limit).
const MAX_TYPED: usize = 512;

/// Whether standard input is a terminal (cryptsetup asks and prompts only
/// then).
pub(crate) fn stdin_is_tty() -> bool {
    io::stdin().is_terminal()
}

/// Asks `question` on a terminal and whether the answer is `YES`, as
/// cryptsetup's confirmation: asked only when standard input is a
/// terminal and `batch` (-q) is not given; otherwise the answer is yes
/// without a question, as cryptsetup (which reads no answer from a pipe).
/// The question goes to stderr, so that it never lands in output that
/// stdout carries.
pub(crate) fn confirm(question: &str, batch: bool) -> Result<bool, CliError> {
    if batch || !stdin_is_tty() {
        return Ok(true);
    }
    let mut err = io::stderr().lock();
    let _ = write!(
        err,
        "\nWARNING!\n========\n{question}\n\nAre you sure? (Type 'yes' in capital letters): "
    );
    let _ = err.flush();
    let mut answer = String::new();
    io::stdin()
        .read_line(&mut answer)
        .map_err(|e| CliError::io(std::path::Path::new("<stdin>"), "read the answer", e))?;
    Ok(answer == "YES\n")
}

/// The descriptor whose terminal settings a signal handler restores (-1:
/// none), and the settings.
static ECHO_FD: AtomicI32 = AtomicI32::new(-1);
static SAVED: OnceLock<libc::termios> = OnceLock::new();

/// SIGINT, SIGTERM, SIGHUP or SIGQUIT while the echo is off: the echo
/// comes back before the signal does what it would have done.
extern "C" fn restore_and_raise(sig: libc::c_int) {
    let fd = ECHO_FD.load(Ordering::SeqCst);
    if let (true, Some(t)) = (fd >= 0, SAVED.get()) {
        // SAFETY: tcsetattr is async-signal-safe; `t` is a termios that
        // tcgetattr filled for this descriptor, which the prompt keeps open
        // while ECHO_FD names it.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, t) };
    }
    // SAFETY: signal and raise are async-signal-safe; SIG_DFL is a valid
    // disposition.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Shows `prompt` on the terminal and reads one line without echoing it
/// (the newline is not part of the passphrase), as cryptsetup does: on
/// `/dev/tty`, or on standard input and stderr where there is none.
pub(crate) fn read_hidden(prompt: &str) -> io::Result<Zeroizing<Vec<u8>>> {
    let (mut input, mut output): (File, File) =
        match OpenOptions::new().read(true).write(true).open("/dev/tty") {
            Ok(tty) => (tty.try_clone()?, tty),
            Err(_) => (
                File::from(io::stdin().as_fd().try_clone_to_owned()?),
                File::from(io::stderr().as_fd().try_clone_to_owned()?),
            ),
        };
    let fd = input.as_raw_fd();
    let mut t = std::mem::MaybeUninit::<libc::termios>::uninit();
    // SAFETY: `fd` is open for the life of `input`; tcgetattr writes a
    // whole termios into `t` when it returns 0, and only then is `t` read.
    let saved =
        (unsafe { libc::tcgetattr(fd, t.as_mut_ptr()) } == 0).then(|| unsafe { t.assume_init() });
    let mut handlers = Vec::new();
    if let Some(saved) = saved {
        let _ = SAVED.set(saved);
        ECHO_FD.store(fd, Ordering::SeqCst);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            // SAFETY: the handler only calls async-signal-safe functions
            // and has the signature signal() expects.
            let old =
                unsafe { libc::signal(sig, restore_and_raise as *const () as libc::sighandler_t) };
            handlers.push((sig, old));
        }
        let mut quiet = saved;
        quiet.c_lflag &= !libc::ECHO;
        // SAFETY: `quiet` is a valid termios (a copy of the one read).
        unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &quiet) };
    }
    output.write_all(prompt.as_bytes())?;
    output.flush()?;
    let read = read_line(&mut input);
    if let Some(saved) = saved {
        // SAFETY: `saved` is the termios tcgetattr read for `fd`, still open.
        unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &saved) };
        ECHO_FD.store(-1, Ordering::SeqCst);
        for (sig, old) in handlers {
            // SAFETY: `old` is the disposition signal() returned for `sig`.
            unsafe { libc::signal(sig, old) };
        }
        // The newline typed was not echoed.
        let _ = output.write_all(b"\n");
    }
    read
}

/// One line of at most [`MAX_TYPED`] bytes, without its newline, read a
/// byte at a time into a buffer allocated once and wiped when dropped.
fn read_line(input: &mut File) -> io::Result<Zeroizing<Vec<u8>>> {
    let mut buf = Zeroizing::new(vec![0u8; MAX_TYPED + 1]);
    let mut n = 0;
    loop {
        if n > MAX_TYPED {
            return Err(io::Error::other(format!(
                "a passphrase typed on a terminal holds at most {MAX_TYPED} bytes"
            )));
        }
        match input.read(&mut buf[n..=n]) {
            Ok(0) => break,
            Ok(_) if buf[n] == b'\n' => {
                buf[n] = 0;
                break;
            }
            Ok(_) => n += 1,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(n);
    Ok(buf)
}
