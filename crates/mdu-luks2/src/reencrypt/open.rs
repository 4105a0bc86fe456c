//! One entry for a command: the header is loaded once, and what it
//! records decides whether the run asked for starts or the run in
//! progress goes on, as `cryptsetup reencrypt` decides.

use super::*;

/// What a command asks of a volume, before its header is read.
///
/// ```
/// use mdu_luks2::reencrypt::Goal;
/// let g = Goal::NewKey { cipher: None, key_size: None, sector_size: None, key_slot: None };
/// assert!(!g.names_another_run());
/// ```
#[derive(Clone, Debug)]
pub enum Goal {
    /// A new volume key; the cipher, the key size (bytes) and the sector
    /// size as given, else the volume's.
    NewKey {
        /// The new cipher.
        cipher: Option<CipherSpec>,
        /// The new key size, bytes.
        key_size: Option<usize>,
        /// The new sector size.
        sector_size: Option<u32>,
        /// The keyslot to open (`None`: any).
        key_slot: Option<u32>,
    },
    /// Decrypt: in place under a detached header; a volume whose header is
    /// inside the image moves down, its header exported to the header
    /// file, which is then new (empty) ([`Plan::DecryptShift`]).
    Decrypt {
        /// The keyslot to open (`None`: any).
        key_slot: Option<u32>,
    },
    /// Encrypt under a new detached header (the header file empty).
    Encrypt(FormatParams),
    /// Encrypt with the header at the start of the device, the data moved
    /// up ([`Plan::EncryptShift`]).
    EncryptShift(FormatParams),
}

impl Goal {
    /// Whether the goal names parameters of a new run (a new cipher, key
    /// size or sector size): given while a run is in progress, that is a
    /// request for another run.
    ///
    /// ```
    /// use mdu_luks2::reencrypt::Goal;
    /// let g = Goal::NewKey { cipher: None, key_size: Some(32), sector_size: None, key_slot: None };
    /// assert!(g.names_another_run());
    /// ```
    pub fn names_another_run(&self) -> bool {
        match self {
            Goal::NewKey {
                cipher,
                key_size,
                sector_size,
                ..
            } => cipher.is_some() || key_size.is_some() || sector_size.is_some(),
            _ => false,
        }
    }

    /// Whether a run in progress in `mode` is this goal's.
    fn is_mode(&self, mode: ReencryptMode) -> bool {
        match self {
            Goal::Decrypt { .. } => mode == ReencryptMode::Decrypt,
            Goal::Encrypt(_) | Goal::EncryptShift(_) => mode == ReencryptMode::Encrypt,
            Goal::NewKey { .. } => !self.names_another_run(),
        }
    }

    /// The plan of a new run over the volume `img`.
    fn plan(&self, img: &Image) -> Result<Plan, Error> {
        Ok(match self {
            Goal::NewKey {
                cipher,
                key_size,
                sector_size,
                key_slot,
            } => {
                let Plan::Reencrypt {
                    cipher: c,
                    key_size: k,
                    sector_size: s,
                    ..
                } = Plan::new_key(img, *key_slot)?
                else {
                    unreachable!("new_key plans a new key");
                };
                let c = cipher.unwrap_or(c);
                let k = match key_size {
                    Some(n) if c.check_key_len(*n).is_ok() => *n,
                    Some(n) => {
                        return Err(Error::Params {
                            problem: format!("a key of {} bits is not a key of {c}", n * 8),
                        });
                    }
                    None if cipher.is_some() => c.default_key_len(),
                    None => k,
                };
                Plan::Reencrypt {
                    cipher: c,
                    key_size: k,
                    sector_size: sector_size.unwrap_or(s),
                    key_slot: *key_slot,
                }
            }
            // A header that maps its data past offset 0 is an image's own,
            // exported by a run interrupted before its record.
            Goal::Decrypt { key_slot } if img.segment().is_ok_and(|(_, s)| s.offset > 0) => {
                Plan::DecryptShift {
                    key_slot: *key_slot,
                }
            }
            Goal::Decrypt { key_slot } => Plan::Decrypt {
                key_slot: *key_slot,
            },
            Goal::Encrypt(p) => Plan::Encrypt(p.clone()),
            Goal::EncryptShift(p) => Plan::EncryptShift(p.clone()),
        })
    }
}

/// A command: its goal, how a new run protects its hotzones, and what it
/// allows.
///
/// ```
/// use mdu_luks2::reencrypt::{Goal, Request};
/// let r = Request::new(Goal::Decrypt { key_slot: None });
/// assert!(!r.start_only && !r.resume_only);
/// ```
#[derive(Clone, Debug)]
pub struct Request {
    /// What the command asks for.
    pub goal: Goal,
    /// How a new run protects each hotzone (and the hotzone size of a
    /// resumed one).
    pub options: Options,
    /// Only start a run (cryptsetup's `--init-only`): a run in progress is
    /// refused.
    pub start_only: bool,
    /// Only go on with the run in progress (`--resume-only`).
    pub resume_only: bool,
    /// Resume a run with `none` resilience (see [`Reencryption::resume`]).
    pub allow_none: bool,
}

