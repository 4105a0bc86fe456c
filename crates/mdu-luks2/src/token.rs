//! Tokens: imported, exported, removed, assigned and unassigned as
//! `cryptsetup token` does, each change written by [`Image::commit`]
//! (both copies, the next sequence id, crash-safe).
//!
//! A token is a JSON object that an unlocker (systemd's TPM2 and FIDO2
//! enrolment, clevis, the kernel keyring) reads; LUKS2 only requires a
//! non-empty string `type` and a `keyslots` array naming existing keyslots
//! as strings (`["0"]`). cryptsetup refuses, and so does this module:
//! JSON that is not an object, a missing or empty `type`, a `keyslots`
//! entry that is not a string naming a keyslot (`0`, `"00"`, `"7"` with no
//! keyslot 7), a type of cryptsetup's own `luks2-` namespace it has no
//! handler for, a `luks2-keyring` token that is not exactly `type`,
//! `keyslots` and a non-empty `key_description`, a token id of 32 or more,
//! and a token that makes the metadata too big for the JSON area. One
//! difference: cryptsetup's JSON parser (json-c) also takes text after the
//! object, trailing commas and single quotes; mdu refuses them.
//!
//! Tokens keep their fields in the order written, so an export prints
//! the object byte for byte as `cryptsetup token export` does.

use serde_json::{Map, Value};

use crate::{Error, Image, MAX_KEYSLOTS, Metadata};

/// Token ids run below this (cryptsetup's `LUKS2_TOKENS_MAX`).
///
/// ```
/// assert_eq!(mdu_luks2::token::MAX_TOKENS, 32);
/// ```
pub const MAX_TOKENS: u32 = 32;

/// The builtin token type cryptsetup's `token add` writes.
const KEYRING: &str = "luks2-keyring";

fn bad(problem: impl Into<String>) -> Error {
    Error::Params {
        problem: problem.into(),
    }
}

/// Checks a token id against [`MAX_TOKENS`].
fn check_id(id: u32) -> Result<(), Error> {
    if id >= MAX_TOKENS {
        return Err(bad(format!(
            "token {id} is invalid: token ids run from 0 to {}",
            MAX_TOKENS - 1
        )));
    }
    Ok(())
}

/// Checks that keyslot `slot` exists (cryptsetup: "Keyslot N is not
/// active").
fn check_keyslot(m: &Metadata, slot: u32) -> Result<(), Error> {
    if slot >= MAX_KEYSLOTS || !m.keyslots.contains_key(&slot) {
        return Err(Error::NoSuchKeyslot { slot });
    }
    Ok(())
}

/// Checks `token` (to be stored as token `id`) as cryptsetup's
/// `LUKS2_token_validate` and its builtin handlers do: an object with a
/// non-empty string `type` and a `keyslots` array of strings, each the id
/// of a keyslot of `m`; no `luks2-` type but `luks2-keyring`, which has
/// exactly `type`, `keyslots` and a non-empty string `key_description`.
///
/// ```
/// # use mdu_luks2::*;
/// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
/// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// use mdu_luks2::token::validate;
/// use serde_json::json;
/// let m = Image::load(&image[..])?.metadata;
/// assert!(validate(&m, 0, &json!({"type": "systemd-tpm2", "keyslots": ["0"]})).is_ok());
/// assert!(validate(&m, 0, &json!({"type": "systemd-tpm2", "keyslots": [0]})).is_err());
/// assert!(validate(&m, 0, &json!({"type": "systemd-tpm2", "keyslots": ["1"]})).is_err());
/// assert!(validate(&m, 0, &json!({"keyslots": []})).is_err());
/// # Ok::<(), Error>(())
/// ```
pub fn validate(m: &Metadata, id: u32, token: &Value) -> Result<(), Error> {
    let path = format!("tokens.{id}");
    let o = token
        .as_object()
        .ok_or_else(|| Error::schema(path.clone(), "a JSON object"))?;
    let ty = match o.get("type") {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        _ => return Err(Error::schema(format!("{path}.type"), "a non-empty string")),
    };
    let slots = o
        .get("keyslots")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::schema(format!("{path}.keyslots"), "an array"))?;
    for (i, s) in slots.iter().enumerate() {
        let field = format!("{path}.keyslots[{i}]");
        let s = s
            .as_str()
            .ok_or_else(|| Error::schema(field.clone(), "a keyslot id as a string"))?;
        let named = s
            .parse::<u32>()
            .ok()
            .filter(|n| n.to_string() == s && m.keyslots.contains_key(n));
        if named.is_none() {
            return Err(Error::layout(
                field,
                format!("names keyslot {s:?}, which does not exist"),
            ));
        }
    }
    if ty == KEYRING {
        let described = matches!(o.get("key_description"), Some(Value::String(d)) if !d.is_empty());
        if o.len() != 3 || !described {
            return Err(Error::schema(
                path,
                "a luks2-keyring token: exactly type, keyslots and a non-empty key_description",
            ));
        }
    } else if ty.starts_with("luks2-") {
        return Err(Error::Unsupported {
            field: format!("{path}.type"),
            value: format!(
                "{ty} (the luks2- prefix is cryptsetup's own, and it knows no such type)"
            ),
        });
    }
    Ok(())
}

