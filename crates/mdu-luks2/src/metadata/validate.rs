//! The metadata checked as a whole: areas inside the keyslots area, ids bound to what exists, segments that fit the image.

use super::*;

impl Metadata {
    /// Checks every size, offset and reference: `json_size` matches
    /// `hdr_size`; the keyslots area is a multiple of 4096, at most
    /// [`MAX_KEYSLOTS_SIZE`]; each keyslot area lies inside it (and inside
    /// an image of `image_len` bytes when given), is 512-byte aligned, holds
    /// the AF material, and overlaps no other; key sizes and KDF parameters
    /// are in range, keyslot ids below [`MAX_KEYSLOTS`]; segments have a
    /// valid sector size, an offset that is a multiple of it and lies past
    /// the keyslots area (or is 0, a detached header); digests name
    /// existing keyslots and segments.
    ///
    /// ```
    /// # let text = include_str!("../../tests/data/pbkdf2.json");
    /// let mut m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// m.segments.get_mut(&0).unwrap().offset = 1000;
    /// assert!(m.validate(16384, None).is_err());
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn validate(&self, hdr_size: u64, image_len: Option<u64>) -> Result<(), Error> {
        let json_size = hdr_size - BINARY_HEADER_LEN as u64;
        if self.config.json_size != json_size {
            return Err(Error::layout(
                "config.json_size",
                format!(
                    "{} does not match the header size {hdr_size} (expected {json_size})",
                    self.config.json_size
                ),
            ));
        }
        let ks = self.config.keyslots_size;
        if !ks.is_multiple_of(4096) || ks > MAX_KEYSLOTS_SIZE {
            return Err(Error::layout(
                "config.keyslots_size",
                format!("{ks} must be a multiple of 4096 and at most {MAX_KEYSLOTS_SIZE}"),
            ));
        }
        let (area_start, area_end) = self.keyslots_area(hdr_size);
        // Every keyslot's area, of whatever type: inside the keyslots area,
        // not empty, overlapping no other (cryptsetup's rule on areas).
        let mut spans: Vec<(u64, u64, u32)> = Vec::new();
        let areas = self
            .keyslots
            .iter()
            .map(|(&id, k)| (id, (k.area.offset, k.area.size)))
            .chain(self.unusable_keyslots.iter().map(|(&id, k)| (id, k.area())));
        for (id, (offset, size)) in areas {
            let field = format!("keyslots.{id}.area");
            if size == 0 {
                return Err(Error::layout(field, "an area of 0 bytes"));
            }
            let end = inside_keyslots_area(
                field,
                offset,
                offset.checked_add(size),
                size,
                (area_start, area_end),
            )?;
            if let Some(&(_, _, other)) = spans.iter().find(|&&(s, e, _)| offset < e && s < end) {
                return Err(Error::KeyslotAreasOverlap {
                    first: other,
                    second: id,
                });
            }
            spans.push((offset, end, id));
        }
        for (&id, k) in &self.keyslots {
            keyslot_problem(id, k)?;
            let material = u64::from(k.key_size) * u64::from(AF_STRIPES);
            let need = material.div_ceil(512) * 512;
            if let Some(len) = image_len
                && k.area.offset + need > len
            {
                return Err(Error::Truncated {
                    what: "keyslot area",
                    offset: k.area.offset,
                    len: need,
                    image_len: len,
                });
            }
        }
        if let Some(r) = &self.reencrypt {
            let p = |f: &str| format!("keyslots.{}.{f}", r.id);
            if r.id >= MAX_KEYSLOTS {
                return Err(Error::layout(
                    format!("keyslots.{}", r.id),
                    format!("keyslot ids run from 0 to {}", MAX_KEYSLOTS - 1),
                ));
            }
            let a = &r.area;
            let end = a.offset.checked_add(a.size);
            if !a.offset.is_multiple_of(512) || a.size == 0 || !a.size.is_multiple_of(512) {
                return Err(Error::layout(
                    p("area"),
                    format!(
                        "{} bytes at offset {}: both must be non-zero multiples of 512",
                        a.size, a.offset
                    ),
                ));
            }
            let end =
                inside_keyslots_area(p("area"), a.offset, end, a.size, (area_start, area_end))?;
            if let Some(len) = image_len
                && end > len
            {
                return Err(Error::Truncated {
                    what: "reencrypt keyslot area",
                    offset: a.offset,
                    len: a.size,
                    image_len: len,
                });
            }
            if let Some(&(_, _, other)) = spans.iter().find(|&&(s, e, _)| a.offset < e && s < end) {
                return Err(Error::KeyslotAreasOverlap {
                    first: other,
                    second: r.id,
                });
            }
            match a.resilience {
                Resilience::Checksum { sector_size, .. }
                | Resilience::DatashiftChecksum { sector_size, .. }
                    if !sector_size.is_power_of_two() || !(512..=65536).contains(&sector_size) =>
                {
                    return Err(Error::layout(
                        p("area.sector_size"),
                        format!("{sector_size} is not a power of two in 512..=65536"),
                    ));
                }
                _ => {}
            }
            if let Some(shift) = a.resilience.shift()
                && (shift == 0 || !shift.is_multiple_of(512))
            {
                return Err(Error::layout(
                    p("area.shift_size"),
                    format!("{shift} is not a non-zero multiple of 512"),
                ));
            }
        }
        // cryptsetup's rules on the reencryption requirement: at most one
        // flag of its form (`online-reencrypt`, `online-reencrypt-v<N>`);
        // one it knows (v1, v2, v3) needs the reencrypt keyslot; that
        // keyslot needs a flag of the form.
        let reqs = || self.config.requirements.iter().flatten();
        let candidates = reqs().filter(|r| reencrypt_candidate(r)).count();
        let known = reqs().any(|r| {
            matches!(
                r.as_str(),
                "online-reencrypt" | "online-reencrypt-v2" | "online-reencrypt-v3"
            )
        });
        if candidates > 1 {
            return Err(Error::layout(
                "config.requirements",
                format!("{candidates} online-reencrypt requirements; a header has at most one"),
            ));
        }
        match &self.reencrypt {
            None if known => {
                return Err(Error::layout(
                    "config.requirements",
                    "an online-reencrypt requirement without a reencrypt keyslot",
                ));
            }
            Some(r) if candidates == 0 => {
                return Err(Error::layout(
                    "config.requirements",
                    format!(
                        "keyslot {} records a reencryption but no online-reencrypt requirement is set",
                        r.id
                    ),
                ));
            }
            _ => {}
        }
        // The data start: the lowest offset of any segment. It lies past
        // the keyslots area, or is 0 (a detached header, whose segments
        // address the data device).
        if let Some((&id, s)) = self.segments.iter().min_by_key(|(_, s)| s.offset)
            && s.offset != 0
            && s.offset < area_end
        {
            return Err(Error::layout(
                format!("segments.{id}.offset"),
                format!(
                    "{} lies inside the header or keyslots area (which ends at {area_end})",
                    s.offset
                ),
            ));
        }
        for (id, keyslots, segments) in self.digest_lists() {
            for &k in keyslots {
                if !self.has_keyslot(k) {
                    return Err(Error::DanglingReference {
                        digest: id,
                        kind: "keyslot",
                        id: k,
                    });
                }
            }
            for &s in segments {
                if !self.segments.contains_key(&s) {
                    return Err(Error::DanglingReference {
                        digest: id,
                        kind: "segment",
                        id: s,
                    });
                }
            }
        }
        for (&id, d) in &self.digests {
            digest_problem(id, d)?;
        }
        self.validate_tokens()?;
        self.validate_bindings()?;
        self.validate_segments()
    }

