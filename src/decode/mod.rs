//! Decoders: sniff a file's format from its content, inflate gzip (bounded), and decode it into the
//! format's model. Every failure is a [`DecodeError`] whose message a user can act on.

pub mod gzip;
pub mod hlo;
pub mod input;
pub mod kineto;
pub mod log_dir;
pub mod pickle;
pub mod pickle_snapshot;
pub mod pprof;
pub mod sniff;
pub mod stream;
pub mod wire;
pub mod xplane;

use serde::Serialize;

pub use input::Input;
pub use sniff::Format;

/// A decoded input file.
pub struct DecodedFile {
    pub name: String,
    /// Size of the file as given (compressed, if it was gzipped).
    pub size_bytes: u64,
    /// Whether the file was gzip-compressed.
    pub gzipped: bool,
    pub profile: Profile,
    /// Where a gzipped trace was cut short, when it was: its profile is what was inflated before the
    /// cut ([`gzip::inflate_to_cut`]).
    pub gzip_cut: Option<gzip::GzipCut>,
    /// The file's bytes as given, unless the decoded profile already owns them (a plain XSpace):
    /// kept so the file can be embedded in an offline bundle exactly as the user opened it.
    original: Option<Input>,
}

impl DecodedFile {
    /// The file's bytes as the user opened it (gzipped if it was).
    pub fn source_bytes(&self) -> &[u8] {
        match (&self.original, &self.profile) {
            (Some(b), _) => b,
            (None, Profile::XSpace(space)) => space.bytes(),
            (None, _) => &[],
        }
    }
}

impl DecodedFile {
    /// The buffer that holds the file's bytes, the decoded file dropped: an XSpace's, where owned.
    pub fn into_buffer(self) -> Option<Vec<u8>> {
        match self.profile {
            Profile::XSpace(space) => space.into_bytes().into_vec(),
            _ => None,
        }
    }
}

/// The decoded content, one variant per format.
pub enum Profile {
    XSpace(xplane::XSpace),
    Hlo(hlo::HloFile),
    Pprof(pprof::PprofFile),
    Kineto(kineto::KinetoTrace),
    TorchSnapshot(Box<pickle_snapshot::TorchSnapshot>),
}

impl Profile {
    pub fn format(&self) -> Format {
        match self {
            Profile::XSpace(_) => Format::XSpace,
            Profile::Hlo(_) => Format::HloProto,
            Profile::Pprof(_) => Format::Pprof,
            Profile::Kineto(_) => Format::Kineto,
            Profile::TorchSnapshot(_) => Format::TorchSnapshot,
        }
    }
}

/// Why a file could not be decoded. Messages say what the file is (or is not) and where it breaks.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecodeError {
    #[error("the file is empty (0 bytes)")]
    Empty,
    #[error("this is not a profile: {what}. Tidemark reads XProf traces (*.xplane.pb), XLA HloProto dumps (*.hlo.pb, *.hlo_proto.pb) and JAX device memory profiles (*.prof)")]
    NotAProfile { what: String },
    #[error("file is truncated at byte {end} of {format}: {detail}. The writer was probably stopped mid-write; re-capture the profile")]
    Truncated { format: Format, end: u64, detail: String },
    #[error("this looks like {format}, but it is corrupt: {detail}")]
    Corrupt { format: Format, detail: String },
    #[error("{detail}")]
    Gzip { detail: String },
    #[error("{}", too_large(*.size_bytes, *.limit_bytes))]
    TooLarge { size_bytes: u64, limit_bytes: u64 },
    /// A gzipped file whose content is larger than [`gzip::MAX_OUTPUT_BYTES`] (`inflated_bytes` is its
    /// stated size, or how far it was inflated before it passed the limit).
    #[error("{}", inflates_too_large(*.size_bytes, *.inflated_bytes, *.at_least, *.limit_bytes))]
    InflatesTooLarge { size_bytes: u64, inflated_bytes: u64, at_least: bool, limit_bytes: u64 },
    /// The file could not be read (in the page: it was moved, deleted or changed while being read).
    #[error("the file could not be read to its end: {detail}")]
    Unreadable { detail: String },
}

