//! The one output layer is `mdu_io::output` (every file or device a
//! command writes is opened there); what it does, for `--help`.

pub(crate) use mdu_io::output::*;

/// What every command that writes an output does with it, for `--help`.
pub(crate) const HELP: &str = "\
Outputs:
  A regular file (new or existing) is replaced atomically: the new contents
  are written to a temporary file in the same directory that has no name
  until it is complete, synced, then given the output's name (renamed over
  an existing output) and the directory synced. A failed or interrupted run
  (Ctrl-C, SIGTERM, SIGKILL) leaves the output as it was and nothing next
  to it; only a SIGKILL in the instant between naming the temporary file
  and renaming it over an existing output (at any time, on a file system
  without unnamed files) leaves a .mdu-XXXXXXXXXXXX file, which the next
  output written in that directory removes. An existing file keeps
  its mode (and owner, for root); one you may not write is refused. Other
  hard links of a replaced file keep the old contents.
  A symbolic link is followed and its target written; a link to nothing is
  refused.
  A block device is written in place, after a check that it is large enough
  and not mounted, and synced at the end: not atomic.
  A character device or FIFO (/dev/null, a pipe) is written in place as a
  stream: not atomic.
  /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are written as a
  stream through that descriptor, whatever it is open on (a pipe, a file the
  shell redirected it to, from where it stands: `>>` appends): not atomic.
  An output that is an input of the command under another name (a hard or
  symbolic link, another node of the same device, a loop device over it, a
  partition overlapping it) is refused before anything is written.";
