//! `mdu base64 encode|decode` between stdin and stdout.

use std::io::{Read, Write};
use std::path::Path;

use clap::{Args, Subcommand};
use mdu_base64::{Alphabet, Engine, Padding};

use crate::util::CliError;

/// base64 subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum Base64Cmd {
    /// Encode stdin to one line of base64 on stdout (with a final newline).
    Encode(Base64Args),
    /// Decode base64 from stdin to stdout; line breaks are ignored, anything
    /// else outside the alphabet is an error naming its offset.
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

fn engine(a: &Base64Args) -> Engine {
    let alphabet = if a.url {
        &Alphabet::URL_SAFE
    } else {
        &Alphabet::STANDARD
    };
    let padding = if a.no_pad {
        Padding::None
    } else {
        Padding::Required
    };
    Engine::new(alphabet, padding)
}

pub(crate) fn run(cmd: Base64Cmd) -> Result<(), CliError> {
    let stdin_path = Path::new("<stdin>");
    let stdout_path = Path::new("<stdout>");
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut input)
        .map_err(|e| CliError::io(stdin_path, "read", e))?;
    let out = match cmd {
        Base64Cmd::Encode(a) => {
            let mut s = engine(&a).encode_to_string(&input).into_bytes();
            s.push(b'\n');
            s
        }
        Base64Cmd::Decode(a) => {
            // Drop line breaks, remembering where each kept byte came from.
            let mut text = Vec::with_capacity(input.len());
            let mut origin = Vec::with_capacity(input.len());
            for (i, &b) in input.iter().enumerate() {
                if b != b'\n' && b != b'\r' {
                    text.push(b);
                    origin.push(i as u64);
                }
            }
            engine(&a).decode_to_vec(&text).map_err(|e| {
                let offset = decode_error_index(&e)
                    .and_then(|i| origin.get(i).copied())
                    .unwrap_or(input.len() as u64);
                CliError::Input {
                    path: stdin_path.to_owned(),
                    offset,
                    rule: e.to_string(),
                }
            })?
        }
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&out)
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::io(stdout_path, "write", e))
}

/// The input index a decode error points at, if any.
fn decode_error_index(e: &mdu_base64::DecodeError) -> Option<usize> {
    use mdu_base64::DecodeError as D;
    match *e {
        D::InvalidByte { index, .. } | D::InvalidPadding { index } | D::NonCanonical { index } => {
            Some(index)
        }
        _ => None,
    }
}