/// The largest file the engine takes. In the page (wasm32) the whole engine lives in at most 4 GiB of
/// address space, and the file's bytes are one buffer, which Rust caps at 2 GiB there (`isize::MAX`);
/// 2000 MiB leaves that cap a margin and the analyses 2 GiB beside the file (a 1,994 MiB trace opens
/// in headless Chromium with every memory tool working: `bench/RESULTS.md`). The page refuses larger
/// files before reading them. The native CLI refuses only what no machine we target could index.
#[cfg(target_arch = "wasm32")]
pub const MAX_INPUT_BYTES: u64 = 2000 << 20;
#[cfg(not(target_arch = "wasm32"))]
pub const MAX_INPUT_BYTES: u64 = 64 << 30;

/// What to do about a file over [`MAX_INPUT_BYTES`] depends on where it was opened.
fn too_large(size_bytes: u64, limit_bytes: u64) -> String {
    format!("the file is {}, more than the {} {}; {}", size(size_bytes), size(limit_bytes), held_where(), open_elsewhere())
}

fn inflates_too_large(size_bytes: u64, inflated_bytes: u64, at_least: bool, limit_bytes: u64) -> String {
    let inflated = if at_least { "more than".to_string() } else { format!("{}, more than", size(inflated_bytes)) };
    format!(
        "the file ({} gzipped) inflates to {inflated} the {} {}; {}",
        size(size_bytes),
        size(limit_bytes),
        held_where(),
        open_elsewhere()
    )
}

/// `n` bytes, as the page writes sizes.
pub(crate) fn size(n: u64) -> String {
    crate::units::bytes(i64::try_from(n).unwrap_or(i64::MAX))
}

/// What holds a file's bytes: the page's memory, or the machine's.
fn held_where() -> &'static str {
    if cfg!(target_arch = "wasm32") {
        "this page can hold in memory"
    } else {
        "Tidemark reads"
    }
}

/// Where a file too large for here can be opened: the page names the command-line tool, which reads
/// the same file natively with every analysis the page has.
pub(crate) fn open_elsewhere() -> &'static str {
    if cfg!(target_arch = "wasm32") {
        "open it with the `tidemark` command-line tool, which reads it natively with the same analyses: e.g. `tidemark memory-profile FILE` (`tidemark --help` lists every tool)"
    } else {
        "capture fewer steps or hosts per trace"
    }
}

impl From<kineto::KinetoError> for DecodeError {
    fn from(e: kineto::KinetoError) -> Self {
        use kineto::KinetoError as K;
        match e {
            K::Empty => DecodeError::Empty,
            K::NotKineto { what } => DecodeError::NotAProfile { what },
            K::Truncated { len, .. } => {
                DecodeError::Truncated { format: Format::Kineto, end: len, detail: "the JSON ends inside `traceEvents`".into() }
            }
            K::Corrupt { detail } => DecodeError::Corrupt { format: Format::Kineto, detail },
            K::Gzip { detail } => DecodeError::Gzip { detail },
        }
    }
}

impl From<gzip::GzipError> for DecodeError {
    fn from(e: gzip::GzipError) -> Self {
        DecodeError::Gzip { detail: e.to_string() }
    }
}

impl DecodeError {
    /// Maps a wire-scan failure inside `format` data to a user-facing error.
    pub(crate) fn from_wire(format: Format, e: wire::WireError) -> Self {
        match e {
            wire::WireError::Truncated { at, needed_end, end } => DecodeError::Truncated {
                format,
                end: end as u64,
                detail: format!("a field starting at byte {at} runs to byte {needed_end}"),
            },
            wire::WireError::Malformed { .. } => DecodeError::Corrupt { format, detail: e.to_string() },
        }
    }

    pub(crate) fn from_prost(format: Format, what: &str, e: prost::DecodeError) -> Self {
        DecodeError::Corrupt { format, detail: format!("{what}: {}", compact_path(&e.to_string())) }
    }
}

/// prost names every message it was inside when decoding failed (`ShapeProto.tuple_shapes: ` once per
/// level, a hundred times for a nesting bomb); runs of the same step are written once with a count.
fn compact_path(message: &str) -> String {
    let mut parts: Vec<(&str, usize)> = Vec::new();
    for part in message.split(": ") {
        match parts.last_mut() {
            Some((last, n)) if *last == part => *n += 1,
            _ => parts.push((part, 1)),
        }
    }
    let parts: Vec<String> = parts.into_iter().map(|(p, n)| if n == 1 { p.to_string() } else { format!("{p} (×{n})") }).collect();
    parts.join(": ")
}

