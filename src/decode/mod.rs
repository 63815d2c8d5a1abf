//! Decoders: sniff a file's format from its content, inflate gzip (bounded), and decode it into the
//! format's model. Every failure is a [`DecodeError`] whose message a user can act on.

pub mod gzip;
pub mod hlo;
pub mod input;
pub mod log_dir;
pub mod pprof;
pub mod sniff;
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
    #[error("this looks like {format}, but it is corrupt: {detail}")]
    Corrupt { format: Format, detail: String },
    #[error("{detail}")]
    Gzip { detail: String },
    #[error("{}", too_large(*.size_bytes, *.limit_bytes))]
    TooLarge { size_bytes: u64, limit_bytes: u64 },
}

/// The largest file the engine takes. In the page (wasm32) the whole engine lives in at most 4 GiB of
/// address space, which must hold the file, its inflated bytes and the decoded index; the page refuses
/// larger files before reading them. The native CLI refuses only what no machine we target could index.
#[cfg(target_arch = "wasm32")]
pub const MAX_INPUT_BYTES: u64 = 1536 << 20;
#[cfg(not(target_arch = "wasm32"))]
pub const MAX_INPUT_BYTES: u64 = 64 << 30;

/// What to do about a file over [`MAX_INPUT_BYTES`] depends on where it was opened.
fn too_large(size_bytes: u64, limit_bytes: u64) -> String {
    let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let (size, limit) = (crate::units::bytes(as_i64(size_bytes)), crate::units::bytes(as_i64(limit_bytes)));
    if cfg!(target_arch = "wasm32") {
        format!("the file is {size}, more than the {limit} this page can hold in memory; open it with the `tidemark` command-line tool (same analyses, no such limit), e.g. `tidemark inspect FILE`")
    } else {
        format!("the file is {size}, more than the {limit} Tidemark reads; capture fewer steps or hosts per trace")
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
    let size_bytes = bytes.len() as u64;
    if bytes.is_empty() {
        return Err(DecodeError::Empty);
    }
    if size_bytes > MAX_INPUT_BYTES {
        return Err(DecodeError::TooLarge { size_bytes, limit_bytes: MAX_INPUT_BYTES });
    }
    let gzipped = gzip::is_gzip(&bytes);
    let (raw, mut original) = if gzipped { (Input::from(gzip::inflate(&bytes)?), Some(bytes)) } else { (bytes, None) };
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
