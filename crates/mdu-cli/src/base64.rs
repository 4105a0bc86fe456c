//! `mdu base64 encode|decode` between stdin and stdout, streaming in
//! bounded memory through `mdu_base64::stream`.

use std::path::Path;

use clap::{Args, Subcommand};
use mdu_base64::stream::{self, StreamError};
use mdu_base64::{Alphabet, Engine, Padding};

use crate::error::CliError;

/// base64 subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum Base64Cmd {
    /// Encode stdin to one line of base64 on stdout (with a final newline),
    /// streaming in bounded memory.
    Encode(Base64Args),
    /// Decode base64 from stdin to stdout, streaming in bounded memory; line
    /// breaks (`\n`, `\r`) are ignored.
    ///
    /// An error (a byte outside the alphabet, a `=` before the final group
    /// of 4 symbols, a wrong length or padding, non-zero unused bits) names
    /// the byte offset in the input, line breaks counted, and exits 2; the
    /// output before the error has been written: the bytes of every group
    /// of 4 symbols before the one in error, as `base64 -d` does. A byte
    /// outside the alphabet is reported before a length or padding error.
    Decode(Base64Args),
}

/// Options of `mdu base64`.
#[derive(Args, Debug)]
pub(crate) struct Base64Args {
    /// URL-safe alphabet (`-` and `_` instead of `+` and `/`).
    #[arg(long)]
    url: bool,
    /// No `=` padding (decode: reject it).
    #[arg(long)]
    no_pad: bool,
}

fn alphabet(a: &Base64Args) -> &'static Alphabet {
    if a.url {
        &Alphabet::URL_SAFE
    } else {
        &Alphabet::STANDARD
    }
}

fn engine(a: &Base64Args) -> Engine {
    let padding = if a.no_pad {
        Padding::None
    } else {
        Padding::Required
    };
    Engine::new(alphabet(a), padding)
}

const STDIN: &str = "<stdin>";
const STDOUT: &str = "<stdout>";

pub(crate) fn run(cmd: Base64Cmd) -> Result<(), CliError> {
    let input = std::io::stdin().lock();
    let output = std::io::stdout().lock();
    let r = match cmd {
        Base64Cmd::Encode(a) => stream::encode(&engine(&a), input, output),
        Base64Cmd::Decode(a) => stream::Decoder::new(&engine(&a)).decode(input, output),
    };
    r.map_err(|e| match e {
        StreamError::Read(e) => CliError::io(Path::new(STDIN), "read", e),
        StreamError::Write(e) => CliError::io(Path::new(STDOUT), "write", e),
        StreamError::Decode { offset, error } => CliError::Input {
            path: Path::new(STDIN).to_owned(),
            offset,
            rule: error.to_string(),
        },
        e => CliError::lib(Path::new(STDIN), e),
    })
}
