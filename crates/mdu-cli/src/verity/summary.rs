//! What `veritysetup format` and `dump` print, and `mdu verity dump`.

use super::*;

/// What `veritysetup format` and `dump` print about an image.
pub(super) struct Summary<'a> {
    pub(super) hash_dev: &'a Path,
    pub(super) p: &'a dmverity::Params,
    /// The algorithm as given, or as the superblock spells it.
    pub(super) hash_name: &'a str,
    pub(super) data_blocks: u64,
    pub(super) hash_blocks: u64,
    pub(super) root: Option<&'a str>,
    /// Where the tree ends on the hash device.
    pub(super) tree_end: u64,
    pub(super) fec: Option<&'a fec::VerityLayout>,
}

impl Summary<'_> {
    /// The block `veritysetup format` and `dump` print, field for field,
    /// or the same fields as one JSON object.
    pub(super) fn print(&self, json: bool) {
        if json {
            println!("{}", self.json());
        } else {
            self.print_text();
        }
    }

    /// The "Hash device size" veritysetup prints: only with the hash area
    /// at offset 0, the tree's end, and the parity after it where it
    /// shares the hash device.
    fn hash_device_size(&self) -> Option<u64> {
        let f = self.fec.filter(|f| f.fec().in_hash_device);
        let parity = f.map_or(0, |f| f.layout().parity_len());
        (self.p.hash_offset == 0).then_some(self.tree_end + parity)
    }

    /// The "FEC device size": the parity alone on a device of its own.
    fn fec_device_size(&self) -> Option<u64> {
        self.fec
            .filter(|f| !f.fec().in_hash_device && f.fec().offset == 0)
            .map(|f| f.layout().parity_len())
    }

    fn uuid(&self) -> String {
        if self.p.superblock {
            dmverity::uuid_string(&self.p.uuid)
        } else {
            String::new()
        }
    }

    fn json(&self) -> serde_json::Value {
        let p = self.p;
        serde_json::json!({
            // JSON strings are UTF-8: a name that is not is written with
            // U+FFFD in place of its bad bytes.
            "hash_device": self.hash_dev.to_string_lossy(),
            "superblock": p.superblock,
            "uuid": p.superblock.then_some(self.uuid()),
            "hash_type": p.format,
            "data_blocks": self.data_blocks,
            "data_block_size": p.data_block_size,
            "hash_blocks": self.hash_blocks,
            "hash_block_size": p.hash_block_size,
            "hash_algorithm": self.hash_name,
            "salt": args::to_hex(&p.salt),
            "root_hash": self.root,
            "hash_offset": p.hash_offset,
            "hash_start_block": p.hash_start_block(),
            "hash_device_size": self.hash_device_size(),
            "fec": self.fec.map(|f| serde_json::json!({
                "roots": f.fec().roots,
                "blocks": f.layout().parity_blocks(),
                "bytes": f.layout().parity_len(),
                "offset": f.fec().offset,
                "in_hash_device": f.fec().in_hash_device,
                "device_size": self.fec_device_size(),
            })),
        })
    }

    fn print_text(&self) {
        let p = self.p;
        // The name as its raw bytes, as veritysetup prints it.
        {
            use std::io::Write;
            use std::os::unix::ffi::OsStrExt;
            let mut out = std::io::stdout().lock();
            let _ = out
                .write_all(b"VERITY header information for ")
                .and_then(|()| out.write_all(self.hash_dev.as_os_str().as_bytes()))
                .and_then(|()| out.write_all(b"\n"));
        }
        println!("UUID:            \t{}", self.uuid());
        println!("Hash type:       \t{}", p.format);
        println!("Data blocks:     \t{}", self.data_blocks);
        println!("Data block size: \t{}", p.data_block_size);
        println!("Hash blocks:     \t{}", self.hash_blocks);
        println!("Hash block size: \t{}", p.hash_block_size);
        println!("Hash algorithm:  \t{}", self.hash_name);
        if let Some(f) = self.fec {
            println!("FEC RS roots:   \t{}", f.fec().roots);
            println!("FEC blocks:     \t{}", f.layout().parity_blocks());
        }
        let salt = if p.salt.is_empty() {
            "-".to_owned()
        } else {
            args::to_hex(&p.salt)
        };
        println!("Salt:            \t{salt}");
        if let Some(root) = self.root {
            println!("Root hash:      \t{root}");
        }
        if let Some(size) = self.hash_device_size() {
            println!("Hash device size: \t{size} [bytes]");
        }
        if let Some(size) = self.fec_device_size() {
            println!("FEC device size: \t{size} [bytes]");
        }
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
    Summary {
        hash_dev: &a.hash_dev,
        p: &p,
        hash_name: &sb.hash_name,
        data_blocks: sb.data_blocks,
        hash_blocks,
        root: None,
        tree_end: size,
        fec: fec.as_ref(),
    }
    .print(a.json);
    Ok(())
}
