//! `mdu luks check`: the header checked as a careful opener would, and
//! the free keyslot areas refilled on request.

use super::*;

pub(super) fn check(a: CheckArgs) -> Result<(), CliError> {
    let policy = match &a.policy {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| CliError::io(p, "read the policy", e))?;
            Some(
                mdu_luks2::check::Policy::from_json(&text)
                    .map_err(|e| CliError::Usage(format!("{}: {e}", p.display())))?,
            )
        }
        None => None,
    };
    let a = CheckArgs {
        image: a.header.clone().unwrap_or(a.image),
        ..a
    };
    // Held to the end: the header must not change between the check and
    // the refill.
    let mut locks = Locks::new();
    let f = if a.wipe_free_areas {
        lock_file(&mut locks, &a.image)?;
        crate::output::in_place(&a.image, true, false, "open for writing")
            .map_err(|e| status(WRONG_DEVICE, e.into()))?
    } else {
        open_sized(&a.image)?.0
    };
    let report =
        mdu_luks2::check::check(&f, policy.as_ref()).map_err(|e| image_error(&a.image, e))?;
    check_type(&a.image)?;
    for l in &report.leftovers {
        eprintln!(
            "mdu: warning: {}: {l} of the keyslots area are not named by any keyslot and are \
             neither random fill nor wiped: leftover data from an interrupted command; \
             `mdu luks check --wipe-free-areas` refills them",
            a.image.display()
        );
    }
    let wiped = if a.wipe_free_areas {
        Some(
            mdu_luks2::check::wipe_free_areas(&f, &report.image)
                .map_err(|e| image_error(&a.image, e))?,
        )
    } else {
        None
    };
    drop(locks);
    let mut text = if a.json {
        let mut v = mdu_luks2::check::to_json(&report);
        if let Some(n) = wiped {
            v["wiped"] = n.into();
        }
        let mut t = v.to_string();
        t.push('\n');
        t
    } else if report.is_clean() {
        format!(
            "{}: no findings (the {} header copy, seqid {})\n",
            a.image.display(),
            report.image.copy.name(),
            report.image.header.seqid
        )
    } else {
        report.findings.iter().map(|f| format!("{f}\n")).collect()
    };
    if let (Some(n), false) = (wiped, a.json) {
        let _ = writeln!(
            text,
            "{}: {n} bytes of the keyslots area that no keyslot names refilled with random bytes",
            a.image.display()
        );
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::io(Path::new("stdout"), "write", e))?;
    if report.is_clean() {
        Ok(())
    } else {
        Err(CliError::Refused {
            path: a.image.clone(),
            message: format!("{} finding(s) in the LUKS2 header", report.findings.len()),
        })
    }
}