/// The token's text as cryptsetup prints it (json-c's plain form: no
/// spaces, `/` not escaped, fields in their order).
fn to_text(token: &Value) -> String {
    token.to_string()
}

/// Where an imported token goes and which keyslot it is assigned to, as
/// `cryptsetup token import`'s options say.
///
/// ```
/// let at = mdu_luks2::token::Import { id: Some(3), replace: true, keyslot: None };
/// assert_eq!(at.id, Some(3));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Import {
    /// `--token-id`: this id (by default the first free one).
    pub id: Option<u32>,
    /// `--token-replace`: an existing token of that id is replaced (else
    /// refused as in use).
    pub replace: bool,
    /// `--key-slot`: add this keyslot to the token's `keyslots`.
    pub keyslot: Option<u32>,
}

impl Image {
    /// The JSON text of token `id`, byte for byte as `cryptsetup token
    /// export` prints it (no newline).
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// # let mut file = tempfile::tempfile()?;
    /// # std::io::Write::write_all(&mut file, &region)?;
    /// let mut img = Image::load(&file)?;
    /// let text = r#"{"type":"systemd-fido2","keyslots":[],"fido2-rp":"io.systemd.cryptsetup"}"#;
    /// let id = img.token_import(&file, text, token::Import::default())?;
    /// assert_eq!(Image::load(&file)?.token_export(id)?, text);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn token_export(&self, id: u32) -> Result<String, Error> {
        self.metadata
            .tokens
            .get(&id.to_string())
            .map(to_text)
            .ok_or_else(|| bad(format!("token {id} does not exist")))
    }

    /// Imports the token `json` (the text of one JSON object) as
    /// `cryptsetup token import` does, and returns its id: checked by
    /// [`validate`] and for fit, stored at `at.id` (refused if in use,
    /// unless `at.replace`) or the first free id, with `at.keyslot` added
    /// to its `keyslots`; one header write.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// # let mut file = tempfile::tempfile()?;
    /// # std::io::Write::write_all(&mut file, &region)?;
    /// let mut img = Image::load(&file)?;
    /// let at = token::Import { keyslot: Some(0), ..Default::default() };
    /// let id = img.token_import(&file, r#"{"type":"x","keyslots":[]}"#, at)?;
    /// assert_eq!(img.token_export(id)?, r#"{"type":"x","keyslots":["0"]}"#);
    /// // The same id again is in use.
    /// let again = token::Import { id: Some(id), ..Default::default() };
    /// assert!(img.token_import(&file, r#"{"type":"y","keyslots":[]}"#, again).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn token_import(
        &mut self,
        dev: &std::fs::File,
        json: &str,
        at: Import,
    ) -> Result<u32, Error> {
        if let Some(id) = at.id {
            check_id(id)?;
            if !at.replace && self.metadata.tokens.contains_key(&id.to_string()) {
                return Err(bad(format!(
                    "token {id} is in use (--token-replace replaces it)"
                )));
            }
        }
        if let Some(slot) = at.keyslot {
            check_keyslot(&self.metadata, slot)?;
        }
        let value: Value = serde_json::from_str(json).map_err(|e| Error::JsonSyntax {
            offset: 0,
            message: format!("the token is not valid JSON: {e}"),
        })?;
        let id = match at.id {
            Some(id) => id,
            None => (0..MAX_TOKENS)
                .find(|i| !self.metadata.tokens.contains_key(&i.to_string()))
                .ok_or_else(|| bad(format!("all {MAX_TOKENS} token ids are in use")))?,
        };
        validate(&self.metadata, id, &value)?;
        let mut m = self.metadata.clone();
        m.tokens.insert(id.to_string(), value);
        if let Some(slot) = at.keyslot {
            assign(&mut m.tokens, id, slot);
        }
        self.commit(dev, m)?;
        Ok(id)
    }

    /// Adds a `luks2-keyring` token (`cryptsetup token add
    /// --key-description`): at `id` or the first free id, assigned to
    /// `keyslot`, or to every keyslot when `None`, or to none when
    /// `unbound`. Returns its id.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// # let mut file = tempfile::tempfile()?;
    /// # std::io::Write::write_all(&mut file, &region)?;
    /// let mut img = Image::load(&file)?;
    /// let id = img.token_add_keyring(&file, "user:root", token::Import::default(), false)?;
    /// assert_eq!(img.token_export(id)?,
    ///     r#"{"type":"luks2-keyring","keyslots":["0"],"key_description":"user:root"}"#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn token_add_keyring(
        &mut self,
        dev: &std::fs::File,
        description: &str,
        at: Import,
        unbound: bool,
    ) -> Result<u32, Error> {
        let slots: Vec<u32> = match (unbound, at.keyslot) {
            (true, _) => Vec::new(),
            (false, Some(s)) => {
                check_keyslot(&self.metadata, s)?;
                vec![s]
            }
            (false, None) => self.metadata.keyslots.keys().copied().collect(),
        };
        let mut token = Map::new();
        token.insert("type".into(), KEYRING.into());
        let slots = slots.iter().map(|s| Value::from(s.to_string())).collect();
        token.insert("keyslots".into(), Value::Array(slots));
        token.insert("key_description".into(), description.into());
        // One header write with the assignment (cryptsetup makes two).
        let text = Value::Object(token).to_string();
        self.token_import(
            dev,
            &text,
            Import {
                keyslot: None,
                ..at
            },
        )
    }

    /// Removes token `id` (`cryptsetup token remove`).
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// # let mut file = tempfile::tempfile()?;
    /// # std::io::Write::write_all(&mut file, &region)?;
    /// let mut img = Image::load(&file)?;
    /// let id = img.token_import(&file, r#"{"type":"x","keyslots":[]}"#, Default::default())?;
    /// img.token_remove(&file, id)?;
    /// assert!(Image::load(&file)?.metadata.tokens.is_empty());
    /// assert!(img.token_remove(&file, id).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn token_remove(&mut self, dev: &std::fs::File, id: u32) -> Result<(), Error> {
        check_id(id)?;
        let mut m = self.metadata.clone();
        if m.tokens.shift_remove(&id.to_string()).is_none() {
            return Err(bad(format!("token {id} is not in use")));
        }
        self.commit(dev, m)
    }

    /// Removes keyslot `slot` from the `keyslots` of token `id`
    /// (`cryptsetup token unassign`); refused if it is not there.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// # let mut file = tempfile::tempfile()?;
    /// # std::io::Write::write_all(&mut file, &region)?;
    /// let mut img = Image::load(&file)?;
    /// let at = token::Import { keyslot: Some(0), ..Default::default() };
    /// let id = img.token_import(&file, r#"{"type":"x","keyslots":[]}"#, at)?;
    /// img.token_unassign(&file, id, 0)?;
    /// assert_eq!(img.token_export(id)?, r#"{"type":"x","keyslots":[]}"#);
    /// assert!(img.token_unassign(&file, id, 0).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn token_unassign(&mut self, dev: &std::fs::File, id: u32, slot: u32) -> Result<(), Error> {
        check_id(id)?;
        let name = slot.to_string();
        let mut m = self.metadata.clone();
        let list = m
            .tokens
            .get_mut(&id.to_string())
            .and_then(|t| t.get_mut("keyslots"))
            .and_then(Value::as_array_mut)
            .filter(|l| l.iter().any(|s| s.as_str() == Some(&name)))
            .ok_or_else(|| bad(format!("token {id} is not assigned to keyslot {slot}")))?;
        list.retain(|s| s.as_str() != Some(&name));
        self.commit(dev, m)
    }
}

