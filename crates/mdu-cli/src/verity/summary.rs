//! What `veritysetup format` and `dump` print, and `mdu verity dump`.

use super::*;

/// The block `veritysetup format` and `dump` print, field for field, or
/// the same fields as one JSON object.
#[allow(clippy::too_many_arguments)]
pub(super) fn print_summary(
    hash_dev: &Path,
    p: &dmverity::Params,
    hash_name: &str,
    data_blocks: u64,
    hash_blocks: u64,
    root: Option<&str>,
    hash_device_size: Option<u64>,
    fec: Option<&fec::VerityLayout>,
    json: bool,
) {
    let salt = if p.salt.is_empty() {
        "-".to_owned()
    } else {
        args::to_hex(&p.salt)
    };
    let uuid = if p.superblock {
        dmverity::uuid_string(&p.uuid)
    } else {
        String::new()
    };
    let fec_device_size = fec
        .filter(|f| !f.fec().in_hash_device && f.fec().offset == 0)
        .map(|f| f.layout().parity_len());
    if json {
        let v = serde_json::json!({
            // JSON strings are UTF-8: a name that is not is written with
            // U+FFFD in place of its bad bytes.
            "hash_device": hash_dev.to_string_lossy(),
            "superblock": p.superblock,
            "uuid": p.superblock.then_some(uuid),
            "hash_type": p.format,
            "data_blocks": data_blocks,
            "data_block_size": p.data_block_size,
            "hash_blocks": hash_blocks,
            "hash_block_size": p.hash_block_size,
            "hash_algorithm": hash_name,
            "salt": args::to_hex(&p.salt),
            "root_hash": root,
            "hash_offset": p.hash_offset,
            "hash_start_block": p.hash_start_block(),
            "hash_device_size": hash_device_size,
            "fec": fec.map(|f| serde_json::json!({
                "roots": f.fec().roots,
                "blocks": f.layout().parity_blocks(),
                "bytes": f.layout().parity_len(),
                "offset": f.fec().offset,
                "in_hash_device": f.fec().in_hash_device,
                "device_size": fec_device_size,
            })),
        });
        println!("{v}");
        return;
    }
    // The name as its raw bytes, as veritysetup prints it.
    {
        use std::io::Write;
        use std::os::unix::ffi::OsStrExt;
        let mut out = std::io::stdout().lock();
        let _ = out
            .write_all(b"VERITY header information for ")
            .and_then(|()| out.write_all(hash_dev.as_os_str().as_bytes()))
            .and_then(|()| out.write_all(b"\n"));
    }
    println!("UUID:            \t{uuid}");
    println!("Hash type:       \t{}", p.format);
    println!("Data blocks:     \t{data_blocks}");
    println!("Data block size: \t{}", p.data_block_size);
    println!("Hash blocks:     \t{hash_blocks}");
    println!("Hash block size: \t{}", p.hash_block_size);
    println!("Hash algorithm:  \t{hash_name}");
    if let Some(f) = fec {
        println!("FEC RS roots:   \t{}", f.fec().roots);
        println!("FEC blocks:     \t{}", f.layout().parity_blocks());
    }
    println!("Salt:            \t{salt}");
    if let Some(root) = root {
        println!("Root hash:      \t{root}");
    }
    if let Some(size) = hash_device_size {
        println!("Hash device size: \t{size} [bytes]");
    }
    if let Some(size) = fec_device_size {
        println!("FEC device size: \t{size} [bytes]");
    }
}

/// `mdu verity dump`.
pub(super) fn dump(a: DumpArgs) -> Result<(), CliError> {
    check_hash_offset(a.hash_offset)?;
    let mut hash = input::open_read(&a.hash_dev)?;
    let sb = read_superblock_at(&a.hash_dev, &mut hash, a.hash_offset, |e| CliError::Input {
        path: a.hash_dev.clone(),
        offset: a.hash_offset,
        rule: format!("no valid dm-verity superblock: {e}"),
    })?;
    let p = sb.params(a.hash_offset);
    let n = sb.data_blocks;
    let (hash_blocks, size) = (p
        .tree_blocks(n)
        .and_then(|b| Ok((b, p.hash_device_size(n)?))))
    .map_err(|e| CliError::lib(&a.hash_dev, e))?;
    let fec = describe_parity(&a.fec, &a.hash_dev, &p, sb.data_blocks)?;
    // The algorithm as the superblock spells it (an OpenSSL alias such as
    // `blake2b512` is printed as written, as veritysetup does).
    print_summary(
        &a.hash_dev,
        &p,
        &sb.hash_name,
        sb.data_blocks,
        hash_blocks,
        None,
        device_size(a.hash_offset, size, fec.as_ref()),
        fec.as_ref(),
        a.json,
    );
    Ok(())
}
