//! Format detection by content first, the file name second: a profile renamed to `data.bin` must
//! open the same as `host.xplane.pb`. All three formats start with field 1 length-delimited (0x0a),
//! so detection looks one level deeper at what that field holds.

use super::wire::{Fields, Value};
use super::DecodeError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The input formats Tidemark reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// An XProf trace (`*.xplane.pb`).
    XSpace,
    /// An XLA `HloProto` (`*.hlo.pb`, `*.hlo_proto.pb`).
    HloProto,
    /// A pprof profile (`*.prof`), e.g. a JAX device memory profile.
    Pprof,
    /// A PyTorch profiler trace (Kineto's `*.pt.trace.json[.gz]`).
    Kineto,
    /// A PyTorch CUDA memory snapshot (`torch.cuda.memory._dump_snapshot`'s pickle).
    TorchSnapshot,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::XSpace => "an XSpace trace (xplane.pb)",
            Format::HloProto => "an HloProto",
            Format::Pprof => "a pprof profile",
            Format::Kineto => "a PyTorch profiler trace (Kineto JSON)",
            Format::TorchSnapshot => "a PyTorch CUDA memory snapshot (snapshot.pickle)",
        })
    }
}

/// Whether a file inside a dropped folder is worth opening: XProf writes its JSON tool outputs next to
/// the traces, and a folder of a run also holds TensorBoard event files and tool caches
/// ([`super::log_dir::is_sidecar`]).
pub fn is_profile_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let n = n.strip_suffix(".gz").unwrap_or(&n);
    (n.ends_with(".pb") || n.ends_with(".prof") || n.ends_with(".pt.trace.json") || n.ends_with(".pickle"))
        && !super::log_dir::is_sidecar(name)
}

fn hint_from_name(name: &str) -> Option<Format> {
    let n = name.to_ascii_lowercase();
    let n = n.strip_suffix(".gz").unwrap_or(&n);
    if n.ends_with(".xplane.pb") {
        Some(Format::XSpace)
    } else if n.ends_with(".hlo.pb") || n.ends_with(".hlo_proto.pb") {
        Some(Format::HloProto)
    } else if n.ends_with(".prof") || n.ends_with(".pb") && n.contains("pprof") {
        Some(Format::Pprof)
    } else {
        None
    }
}

/// Names what a non-protobuf file looks like, so the message can say "this is a PNG image".
fn describe_foreign(bytes: &[u8]) -> Option<&'static str> {
    const MAGICS: &[(&[u8], &str)] = &[
        (b"\x89PNG", "it is a PNG image"),
        (b"\xff\xd8\xff", "it is a JPEG image"),
        (b"GIF8", "it is a GIF image"),
        (b"%PDF", "it is a PDF document"),
        (b"PK\x03\x04", "it is a ZIP archive (unpack it and drop the files inside)"),
        (b"\x7fELF", "it is an executable (ELF)"),
        (b"BZh", "it is a bzip2 archive (decompress it first)"),
        (b"\xfd7zXZ", "it is an xz archive (decompress it first)"),
        (b"\x28\xb5\x2f\xfd", "it is a zstd archive (decompress it first)"),
        (b"\0asm", "it is a WebAssembly module"),
    ];
    for (magic, what) in MAGICS {
        if bytes.starts_with(magic) {
            return Some(what);
        }
    }
    // Text: printable UTF-8 (a cut multi-byte character at the end is fine). Protobuf is not, even when
    // every byte is below 0x80: its tags and lengths are control characters (0x08, 0x12, 0x1a, ...).
    let head = &bytes[..bytes.len().min(512)];
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
        Err(_) => "",
    };
    let printable = |c: char| !c.is_control() || matches!(c, '\t' | '\n' | '\r' | '\x0c');
    let trimmed = head.iter().skip_while(|b| b.is_ascii_whitespace()).copied().next();
    if !valid.is_empty() && valid.len() + 4 > head.len() && valid.chars().all(printable) {
        return Some(match trimmed {
            Some(b'{') | Some(b'[') => "it is JSON text (XProf's converted tool output?); drop the .xplane.pb it came from instead",
            Some(b'<') => "it is HTML/XML text",
            _ => "it is a text file",
        });
    }
    None
}

