//! The paths a command names: kept apart, and printed for a shell.

use std::path::{Path, PathBuf};

use crate::error::CliError;

/// Refuses two of `paths` (each with the role it plays in the command) that
/// name the same file or device: a header written over its image, a
/// plaintext over its only header, a key file over anything. In-place
/// commands list their image once.
pub(crate) fn distinct(paths: &[(&str, &Path)]) -> Result<(), CliError> {
    for (i, (role_a, a)) in paths.iter().enumerate() {
        for (role_b, b) in &paths[i + 1..] {
            let same = match std::fs::metadata(a) {
                Ok(m) => crate::output::same_file(&m, b),
                // Neither exists yet: the same name is the same file.
                Err(_) => !b.exists() && canonical_new(a) == canonical_new(b),
            };
            if same {
                return Err(CliError::Usage(format!(
                    "{} ({role_a}) and {} ({role_b}) are the same file or device: \
                     nothing was changed",
                    a.display(),
                    b.display()
                )));
            }
        }
    }
    Ok(())
}

/// `p` as one word a POSIX shell reads back as `p` (quoted where needed),
/// for commands printed to be run as they are.
pub(crate) fn shell_word(p: &Path) -> String {
    let s = p.to_string_lossy();
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(&b));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A path that need not exist, with its directory resolved.
fn canonical_new(p: &Path) -> Option<PathBuf> {
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(dir.canonicalize().ok()?.join(p.file_name()?))
}