    /// Every digest's id, keyslots and segments, those this crate cannot
    /// use included, by id.
    pub(super) fn digest_lists(&self) -> impl Iterator<Item = (u32, &[u32], &[u32])> {
        let mut all: Vec<(u32, &[u32], &[u32])> = self
            .digests
            .iter()
            .map(|(&id, d)| (id, &d.keyslots[..], &d.segments[..]))
            .chain(
                self.unusable_digests
                    .iter()
                    .map(|(&id, d)| (id, &d.keyslots[..], &d.segments[..])),
            )
            .collect();
        all.sort_unstable_by_key(|&(id, _, _)| id);
        all.into_iter()
    }

    /// Whether a keyslot of any type has id `id`.
    pub(super) fn has_keyslot(&self, id: u32) -> bool {
        self.keyslots.contains_key(&id)
            || self.unusable_keyslots.contains_key(&id)
            || self.reencrypt.as_ref().is_some_and(|r| r.id == id)
    }

    /// cryptsetup's rules on segments as a whole: the segment fields were
    /// checked when read ([`parse_segment`](super::parse::parse_segment));
    /// here each one a digest must vouch for is bound, and the regular
    /// segments (before the backups) overlap none of the others, only the
    /// last of them is `dynamic`, and none of them ends past 2^64.
    fn validate_segments(&self) -> Result<(), Error> {
        if self.segments.is_empty() {
            return Err(Error::schema("segments", "at least one segment"));
        }
        let regular: Vec<(u32, &Segment)> = self
            .segments
            .iter()
            .filter(|(_, s)| !s.is_backup())
            .map(|(&id, s)| (id, s))
            .collect();
        for (n, &(id, s)) in regular.iter().enumerate() {
            if s.size.is_none() && n + 1 != regular.len() {
                return Err(Error::layout(
                    format!("segments.{id}.size"),
                    "dynamic, but only the last regular segment may be",
                ));
            }
            for &(other, t) in &regular {
                if other == id {
                    continue;
                }
                let t_end = match t.size {
                    None => None,
                    Some(n) => Some(t.offset.checked_add(n).ok_or_else(|| {
                        Error::layout(
                            format!("segments.{other}.size"),
                            format!("{} bytes at offset {} end past 2^64", n, t.offset),
                        )
                    })?),
                };
                if s.offset >= t.offset && t_end.is_none_or(|e| s.offset < e) {
                    return Err(Error::layout(
                        format!("segments.{id}.offset"),
                        format!("{} lies inside segment {other}", s.offset),
                    ));
                }
            }
        }
        Ok(())
    }