/// Looks at the first top-level field-1 payload and classifies it by its own first fields.
fn classify(bytes: &[u8]) -> Option<Format> {
    let mut top = Fields::new(bytes, 0..bytes.len());
    let first = match top.next()? {
        Ok(f) => f,
        Err(_) => return None,
    };
    let mut top_numbers = vec![first.number];
    let Value::Len(inner) = first.value.clone() else { return None };
    if first.number != 1 {
        // An XSpace with no planes still has hostnames (4); pprof may lead with other fields.
        return match first.number {
            2..=4 => Some(Format::XSpace),
            _ => None,
        };
    }
    // Scan the rest of the top level for a field only pprof has (string table 6, int fields 9–14; an
    // XSpace has fields 1–4 only). Its samples (field 2) come first, any number of them, so the scan
    // cannot stop early; it skips every payload unread, so it is one cheap pass over the tags.
    for f in top {
        match f {
            Ok(f) if (5..=14).contains(&f.number) => {
                top_numbers.push(f.number);
                break;
            }
            Ok(f) => {
                if top_numbers.len() < 64 {
                    top_numbers.push(f.number);
                }
            }
            Err(_) => break,
        }
    }
    let mut inner_fields = Fields::new(bytes, inner);
    let Some(Ok(nested)) = inner_fields.next() else {
        return top_numbers.contains(&6).then_some(Format::Pprof);
    };
    match (nested.number, &nested.value) {
        // pprof ValueType {type 1: varint, unit 2: varint}
        (1, Value::Varint(_)) | (2, Value::Varint(_)) if top_numbers.iter().any(|n| (5..=14).contains(n)) => Some(Format::Pprof),
        // XPlane {id 1: varint, name 2: string, lines 3, ...}
        (1, Value::Varint(_)) | (2, Value::Len(_)) | (3, Value::Len(_)) => Some(Format::XSpace),
        // HloModuleProto {name 1: string, ...}
        (1, Value::Len(_)) => Some(Format::HloProto),
        _ => None,
    }
}

/// A pickle (`PROTO` 2–5 first) whose top-level dict names a memory snapshot's keys near its start
/// (the snapshot's first key, `segments`, is written right after the dict is opened). Another
/// pickle is refused by name: Tidemark reads no other.
fn sniff_pickle(bytes: &[u8]) -> Option<Result<Format, DecodeError>> {
    let [0x80, protocol, ..] = *bytes else { return None };
    if !(2..=5).contains(&protocol) {
        return None;
    }
    let head = &bytes[..bytes.len().min(512)];
    let names_key = |key: &[u8]| head.windows(key.len()).any(|w| w == key);
    Some(if names_key(b"segments") || names_key(b"device_traces") {
        Ok(Format::TorchSnapshot)
    } else {
        Err(DecodeError::NotAProfile {
            what: "it is a Python pickle, but not a PyTorch CUDA memory snapshot (a dict with `segments` and `device_traces`)".into(),
        })
    })
}

/// Decides the format of decompressed `bytes` named `name`.
pub fn sniff(bytes: &[u8], name: &str) -> Result<Format, DecodeError> {
    if super::kineto::looks_like_kineto(bytes) {
        return Ok(Format::Kineto);
    }
    if let Some(pickle) = sniff_pickle(bytes) {
        return pickle;
    }
    if let Some(what) = describe_foreign(bytes) {
        return Err(DecodeError::NotAProfile { what: what.to_string() });
    }
    match classify(bytes) {
        Some(f) => Ok(f),
        None => match hint_from_name(name) {
            // A known name with an unreadable start: decode it and let the decoder say where it breaks.
            Some(f) => Ok(f),
            None => Err(DecodeError::NotAProfile { what: "its bytes are not a protobuf message of any known kind".to_string() }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_foreign_files() {
        let e = sniff(b"\x89PNG\r\n\x1a\n....", "x.xplane.pb").unwrap_err();
        assert!(e.to_string().contains("PNG image"), "{e}");
        let e = sniff(b"{\"a\": 1}", "x.json").unwrap_err();
        assert!(e.to_string().contains("JSON"), "{e}");
    }

    #[test]
    fn small_protobufs_are_not_text() {
        // Every byte below 0x80 is valid UTF-8, but tags and lengths are control characters.
        let hostnames_only = [0x22, 0x04, b'h', b'o', b's', b't'];
        assert_eq!(sniff(&hostnames_only, "x.bin").unwrap(), Format::XSpace);
        assert!(describe_foreign(b"plain text\nwith lines\n").is_some());
    }

    #[test]
    fn pprof_with_many_samples_is_pprof() {
        use crate::proto::pprof as pb;
        use prost::Message;
        let p = pb::Profile {
            sample_type: vec![pb::ValueType { r#type: 1, unit: 2 }],
            sample: vec![pb::Sample { location_id: vec![1], value: vec![8], label: Vec::new() }; 500],
            string_table: vec!["".into(), "space".into(), "bytes".into()],
            ..Default::default()
        };
        assert_eq!(sniff(&p.encode_to_vec(), "renamed.bin").unwrap(), Format::Pprof);
    }

    #[test]
    fn random_bytes_are_not_a_profile() {
        let bytes: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 | 0x80).collect();
        let e = sniff(&bytes, "noise.bin").unwrap_err();
        assert!(matches!(e, DecodeError::NotAProfile { .. }), "{e}");
    }
}