impl Request {
    /// `goal` with the default options, starting or resuming.
    ///
    /// ```
    /// let r = mdu_luks2::reencrypt::Request::new(mdu_luks2::reencrypt::Goal::Decrypt { key_slot: Some(1) });
    /// assert!(!r.allow_none);
    /// ```
    pub fn new(goal: Goal) -> Request {
        Request {
            goal,
            options: Options::default(),
            start_only: false,
            resume_only: false,
            allow_none: false,
        }
    }
}

/// Whether [`Reencryption::open_or_start`] started a run or took up one.
///
/// ```
/// assert_ne!(mdu_luks2::reencrypt::Began::Started, mdu_luks2::reencrypt::Began::Resumed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Began {
    /// A new run; its first record is written.
    Started,
    /// The run in progress, its hotzone in doubt repaired.
    Resumed,
}

/// A header device, loaded once: a LUKS2 header, or none (an empty file,
/// or a device that holds no header, with why).
///
/// ```
/// let h = mdu_luks2::reencrypt::Header::load(tempfile_or_empty()?);
/// assert!(h.uuid().is_none() && !h.in_progress());
/// # fn tempfile_or_empty() -> std::io::Result<std::fs::File> { std::fs::File::open("/dev/null") }
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Header {
    file: File,
    image: Result<Image, Error>,
}

impl Header {
    /// Loads the header on `file` (both copies checked).
    ///
    /// (Example: the [type's](Header).)
    pub fn load(file: File) -> Header {
        let image = Image::load(&file);
        Header { file, image }
    }

    /// The volume's UUID, if the file holds a header.
    ///
    /// (Example: the [type's](Header).)
    pub fn uuid(&self) -> Option<&str> {
        self.image.as_ref().ok().map(|i| i.header.uuid.as_str())
    }

    /// Whether the header records a reencryption in progress.
    ///
    /// (Example: the [type's](Header).)
    pub fn in_progress(&self) -> bool {
        self.image
            .as_ref()
            .is_ok_and(|i| i.metadata.reencrypt.is_some())
    }
}

impl Reencryption {
    /// What a `reencrypt` command does with a volume: goes on with the run
    /// its header records (if it is the run `request` asks for), or starts
    /// the one asked for. The header is read once, here.
    ///
    /// # Errors
    ///
    /// [`Error::InProgress`] when a run is in progress and `request`
    /// asks to start one or another one; [`Error::NotInProgress`] for
    /// a resume with none in progress (the free ranges of the keyslots
    /// area are then refilled: what a run killed after its final header
    /// left there goes); [`Error::Params`] for a key size the cipher
    /// has not; then whatever [`init`](Self::init) and
    /// [`resume`](Self::resume) refuse.
    ///
    /// ```no_run
    /// use mdu_luks2::reencrypt::{Goal, Header, Reencryption, Request};
    /// let f = || std::fs::OpenOptions::new().read(true).write(true).open("volume.img");
    /// let header = Header::load(f()?);
    /// let request = Request::new(Goal::NewKey { cipher: None, key_size: None, sector_size: None, key_slot: None });
    /// let (mut run, _began) = Reencryption::open_or_start(header, f()?, b"passphrase", &request)?;
    /// run.run(&mut |_, _| {}, &|| false)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_or_start(
        header: Header,
        data: File,
        passphrase: &[u8],
        request: &Request,
    ) -> Result<(Reencryption, Began), Error> {
        let Header { file, image } = header;
        let goal = &request.goal;
        match image {
            Ok(img) if img.metadata.reencrypt.is_some() => {
                let mode = img.metadata.reencrypt.as_ref().map(|r| r.mode);
                if request.start_only || !mode.is_some_and(|m| goal.is_mode(m)) {
                    return Err(Error::InProgress {
                        other: !request.start_only,
                    });
                }
                let r = Self::resume_loaded(
                    file,
                    data,
                    img,
                    passphrase,
                    request.options.hotzone_size,
                    request.allow_none,
                )?;
                Ok((r, Began::Resumed))
            }
            Ok(img) => {
                if request.resume_only {
                    let refilled = crate::check::wipe_free_areas(&file, &img)?;
                    return Err(Error::NotInProgress { refilled });
                }
                let plan = goal.plan(&img)?;
                let r = match plan {
                    Plan::Reencrypt { .. } | Plan::Decrypt { .. } => {
                        Self::init_in_header(file, data, img, passphrase, &plan, &request.options)?
                    }
                    _ => Self::init(file, data, passphrase, &plan, &request.options)?,
                };
                Ok((r, Began::Started))
            }
            Err(e) => {
                let plan = match goal {
                    _ if request.resume_only => return Err(e),
                    Goal::Encrypt(p) => Plan::Encrypt(p.clone()),
                    Goal::EncryptShift(p) => Plan::EncryptShift(p.clone()),
                    // The header file is new: the image's own is exported.
                    Goal::Decrypt { key_slot } => Plan::DecryptShift {
                        key_slot: *key_slot,
                    },
                    Goal::NewKey { .. } => return Err(e),
                };
                let r = Self::init(file, data, passphrase, &plan, &request.options)?;
                Ok((r, Began::Started))
            }
        }
    }
}
