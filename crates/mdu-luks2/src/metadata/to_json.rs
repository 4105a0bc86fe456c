//! The JSON area written back, in the order and form cryptsetup writes it.

use super::*;

impl Metadata {
    /// The JSON text as cryptsetup 2.6 writes it: compact, keys in its
    /// order, 64-bit numbers as strings, standard padded base64.
    ///
    /// ```
    /// # let text = include_str!("../../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert_eq!(m.to_json(), text.trim_end());
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn to_json(&self) -> String {
        let b64 = |b: &[u8]| mdu_base64::STANDARD.encode_to_string(b);
        let q = |s: &str| Value::String(s.to_owned()).to_string();
        let mut j = String::with_capacity(2048);
        j.push_str("{\"keyslots\":{");
        let reencrypt = self.reencrypt.as_ref().map(|r| (r.id, r));
        let mut first = true;
        let reencrypt_slot = |j: &mut String, r: &ReencryptKeyslot| {
            let a = &r.area;
            let _ = write!(
                j,
                "\"{}\":{{\"area\":{{\"offset\":\"{}\",\"size\":\"{}\",\"type\":\"{}\"",
                r.id,
                a.offset,
                a.size,
                a.resilience.name()
            );
            match a.resilience {
                Resilience::Checksum { hash, sector_size }
                | Resilience::DatashiftChecksum {
                    hash, sector_size, ..
                } => {
                    let _ = write!(j, ",\"hash\":\"{hash}\",\"sector_size\":{sector_size}");
                }
                _ => {}
            }
            if let Some(shift) = a.resilience.shift() {
                let _ = write!(j, ",\"shift_size\":\"{shift}\"");
            }
            let _ = write!(
                j,
                "}},\"type\":\"reencrypt\",\"key_size\":1,\"mode\":\"{}\",\"direction\":\"{}\"",
                r.mode.name(),
                r.direction.name()
            );
            if let Some(p) = r.priority {
                let _ = write!(j, ",\"priority\":{p}");
            }
            j.push('}');
        };
        let ids: std::collections::BTreeSet<u32> = self
            .keyslots
            .keys()
            .chain(self.unusable_keyslots.keys())
            .copied()
            .chain(reencrypt.map(|(id, _)| id))
            .collect();
        for id in ids {
            if !first {
                j.push(',');
            }
            first = false;
            if let Some((_, r)) = reencrypt.filter(|&(rid, _)| rid == id) {
                reencrypt_slot(&mut j, r);
                continue;
            }
            if let Some(u) = self.unusable_keyslots.get(&id) {
                let _ = write!(j, "\"{id}\":{}", Value::Object(u.json.clone()));
                continue;
            }
            let Some(k) = self.keyslots.get(&id) else {
                continue;
            };
            let _ = write!(
                j,
                "\"{id}\":{{\"type\":\"luks2\",\"key_size\":{},\"af\":{{\"type\":\"luks1\",\"stripes\":{},\"hash\":\"{}\"}},\"area\":{{\"type\":\"raw\",\"offset\":\"{}\",\"size\":\"{}\",\"encryption\":{},\"key_size\":{}}},\"kdf\":",
                k.key_size,
                k.af_stripes,
                k.af_hash,
                k.area.offset,
                k.area.size,
                q(k.area.encryption.as_str()),
                k.area.key_size
            );
            match &k.kdf {
                Kdf::Pbkdf2 {
                    hash,
                    iterations,
                    salt,
                } => {
                    let _ = write!(
                        j,
                        "{{\"type\":\"pbkdf2\",\"hash\":\"{hash}\",\"iterations\":{iterations},\"salt\":\"{}\"}}",
                        b64(salt)
                    );
                }
                Kdf::Argon2 {
                    variant,
                    time,
                    memory,
                    cpus,
                    salt,
                } => {
                    let _ = write!(
                        j,
                        "{{\"type\":\"{}\",\"time\":{time},\"memory\":{memory},\"cpus\":{cpus},\"salt\":\"{}\"}}",
                        variant.name(),
                        b64(salt)
                    );
                }
            }
            if let Some(p) = k.priority {
                let _ = write!(j, ",\"priority\":{p}");
            }
            j.push('}');
        }
        j.push_str("},\"tokens\":");
        j.push_str(&Value::Object(self.tokens.clone()).to_string());
        j.push_str(",\"segments\":{");
        for (n, (id, s)) in self.segments.iter().enumerate() {
            if n > 0 {
                j.push(',');
            }
            let size = s
                .size
                .map_or_else(|| "dynamic".to_owned(), |n| n.to_string());
            match s.kind {
                SegmentKind::Crypt => {
                    let _ = write!(
                        j,
                        "\"{id}\":{{\"type\":\"crypt\",\"offset\":\"{}\",\"size\":\"{size}\",\"iv_tweak\":\"{}\",\"encryption\":{},\"sector_size\":{}",
                        s.offset,
                        s.iv_tweak,
                        q(s.encryption.as_str()),
                        s.sector_size
                    );
                }
                SegmentKind::Linear | SegmentKind::Other(_) => {
                    let _ = write!(
                        j,
                        "\"{id}\":{{\"type\":{},\"offset\":\"{}\",\"size\":\"{size}\"",
                        q(s.kind.name()),
                        s.offset
                    );
                }
            }
            for (k, v) in &s.extra {
                let _ = write!(j, ",{}:{v}", q(k));
            }
            if !s.flags.is_empty() {
                let flags: Vec<String> = s.flags.iter().map(|f| q(f)).collect();
                let _ = write!(j, ",\"flags\":[{}]", flags.join(","));
            }
            j.push('}');
        }
        j.push_str("},\"digests\":{");
        let ids = |v: &[u32]| {
            v.iter()
                .map(|i| format!("\"{i}\""))
                .collect::<Vec<_>>()
                .join(",")
        };
        let digest_ids: std::collections::BTreeSet<u32> = self
            .digests
            .keys()
            .chain(self.unusable_digests.keys())
            .copied()
            .collect();
        for (n, id) in digest_ids.into_iter().enumerate() {
            if n > 0 {
                j.push(',');
            }
            if let Some(u) = self.unusable_digests.get(&id) {
                let _ = write!(j, "\"{id}\":{}", Value::Object(u.json.clone()));
                continue;
            }
            let Some(d) = self.digests.get(&id) else {
                continue;
            };
            let _ = write!(
                j,
                "\"{id}\":{{\"type\":\"pbkdf2\",\"keyslots\":[{}],\"segments\":[{}],\"hash\":\"{}\",\"iterations\":{},\"salt\":\"{}\",\"digest\":\"{}\"}}",
                ids(&d.keyslots),
                ids(&d.segments),
                d.hash,
                d.iterations,
                b64(&d.salt),
                b64(&d.digest)
            );
        }
        let _ = write!(
            j,
            "}},\"config\":{{\"json_size\":\"{}\",\"keyslots_size\":\"{}\"",
            self.config.json_size, self.config.keyslots_size
        );
        if !self.config.flags.is_empty() {
            let flags: Vec<String> = self.config.flags.iter().map(|f| q(f)).collect();
            let _ = write!(j, ",\"flags\":[{}]", flags.join(","));
        }
        if let Some(r) = &self.config.requirements {
            let r: Vec<String> = r.iter().map(|f| q(f)).collect();
            let _ = write!(j, ",\"requirements\":{{\"mandatory\":[{}]}}", r.join(","));
        }
        j.push_str("}}");
        j
    }
}
