//! Decoders: sniff a file's format from its content, inflate gzip (bounded), and decode it into the
//! format's model. Every failure is a [`DecodeError`] whose message a user can act on.

pub mod gzip;
pub mod hlo;
pub mod pprof;
pub mod sniff;
pub mod wire;
pub mod xplane;

use serde::Serialize;

pub use sniff::Format;

/// A decoded input file.
pub struct DecodedFile {
    pub name: String,
    /// Size of the file as given (compressed, if it was gzipped).
    pub size_bytes: u64,
    /// Whether the file was gzip-compressed.
    pub gzipped: bool,
    pub profile: Profile,
    /// The file's bytes as given, unless the decoded profile already owns them (a plain XSpace):
    /// kept so the file can be embedded in an offline bundle exactly as the user opened it.
    original: Option<Vec<u8>>,
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

/// The decoded content, one variant per format.
pub enum Profile {
    XSpace(xplane::XSpace),
    Hlo(hlo::HloFile),
    Pprof(pprof::PprofFile),
}

impl Profile {
    pub fn format(&self) -> Format {
        match self {
            Profile::XSpace(_) => Format::XSpace,
            Profile::Hlo(_) => Format::HloProto,
            Profile::Pprof(_) => Format::Pprof,
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
    #[error("the {format} data is corrupt: {detail}")]
    Corrupt { format: Format, detail: String },
    #[error("{detail}")]
    Gzip { detail: String },
    #[error("the file is {size_bytes} bytes, more than the {limit_bytes} bytes this page can hold in memory; use the `tidemark` CLI for files this large")]
    TooLarge { size_bytes: u64, limit_bytes: u64 },
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
        DecodeError::Corrupt { format, detail: format!("{what}: {e}") }
    }
}

/// Progress of a decode, for the page's progress bar: `done` of `total` units (bytes or items).
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// Decodes `bytes` (the whole file, possibly gzipped) named `name`, reporting progress.
pub fn decode(name: &str, bytes: Vec<u8>, progress: Progress) -> Result<DecodedFile, DecodeError> {
    let size_bytes = bytes.len() as u64;
    if bytes.is_empty() {
        return Err(DecodeError::Empty);
    }
    let gzipped = gzip::is_gzip(&bytes);
    let (raw, mut original) = if gzipped { (gzip::inflate(&bytes)?, Some(bytes)) } else { (bytes, None) };
    if raw.is_empty() {
        return Err(DecodeError::NotAProfile { what: "the gzip stream inflates to nothing".into() });
    }
    let profile = match sniff::sniff(&raw, name)? {
        Format::XSpace => Profile::XSpace(xplane::XSpace::index(raw, progress)?),
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
    };
    Ok(DecodedFile { name: name.to_string(), size_bytes, gzipped, profile, original })
}