/// Progress of a decode, for the page's progress bar: `done` of `total` units (bytes or items).
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// Decodes `bytes` (the whole file, possibly gzipped) named `name`, reporting progress.
pub fn decode(name: &str, bytes: impl Into<Input>, progress: Progress) -> Result<DecodedFile, DecodeError> {
    let bytes: Input = bytes.into();
    let size_bytes = check_size(bytes.len() as u64)?;
    let gzipped = gzip::is_gzip(&bytes);
    let (raw, original, cut) = if gzipped {
        let (raw, cut) = gzip::inflate_to_cut(&bytes)?;
        (Input::from(raw), Some(bytes), cut)
    } else {
        (bytes, None, None)
    };
    assemble(name, size_bytes, gzipped, raw, original, cut, |raw| xplane::XSpace::index(raw, progress))
}

/// `size_bytes`, if a file of that size can be decoded at all.
fn check_size(size_bytes: u64) -> Result<u64, DecodeError> {
    match size_bytes {
        0 => Err(DecodeError::Empty),
        n if n > MAX_INPUT_BYTES => Err(DecodeError::TooLarge { size_bytes, limit_bytes: MAX_INPUT_BYTES }),
        n => Ok(n),
    }
}

/// The decoded file of `raw` (the file's bytes, inflated if they were gzipped), its format sniffed;
/// an XSpace is indexed by `index_xspace`. `original` are the bytes as opened, where they differ.
///
/// `raw` of a gzip stream cut short (`gzip_cut`) is what was inflated before the cut: a trace is
/// indexed up to the cut as a plain file cut there is. Anything else is refused, saying the file was
/// cut: a pprof profile or HloProto has no partial reading, and nothing was inflated before the cut
/// of its stream's header.
fn assemble(
    name: &str,
    size_bytes: u64,
    gzipped: bool,
    raw: Input,
    mut original: Option<Input>,
    gzip_cut: Option<gzip::GzipCut>,
    index_xspace: impl FnOnce(Input) -> Result<xplane::XSpace, DecodeError>,
) -> Result<DecodedFile, DecodeError> {
    let profile = decode_profile(name, raw, &mut original, index_xspace);
    let profile = match (gzip_cut, profile) {
        (None, profile) => profile?,
        (Some(_), Ok(profile @ Profile::XSpace(_))) => profile,
        (Some(cut), Ok(profile)) => {
            let why = format!(
                "{} cut short cannot be read in part; only a trace (*.xplane.pb.gz) opens with what lies before its cut",
                profile.format()
            );
            return Err(cut_refused(cut, &why));
        }
        (Some(cut), Err(_)) if cut.inflated_bytes == 0 => return Err(cut_refused(cut, "nothing of its content lies before the cut")),
        (Some(cut), Err(e)) => return Err(cut_refused(cut, &format!("what lies before the cut cannot be read: {e}"))),
    };
    Ok(DecodedFile { name: name.to_string(), size_bytes, gzipped, profile, gzip_cut, original })
}

/// The refusal of a gzipped file cut short at `cut`, and `why`.
fn cut_refused(cut: gzip::GzipCut, why: &str) -> DecodeError {
    let compressed_len = usize::try_from(cut.compressed_len).unwrap_or(usize::MAX);
    let truncated = gzip::GzipError::Truncated { compressed_len, inflated: cut.inflated_bytes };
    DecodeError::Gzip { detail: format!("{truncated}: {why}") }
}

/// The profile `raw` holds, as [`assemble`] reads it.
fn decode_profile(
    name: &str,
    raw: Input,
    original: &mut Option<Input>,
    index_xspace: impl FnOnce(Input) -> Result<xplane::XSpace, DecodeError>,
) -> Result<Profile, DecodeError> {
    if raw.is_empty() {
        return Err(DecodeError::NotAProfile { what: "the gzip stream inflates to nothing".into() });
    }
    let profile = match sniff::sniff(&raw, name)? {
        Format::XSpace => Profile::XSpace(index_xspace(raw)?),
        Format::HloProto => {
            let hlo = hlo::HloFile::decode(&raw)?;
            original.get_or_insert(raw);
            Profile::Hlo(hlo)
        }
        Format::Pprof => {
            let p = pprof::PprofFile::decode(&raw)?;
            original.get_or_insert(raw);
            Profile::Pprof(p)
        }
        Format::Kineto => Profile::Kineto(kineto::KinetoTrace::decode(&raw)?),
        Format::TorchSnapshot => {
            let s = pickle_snapshot::TorchSnapshot::decode(&raw)?;
            original.get_or_insert(raw);
            Profile::TorchSnapshot(Box::new(s))
        }
    };
    Ok(profile)
}