/// Adds keyslot `slot` to the `keyslots` of token `id` unless it is there.
fn assign(tokens: &mut Map<String, Value>, id: u32, slot: u32) {
    let name = slot.to_string();
    if let Some(list) = tokens
        .get_mut(&id.to_string())
        .and_then(|t| t.get_mut("keyslots"))
        .and_then(Value::as_array_mut)
        && !list.iter().any(|s| s.as_str() == Some(&name))
    {
        list.push(name.into());
    }
}

/// Removes keyslot `slot` from the `keyslots` of every token (what
/// cryptsetup does when a keyslot goes).
pub(crate) fn unassign_everywhere(tokens: &mut Map<String, Value>, slot: u32) {
    let name = slot.to_string();
    for t in tokens.values_mut() {
        if let Some(list) = t.get_mut("keyslots").and_then(Value::as_array_mut) {
            list.retain(|s| s.as_str() != Some(&name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::test_image::image;

    /// Every token cryptsetup 2.6 refuses, refused with nothing written.
    #[test]
    #[cfg_attr(miri, ignore = "PBKDF2 in the interpreter")]
    fn every_token_cryptsetup_refuses_is_refused_and_nothing_is_written() {
        let (f, mut img) = image();
        let seqid = img.header.seqid;
        let big = format!(
            r#"{{"type":"x","keyslots":[],"blob":"{}"}}"#,
            "a".repeat(20000)
        );
        let refused = [
            "[1]",
            "not json",
            r#"{"type":"","keyslots":[]}"#,
            r#"{"keyslots":[]}"#,
            r#"{"type":7,"keyslots":[]}"#,
            r#"{"type":"x"}"#,
            r#"{"type":"x","keyslots":"0"}"#,
            r#"{"type":"x","keyslots":[0]}"#,
            r#"{"type":"x","keyslots":["00"]}"#,
            r#"{"type":"x","keyslots":["1"]}"#,
            r#"{"type":"luks2-other","keyslots":[]}"#,
            r#"{"type":"luks2-keyring","keyslots":[]}"#,
            r#"{"type":"luks2-keyring","keyslots":[],"key_description":""}"#,
            r#"{"type":"luks2-keyring","keyslots":[],"key_description":"k","x":1}"#,
            big.as_str(),
        ];
        for text in refused {
            let err = img.token_import(&f, text, Import::default());
            assert!(err.is_err(), "{text:.60} was imported");
        }
        let at = |id, slot| Import {
            id,
            replace: false,
            keyslot: slot,
        };
        let ok = r#"{"type":"x","keyslots":[]}"#;
        assert!(img.token_import(&f, ok, at(Some(32), None)).is_err());
        assert!(img.token_import(&f, ok, at(None, Some(1))).is_err());
        assert_eq!(Image::load(&f).unwrap().header.seqid, seqid);
        assert!(img.token_remove(&f, 0).is_err());
        assert!(img.token_export(0).is_err());
    }

    #[test]
    #[cfg_attr(miri, ignore = "PBKDF2 in the interpreter")]
    fn fields_keep_their_order_and_replace_keeps_the_place() {
        let (f, mut img) = image();
        let a = r#"{"type":"systemd-tpm2","keyslots":["0"],"tpm2-pcrs":[7],"a":1}"#;
        let b = r#"{"type":"b","keyslots":[]}"#;
        assert_eq!(img.token_import(&f, a, Import::default()).unwrap(), 0);
        assert_eq!(img.token_import(&f, b, Import::default()).unwrap(), 1);
        let again = Image::load(&f).unwrap();
        assert_eq!(again.token_export(0).unwrap(), a);
        let replace = Import {
            id: Some(0),
            replace: true,
            keyslot: Some(0),
        };
        img.token_import(&f, b, replace).unwrap();
        let again = Image::load(&f).unwrap();
        assert_eq!(again.metadata.tokens.keys().collect::<Vec<_>>(), ["0", "1"]);
        assert_eq!(
            again.token_export(0).unwrap(),
            r#"{"type":"b","keyslots":["0"]}"#
        );
        // Token 5 first in the JSON text, listed after 0 and 1 by the dump.
        let at5 = Import {
            id: Some(5),
            ..Import::default()
        };
        let mut img5 = Image::load(&f).unwrap();
        let mut m = img5.metadata.clone();
        m.tokens.shift_remove("0");
        m.tokens.shift_remove("1");
        img5.commit(&f, m).unwrap();
        img5.token_import(&f, b, at5).unwrap();
        img5.token_import(&f, b, Import::default()).unwrap();
        let text = crate::dump::text(&Image::load(&f).unwrap());
        assert!(
            text.find("  0: ").unwrap() < text.find("  5: ").unwrap(),
            "{text}"
        );
        let mut tokens = again.metadata.tokens.clone();
        unassign_everywhere(&mut tokens, 0);
        assert_eq!(tokens["0"], json!({"type": "b", "keyslots": []}));
    }
}
