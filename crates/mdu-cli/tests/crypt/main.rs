//! `mdu crypt` against a per-sector reference in Python `cryptography`
//! (tests/dmcrypt_ref.py): aes-xts and aes-cbc with every IV mode, every
//! sector size, with and without --iv-large-sectors, IV offsets whose runs
//! cross 2^32 and 2^64, --offset, one and two threads; decrypt inverts
//! encrypt; bad input is refused with exit status 2 and leaves no output
//! behind.

#[path = "../common/mod.rs"]
mod common;
mod in_place;
mod reference;
mod usage;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{
    KillSweep, Rng, entries, expect_code, have_python_cryptography, have_tool, mdu, run, scratch,
};

struct Case {
    op: &'static str,
    chain: &'static str,
    mode: &'static str,
    key: PathBuf,
    ss: u64,
    iv_offset: u64,
    large: bool,
    offset: u64,
    threads: u32,
    input: PathBuf,
    want: PathBuf,
    got: PathBuf,
}

fn manifest(cases: &[Case]) -> String {
    let mut s = String::from("[\n");
    for (i, c) in cases.iter().enumerate() {
        let _ = writeln!(
            s,
            "{}{{\"op\": \"{}\", \"chain\": \"{}\", \"mode\": \"{}\", \"key\": {:?}, \
             \"sector_size\": {}, \"iv_offset\": {}, \"large\": {}, \"offset\": {}, \
             \"input\": {:?}, \"output\": {:?}}}",
            if i > 0 { "," } else { "" },
            c.op,
            c.chain,
            c.mode,
            c.key.display().to_string(),
            c.ss,
            c.iv_offset,
            c.large,
            c.offset,
            c.input.display().to_string(),
            c.want.display().to_string(),
        );
    }
    s.push(']');
    s
}
