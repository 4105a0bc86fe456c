//! `mdu luks token add|remove|import|export|unassign IMAGE`, as
//! `cryptsetup token`: the action is the first argument.

use std::io::IsTerminal as _;

use mdu_luks2::token::Import;

use super::header::load_for_write;
use super::*;

/// Largest token JSON read (cryptsetup's limit: the largest metadata
/// area, less its NUL).
const MAX_JSON: u64 = (4 << 20) - 1;

/// `mdu luks token`.
#[derive(Args, Debug)]
pub(crate) struct TokenArgs {
    /// What to do with the token.
    #[arg(value_enum, value_name = "ACTION")]
    pub(super) action: TokenAction,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
    /// The token's JSON: read from FILE by import (stdin when not given or
    /// `-`), written to FILE by export (stdout when not given or `-`).
    #[arg(long, value_name = "FILE")]
    pub(super) json_file: Option<PathBuf>,
    /// The token id (0 to 31). import and add: the first free id when not
    /// given; remove, export and unassign need it.
    #[arg(long, value_name = "N")]
    pub(super) token_id: Option<u32>,
    /// import and add: replace the token --token-id if it exists.
    #[arg(long, requires = "token_id")]
    pub(super) token_replace: bool,
    /// import: assign the token to this keyslot; add: to this keyslot
    /// instead of every keyslot; unassign: the keyslot to take off.
    #[arg(long, short = 'S', value_name = "N")]
    pub(super) key_slot: Option<u32>,
    /// add: the kernel keyring key a luks2-keyring token names.
    #[arg(long, value_name = "DESCRIPTION")]
    pub(super) key_description: Option<String>,
    /// add: assign the token to no keyslot.
    #[arg(long)]
    pub(super) unbound: bool,
    /// The LUKS2 header is in FILE (a detached header).
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
}

/// The action of `mdu luks token`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenAction {
    /// Add a luks2-keyring token (--key-description).
    Add,
    /// Remove token --token-id.
    Remove,
    /// Import a token's JSON (--json-file, or stdin).
    Import,
    /// Print token --token-id's JSON as cryptsetup does.
    Export,
    /// Take keyslot --key-slot off token --token-id.
    Unassign,
}

/// `--token-id`, for the actions that need it.
fn token_id(a: &TokenArgs) -> Result<u32, CliError> {
    a.token_id.ok_or_else(|| {
        CliError::Usage(format!(
            "mdu luks token {}: --token-id is needed",
            format!("{:?}", a.action).to_lowercase()
        ))
    })
}

/// The token JSON of import: --json-file, or stdin.
fn read_json(file: Option<&Path>) -> Result<String, CliError> {
    let mut text = String::new();
    let (path, res) = match file.filter(|p| *p != Path::new("-")) {
        Some(p) => (
            p.to_owned(),
            File::open(p).and_then(|f| f.take(MAX_JSON).read_to_string(&mut text)),
        ),
        None => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                eprintln!("Provide valid LUKS2 token JSON:");
            }
            (
                PathBuf::from("stdin"),
                stdin.lock().take(MAX_JSON).read_to_string(&mut text),
            )
        }
    };
    res.map_err(|e| CliError::io(&path, "read the token JSON", e))?;
    Ok(text)
}

pub(super) fn token(a: TokenArgs) -> Result<(), CliError> {
    let path = a.header.clone().unwrap_or_else(|| a.image.clone());
    if a.action == TokenAction::Export {
        let id = token_id(&a)?;
        let (_, img) = load(&path)?;
        let text = img.token_export(id).map_err(|e| image_error(&path, e))?;
        return match a.json_file.as_deref().filter(|p| *p != Path::new("-")) {
            Some(out) => {
                use std::os::unix::fs::OpenOptionsExt as _;
                // As cryptsetup: readable by its owner only when new.
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    .open(out)
                    .and_then(|mut f| f.write_all(text.as_bytes()))
                    .map_err(|e| CliError::io(out, "write the token", e))
            }
            None => {
                let mut stdout = std::io::stdout().lock();
                let newline = if stdout.is_terminal() { "\n" } else { "" };
                stdout
                    .write_all(format!("{text}{newline}").as_bytes())
                    .and_then(|()| stdout.flush())
                    .map_err(|e| CliError::io(Path::new("stdout"), "write", e))
            }
        };
    }
    let at = Import {
        id: a.token_id,
        replace: a.token_replace,
        keyslot: a.key_slot,
    };
    let json = match a.action {
        TokenAction::Import => Some(read_json(a.json_file.as_deref())?),
        _ => None,
    };
    let description = match (a.action, &a.key_description) {
        (TokenAction::Add, None) => {
            return Err(CliError::Usage(
                "mdu luks token add: --key-description is needed".into(),
            ));
        }
        (_, d) => d.clone(),
    };
    let id = match a.action {
        TokenAction::Remove | TokenAction::Unassign => Some(token_id(&a)?),
        _ => None,
    };
    if a.action == TokenAction::Unassign && a.key_slot.is_none() {
        return Err(CliError::Usage(
            "mdu luks token unassign: --key-slot is needed".into(),
        ));
    }
    let (_locks, f, mut img) = load_for_write(&path)?;
    let done = match a.action {
        TokenAction::Import => img
            .token_import(&f, json.as_deref().unwrap_or_default(), at)
            .map(drop),
        TokenAction::Add => img
            .token_add_keyring(
                &f,
                description.as_deref().unwrap_or_default(),
                at,
                a.unbound,
            )
            .map(drop),
        TokenAction::Remove => img.token_remove(&f, id.unwrap_or_default()),
        TokenAction::Unassign => {
            img.token_unassign(&f, id.unwrap_or_default(), a.key_slot.unwrap_or_default())
        }
        TokenAction::Export => Ok(()),
    };
    done.map_err(|e| image_error(&path, e))
}