    /// cryptsetup's rules on tokens: each has a non-empty `type` and a
    /// `keyslots` array naming keyslots that exist.
    fn validate_tokens(&self) -> Result<(), Error> {
        for (key, token) in &self.tokens {
            let path = format!("tokens.{key}");
            if !key.bytes().all(|b| b.is_ascii_digit()) {
                return Err(Error::schema(path, "a token id of decimal digits"));
            }
            let o = parse::obj(token, &path)?;
            parse::nonempty(o, &path, "type")?;
            let field = format!("{path}.keyslots");
            let list = parse::get(o, &path, "keyslots")?
                .as_array()
                .ok_or_else(|| Error::schema(field.clone(), "an array of keyslot ids"))?;
            for k in list {
                let k = k.as_str().ok_or_else(|| {
                    Error::schema(field.clone(), "an array of keyslot id strings")
                })?;
                if !parse::parse_id(k).is_some_and(|id| self.has_keyslot(id)) {
                    return Err(Error::layout(
                        field.clone(),
                        format!("names keyslot {k}, which does not exist"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// cryptsetup's rules binding keyslots, digests and segments: every
    /// keyslot is listed by exactly one digest; every segment is bound to a
    /// digest; the regular segments are 0, 1, ... without a gap and the
    /// backup (`backup-*`) segments come after them; there is a regular
    /// segment if there is any.
    pub(super) fn validate_bindings(&self) -> Result<(), Error> {
        // Every keyslot of type luks2 (those this crate cannot open too)
        // and the reencrypt keyslot; a keyslot of another type is not
        // looked into, as cryptsetup has no handler for it.
        let luks2_unusable = self
            .unusable_keyslots
            .iter()
            .filter(|(_, k)| k.type_name() == "luks2")
            .map(|(&id, _)| id);
        for id in self
            .keyslots
            .keys()
            .copied()
            .chain(luks2_unusable)
            .chain(self.reencrypt.as_ref().map(|r| r.id))
        {
            let digests: Vec<u32> = self
                .digest_lists()
                .filter(|(_, keyslots, _)| keyslots.contains(&id))
                .map(|(d, _, _)| d)
                .collect();
            if digests.len() != 1 {
                return Err(Error::layout(
                    format!("keyslots.{id}"),
                    format!(
                        "keyslot {id} is listed by {} digests {digests:?}; cryptsetup requires exactly one",
                        digests.len()
                    ),
                ));
            }
        }
        for (&id, s) in &self.segments {
            if s.is_crypt() && !self.digest_lists().any(|(_, _, segs)| segs.contains(&id)) {
                return Err(Error::layout(
                    format!("segments.{id}"),
                    format!(
                        "segment {id} is bound to no digest; cryptsetup requires every crypt segment to have its volume-key digest"
                    ),
                ));
            }
        }
        let first_backup = self
            .segments
            .iter()
            .find(|(_, s)| s.is_backup())
            .map(|(&id, _)| id);
        let regular: Vec<u32> = self
            .segments
            .iter()
            .filter(|(_, s)| !s.is_backup())
            .map(|(&id, _)| id)
            .collect();
        if first_backup == Some(0) {
            return Err(Error::layout(
                "segments",
                "no regular segment: segment 0 is flagged backup-*; cryptsetup requires the data segments first, backups after them",
            ));
        }
        if let (Some(b), Some(&last)) = (first_backup, regular.last())
            && last > b
        {
            return Err(Error::layout(
                "segments",
                format!(
                    "regular segment {last} comes after backup segment {b}; cryptsetup requires the backups last"
                ),
            ));
        }
        if let Some((want, &found)) = regular
            .iter()
            .enumerate()
            .find(|&(i, &id)| i as u64 != u64::from(id))
        {
            return Err(Error::layout(
                "segments",
                format!(
                    "no segment {want} before segment {found}; cryptsetup requires the regular segments numbered from 0 without a gap"
                ),
            ));
        }
        Ok(())
    }
}

/// Whether `flag` has the form of a reencryption requirement:
/// `online-reencrypt` or `online-reencrypt-v` and digits.
fn reencrypt_candidate(flag: &str) -> bool {
    flag == "online-reencrypt"
        || flag
            .strip_prefix("online-reencrypt-v")
            .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
}

/// What makes a `pbkdf2` digest one this crate cannot check a key with
/// though cryptsetup loads it: 0 iterations, or a digest shorter than
/// LUKS1's 20 bytes (which a wrong key could match by chance) or longer
/// than the longest hash.
pub(super) fn digest_problem(id: u32, d: &Digest) -> Result<(), Error> {
    if d.iterations == 0 {
        return Err(Error::layout(
            format!("digests.{id}.iterations"),
            "must be at least 1",
        ));
    }
    if !(MIN_DIGEST_BYTES..=64).contains(&d.digest.len()) {
        return Err(Error::layout(
            format!("digests.{id}.digest"),
            format!(
                "{} bytes; a volume-key digest must be {MIN_DIGEST_BYTES}..=64 bytes",
                d.digest.len()
            ),
        ));
    }
    Ok(())
}

/// What makes a `luks2` keyslot one this crate cannot open though
/// cryptsetup loads it: an id of 32 or more, a key size out of 1..=512
/// bytes, an area not 512-byte aligned or too small for its AF material,
/// KDF parameters out of range. A header read with such a keyslot keeps it
/// as an [`UnusableKeyslot`]; metadata built with one are refused.
pub(super) fn keyslot_problem(id: u32, k: &Keyslot) -> Result<(), Error> {
    let p = |f: &str| format!("keyslots.{id}.{f}");
    if id >= MAX_KEYSLOTS {
        return Err(Error::layout(
            format!("keyslots.{id}"),
            format!("keyslot ids run from 0 to {}", MAX_KEYSLOTS - 1),
        ));
    }
    for (field, n) in [("key_size", k.key_size), ("area.key_size", k.area.key_size)] {
        if n == 0 || n > MAX_KEY_BYTES {
            return Err(Error::layout(
                p(field),
                format!("{n} bytes; a key must be 1..={MAX_KEY_BYTES} bytes"),
            ));
        }
    }
    // The material always has AF_STRIPES stripes, as cryptsetup reads it
    // (af.stripes is not consulted).
    let material = u64::from(k.key_size) * u64::from(AF_STRIPES);
    let need = material.div_ceil(512) * 512;
    let a = &k.area;
    if !a.offset.is_multiple_of(512) {
        return Err(Error::layout(
            p("area.offset"),
            format!("{} is not a multiple of 512", a.offset),
        ));
    }
    if a.size < need {
        return Err(Error::layout(
            p("area.size"),
            format!(
                "{} bytes cannot hold {need} bytes of AF material ({AF_STRIPES} stripes of {} bytes)",
                a.size, k.key_size
            ),
        ));
    }
    match &k.kdf {
        Kdf::Pbkdf2 { iterations, .. } => {
            if *iterations == 0 {
                return Err(Error::layout(p("kdf.iterations"), "must be at least 1"));
            }
        }
        Kdf::Argon2 {
            time,
            memory,
            cpus,
            salt,
            ..
        } => {
            if *time == 0 {
                return Err(Error::layout(p("kdf.time"), "must be at least 1"));
            }
            if *cpus == 0 || *cpus > (1 << 24) - 1 {
                return Err(Error::layout(p("kdf.cpus"), "must be 1..2^24"));
            }
            if *memory > ARGON2_MAX_MEMORY_KIB || *memory < 8 * *cpus {
                return Err(Error::layout(
                    p("kdf.memory"),
                    format!(
                        "{memory} KiB; must be 8 KiB per thread up to {ARGON2_MAX_MEMORY_KIB} KiB"
                    ),
                ));
            }
            if salt.len() < 8 {
                return Err(Error::layout(
                    p("kdf.salt"),
                    "an Argon2 salt must be at least 8 bytes",
                ));
            }
        }
    }
    Ok(())
}

/// `end`, the end of an area of `size` bytes at `offset`, when the area
/// lies inside the keyslots area `[start, end)`; else the error naming
/// `field`.
fn inside_keyslots_area(
    field: String,
    offset: u64,
    end: Option<u64>,
    size: u64,
    (area_start, area_end): (u64, u64),
) -> Result<u64, Error> {
    end.filter(|&e| offset >= area_start && e <= area_end)
        .ok_or_else(|| {
            Error::layout(
                field,
                format!(
                    "{size} bytes at offset {offset} lie outside the keyslots area [{area_start}, {area_end})"
                ),
            )
        })
}
