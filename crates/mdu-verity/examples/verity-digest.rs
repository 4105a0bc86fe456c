//! Whole-process timing tool: the fs-verity digest or the dm-verity hash
//! area of a file, with the same options as `fsverity digest` and
//! `veritysetup format`.
//!
//! ```text
//! verity-digest fsverity FILE [--hash-alg=sha256|sha512] [--block-size=N] [--salt=HEX] [--threads=N]
//! verity-digest dmverity DATA HASH [--no-superblock] [--salt=HEX|-] [--format=0|1]
//!               [--data-block-size=N] [--hash-block-size=N] [--hash=ALG] [--threads=N]
//! ```
//!
//! `--threads` needs the `rayon` feature (default: all threads); with one
//! thread everything runs on the main thread.

use std::fs::{File, OpenOptions};
use std::process::ExitCode;

use mdu_verity::{Digest, HashAlg, dmverity, fsverity};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("verity-digest: {e}");
            ExitCode::FAILURE
        }
    }
}

fn salt_arg(v: &str) -> Result<Vec<u8>, String> {
    if v == "-" || v.is_empty() {
        return Ok(Vec::new());
    }
    let d = Digest::from_hex(v).map_err(|e| e.to_string())?;
    Ok(d.as_bytes().to_vec())
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut positional = Vec::new();
    let mut opts = Vec::new();
    for a in &args {
        match a.strip_prefix("--") {
            Some(o) => {
                let (k, v) = o.split_once('=').unwrap_or((o, ""));
                opts.push((k.to_owned(), v.to_owned()));
            }
            None => positional.push(a.clone()),
        }
    }
    let num = |v: &str| {
        v.parse::<u32>()
            .map_err(|e| format!("bad number {v:?}: {e}"))
    };
    let mut threads = 0usize;
    for (k, v) in &opts {
        if k == "threads" {
            threads = num(v)? as usize;
        }
    }
    #[cfg(feature = "rayon")]
    if threads > 0 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .map_err(|e| e.to_string())?;
    }
    #[cfg(not(feature = "rayon"))]
    let _ = threads;

    match positional.first().map(String::as_str) {
        Some("fsverity") => {
            let path = positional.get(1).ok_or("missing FILE")?;
            let mut p = fsverity::Params::default();
            for (k, v) in &opts {
                match k.as_str() {
                    "hash-alg" => p.hash = HashAlg::from_name(v).map_err(|e| e.to_string())?,
                    "block-size" => p.block_size = num(v)?,
                    "salt" => p.salt = salt_arg(v)?,
                    "threads" => {}
                    _ => return Err(format!("unknown option --{k}")),
                }
            }
            let f = File::open(path).map_err(|e| format!("{path}: {e}"))?;
            let d = fsverity::digest(f, &p).map_err(|e| e.to_string())?;
            println!("{d} {path}");
        }
        Some("dmverity") => {
            let (data, hash) = match (positional.get(1), positional.get(2)) {
                (Some(d), Some(h)) => (d, h),
                _ => return Err("usage: dmverity DATA HASH".into()),
            };
            let mut p = dmverity::Params::default();
            for (k, v) in &opts {
                match k.as_str() {
                    "hash" => p.hash = HashAlg::from_name(v).map_err(|e| e.to_string())?,
                    "data-block-size" => p.data_block_size = num(v)?,
                    "hash-block-size" => p.hash_block_size = num(v)?,
                    "salt" => p.salt = salt_arg(v)?,
                    "format" => p.format = num(v)?,
                    "no-superblock" => p.superblock = false,
                    "threads" => {}
                    _ => return Err(format!("unknown option --{k}")),
                }
            }
            let d = File::open(data).map_err(|e| format!("{data}: {e}"))?;
            let h = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(hash)
                .map_err(|e| format!("{hash}: {e}"))?;
            let out = dmverity::format(d, h, &p).map_err(|e| e.to_string())?;
            println!("Root hash: {}", out.root_hash());
        }
        _ => {
            return Err("usage: verity-digest fsverity FILE | dmverity DATA HASH [options]".into());
        }
    }
    Ok(())
}
