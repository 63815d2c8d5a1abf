//! PyTorch profiler traces (Kineto's `*.pt.trace.json[.gz]`): the Chrome trace JSON that
//! `torch.profiler` writes, read into columns of the events the PyTorch Profiler's TensorBoard plugin
//! (torch-tb-profiler 0.4.3) reads, classified as it classifies them.
//!
//! The JSON is streamed: each event of `traceEvents` is parsed borrowing from the file's bytes, its
//! name interned, the fields the views need kept, and the event dropped; no JSON tree of the file
//! is ever built. The plugin's three faults on current traces are not reproduced: `cuda_runtime` and
//! `cuda_driver` are runtime calls (it knew neither), and the GPU-side `ProfilerStep#N` markers
//! (`gpu_user_annotation`) are not steps (it took them as extra steps).

use super::gzip;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

/// Why a file could not be read as a Kineto trace.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KinetoError {
    #[error("the file is empty (0 bytes)")]
    Empty,
    #[error("this is not a PyTorch profiler (Kineto) trace: {what}")]
    NotKineto { what: String },
    #[error(
        "the PyTorch profiler trace is truncated at byte {at} of {len}: the profiler was probably stopped mid-write; re-capture the trace"
    )]
    Truncated { at: u64, len: u64 },
    #[error("this looks like a PyTorch profiler trace, but it is corrupt: {detail}")]
    Corrupt { detail: String },
    #[error("{detail}")]
    Gzip { detail: String },
}

/// The plugin's event types (`torch_tb_profiler/profiler/trace.py: EventTypes`), for the events it
/// creates; every other event is skipped at reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The `Trace` span `PyTorch Profiler (0)`.
    Trace,
    /// `cpu_op` / `operator`.
    Operator,
    /// A CPU-side `ProfilerStep#N` (`user_annotation` or `cpu_op`).
    ProfilerStep,
    /// `python`.
    Python,
    /// `python_function` without a module id.
    PythonFunction,
    /// `python_function` with a `Python module id` (an `nn.Module` call).
    Module,
    /// `runtime`, `cuda_runtime`, `cuda_driver`.
    Runtime,
    Kernel,
    Memcpy,
    Memset,
    /// A NCCL/Gloo collective named as a `user_annotation`.
    Communication,
    /// An `[memory]` instant event of the caching allocator.
    Memory,
}

/// One event the plugin reads. Times are µs as written (Kineto writes three decimals; as f64 of
/// an epoch-based µs count their ULP is about 0.001 µs, and the plugin's sums are of these f64).
#[derive(Debug, Clone)]
pub struct Event {
    pub kind: Kind,
    /// Index into [`KinetoTrace::names`].
    pub name: u32,
    pub ts: f64,
    pub dur: f64,
    pub pid: Option<i64>,
    pub tid: Option<i64>,
    pub external_id: Option<i64>,
    pub correlation: Option<i64>,
    /// The N of `ProfilerStep#N`.
    pub step: i64,
    /// Whether the op has a non-empty `Call stack`.
    pub has_call_stack: bool,
    /// Index into [`KinetoTrace::kernels`] (kernels) or [`KinetoTrace::memory`] (memory events).
    pub detail: u32,
}

/// A kernel's launch figures (`args` of a `kernel` event).
#[derive(Debug, Clone, Default)]
pub struct KernelArgs {
    pub device: Option<i64>,
    pub blocks_per_sm: Option<f64>,
    pub occupancy: Option<f64>,
    pub grid: Option<Vec<i64>>,
    pub block: Option<Vec<i64>>,
    pub regs_per_thread: Option<i64>,
    pub shared_memory: Option<i64>,
}

/// An allocator event's figures (`args` of an `[memory]` event).
#[derive(Debug, Clone, Default)]
pub struct MemoryArgs {
    pub device_id: Option<i64>,
    /// 0 CPU, 1 CUDA; anything else is no device the plugin names.
    pub device_type: Option<i64>,
    pub addr: Option<u64>,
    pub bytes: i64,
    /// NaN where the event has none.
    pub total_allocated: f64,
    pub total_reserved: f64,
}

/// One `deviceProperties` entry.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct DeviceProps {
    pub name: Option<String>,
    #[serde(rename = "totalGlobalMem")]
    pub total_global_mem: Option<f64>,
    #[serde(rename = "computeMajor")]
    pub compute_major: Option<i64>,
    #[serde(rename = "computeMinor")]
    pub compute_minor: Option<i64>,
}

/// The `distributedInfo` Kineto writes for a rank of a distributed run (`backend`, `rank`,
/// `world_size`, ...); only the rank is read.
#[derive(Debug, Clone, Default, Deserialize)]
struct DistributedInfo {
    rank: Option<i64>,
}

/// A Kineto trace, as columns of the events the plugin reads, in file order.
#[derive(Debug, Clone, Default)]
pub struct KinetoTrace {
    pub names: Vec<String>,
    pub events: Vec<Event>,
    pub kernels: Vec<KernelArgs>,
    pub memory: Vec<MemoryArgs>,
    pub device_props: Option<Vec<DeviceProps>>,
    pub schema_version: Option<i64>,
    /// `distributedInfo.rank`: which rank of a distributed run wrote the trace (`None` outside one).
    pub rank: Option<i64>,
    /// `traceEvents` entries read (all of them, kept or not).
    pub raw_events: u64,
}

impl KinetoTrace {
    pub fn name(&self, e: &Event) -> &str {
        &self.names[e.name as usize]
    }

    /// Reads a Kineto trace from the file's bytes, plain or gzipped.
    pub fn decode(bytes: &[u8]) -> Result<KinetoTrace, KinetoError> {
        if bytes.is_empty() {
            return Err(KinetoError::Empty);
        }
        let inflated;
        let json: &[u8] = if gzip::is_gzip(bytes) {
            inflated = gzip::inflate(bytes).map_err(|e| KinetoError::Gzip { detail: e.to_string() })?;
            &inflated
        } else {
            bytes
        };
        let first = json.iter().copied().find(|b| !b.is_ascii_whitespace());
        if first != Some(b'{') {
            return Err(KinetoError::NotKineto { what: "it is not a JSON object".into() });
        }
        let mut de = serde_json::Deserializer::from_slice(json);
        let mut trace = KinetoTrace::default();
        let seen = TopSeed { trace: &mut trace }.deserialize(&mut de).map_err(|e| json_error(e, json))?;
        de.end().map_err(|e| json_error(e, json))?;
        if !seen.trace_events {
            return Err(KinetoError::NotKineto { what: "the JSON object has no `traceEvents`".into() });
        }
        if !seen.kineto_keys {
            return Err(KinetoError::NotKineto {
                what: "its JSON has `traceEvents` but none of Kineto's keys (`schemaVersion`, `deviceProperties`, `distributedInfo`): a trace from another profiler".into(),
            });
        }
        Ok(trace)
    }
}

/// Whether `bytes` (inflated) start like a Kineto trace: a JSON object naming one of Kineto's
/// top-level keys in its first 64 KiB (Kineto writes them before `traceEvents`).
pub fn looks_like_kineto(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64 << 10)];
    let starts_object = head.iter().copied().find(|b| !b.is_ascii_whitespace()) == Some(b'{');
    let has = |k: &[u8]| head.windows(k.len()).any(|w| w == k);
    starts_object && has(b"\"traceEvents\"") && KINETO_KEYS.iter().any(|k| has(format!("\"{k}\"").as_bytes()))
}

const KINETO_KEYS: [&str; 3] = ["schemaVersion", "deviceProperties", "distributedInfo"];

fn json_error(e: serde_json::Error, json: &[u8]) -> KinetoError {
    if e.is_eof() {
        return KinetoError::Truncated { at: json.len() as u64, len: json.len() as u64 };
    }
    KinetoError::Corrupt { detail: e.to_string() }
}

/// What the top level held.
struct Seen {
    trace_events: bool,
    kineto_keys: bool,
}

struct TopSeed<'t> {
    trace: &'t mut KinetoTrace,
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = Seen;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Seen, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_> {
    type Value = Seen;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Seen, A::Error> {
        let mut seen = Seen { trace_events: false, kineto_keys: false };
        let mut interner = Interner::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if KINETO_KEYS.contains(&key.as_ref()) {
                seen.kineto_keys = true;
            }
            match key.as_ref() {
                "traceEvents" => {
                    seen.trace_events = true;
                    map.next_value_seed(EventsSeed { trace: self.trace, interner: &mut interner })?;
                }
                "deviceProperties" => self.trace.device_props = map.next_value::<Option<Vec<DeviceProps>>>()?,
                "schemaVersion" => self.trace.schema_version = map.next_value::<Option<i64>>().ok().flatten(),
                "distributedInfo" => self.trace.rank = map.next_value::<Option<DistributedInfo>>()?.and_then(|d| d.rank),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        self.trace.names = interner.names;
        Ok(seen)
    }
}

#[derive(Default)]
struct Interner {
    names: Vec<String>,
    index: HashMap<String, u32>,
}

impl Interner {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }
}

struct EventsSeed<'t> {
    trace: &'t mut KinetoTrace,
    interner: &'t mut Interner,
}

impl<'de> DeserializeSeed<'de> for EventsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(raw) = seq.next_element::<RawEvent<'de>>()? {
            self.trace.raw_events += 1;
            keep(self.trace, self.interner, raw);
        }
        Ok(())
    }
}

/// An integer id that Kineto sometimes writes as a string (`"pid": "Spans"`): strings that are not
/// integers are no id.
#[derive(Debug, Clone, Copy)]
struct Id(Option<i64>);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
                Ok(Id(Some(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(Id(i64::try_from(v).ok()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Id, E> {
                Ok(Id((v.fract() == 0.0).then_some(v as i64)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                Ok(Id(v.trim().parse().ok()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Id, E> {
                Ok(Id(None))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(borrow)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    ts: Option<f64>,
    dur: Option<f64>,
    pid: Option<Id>,
    tid: Option<Id>,
    #[serde(borrow)]
    args: Option<RawArgs<'a>>,
}

#[derive(Deserialize, Default)]
struct RawArgs<'a> {
    #[serde(rename = "External id")]
    external_id: Option<Id>,
    #[serde(rename = "external id")]
    external_id_lower: Option<Id>,
    correlation: Option<Id>,
    #[serde(rename = "Call stack", borrow)]
    call_stack: Option<Cow<'a, str>>,
    #[serde(rename = "Python module id")]
    module_id: Option<IgnoredAny>,
    #[serde(rename = "est. achieved occupancy %")]
    occupancy: Option<f64>,
    #[serde(rename = "blocks per SM")]
    blocks_per_sm: Option<f64>,
    grid: Option<Vec<i64>>,
    block: Option<Vec<i64>>,
    #[serde(rename = "registers per thread")]
    regs_per_thread: Option<i64>,
    #[serde(rename = "shared memory")]
    shared_memory: Option<i64>,
    device: Option<Id>,
    #[serde(rename = "Device Id")]
    device_id: Option<Id>,
    #[serde(rename = "Device Type")]
    device_type: Option<Id>,
    #[serde(rename = "Addr")]
    addr: Option<u64>,
    #[serde(rename = "Bytes")]
    bytes: Option<i64>,
    #[serde(rename = "Total Allocated")]
    total_allocated: Option<f64>,
    #[serde(rename = "Total Reserved")]
    total_reserved: Option<f64>,
}

const NCCL_GLOO: [&str; 10] = [
    "nccl:broadcast",
    "nccl:reduce",
    "nccl:all_reduce",
    "nccl:all_gather",
    "nccl:reduce_scatter",
    "gloo:broadcast",
    "gloo:reduce",
    "gloo:all_reduce",
    "gloo:all_gather",
    "gloo:reduce_scatter",
];

/// Whether `name` is a collective the plugin counts as communication.
pub fn is_collective(name: &str) -> bool {
    NCCL_GLOO.contains(&name)
}

/// The plugin's `create_event`, with its three faults corrected: the kind of `raw`, or `None` for
/// an event it skips.
fn classify(raw: &RawEvent) -> Option<Kind> {
    let name = raw.name.as_deref().unwrap_or("");
    match raw.ph.as_deref()? {
        "i" if name == "[memory]" => return Some(Kind::Memory),
        "X" => {}
        _ => return None,
    }
    let cat = raw.cat.as_deref()?.to_ascii_lowercase();
    let step = name.starts_with("ProfilerStep#");
    Some(match cat.as_str() {
        "trace" => Kind::Trace,
        "cpu_op" | "operator" if step => Kind::ProfilerStep,
        "cpu_op" | "operator" => Kind::Operator,
        "user_annotation" if step => Kind::ProfilerStep,
        "user_annotation" | "gpu_user_annotation" if is_collective(name) => Kind::Communication,
        "python" => Kind::Python,
        "runtime" | "cuda_runtime" | "cuda_driver" => Kind::Runtime,
        "kernel" => Kind::Kernel,
        "memcpy" | "gpu_memcpy" => Kind::Memcpy,
        "memset" | "gpu_memset" => Kind::Memset,
        "python_function" if raw.args.as_ref().is_some_and(|a| a.module_id.is_some()) => Kind::Module,
        "python_function" => Kind::PythonFunction,
        _ => return None,
    })
}

fn keep(trace: &mut KinetoTrace, interner: &mut Interner, raw: RawEvent) {
    let Some(kind) = classify(&raw) else { return };
    let Some(ts) = raw.ts else { return };
    let name = raw.name.as_deref().unwrap_or("");
    let args = raw.args.unwrap_or_default();
    let detail = match kind {
        Kind::Kernel => {
            trace.kernels.push(KernelArgs {
                device: args.device.and_then(|d| d.0),
                blocks_per_sm: args.blocks_per_sm,
                occupancy: args.occupancy,
                grid: args.grid,
                block: args.block,
                regs_per_thread: args.regs_per_thread,
                shared_memory: args.shared_memory,
            });
            trace.kernels.len() - 1
        }
        Kind::Memory => {
            trace.memory.push(MemoryArgs {
                device_id: args.device_id.and_then(|d| d.0),
                device_type: args.device_type.and_then(|d| d.0),
                addr: args.addr,
                bytes: args.bytes.unwrap_or(0),
                total_allocated: args.total_allocated.unwrap_or(f64::NAN),
                total_reserved: args.total_reserved.unwrap_or(f64::NAN),
            });
            trace.memory.len() - 1
        }
        _ => 0,
    };
    let step = if kind == Kind::ProfilerStep { name.split('#').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0) } else { 0 };
    trace.events.push(Event {
        kind,
        name: interner.intern(name),
        ts,
        dur: raw.dur.unwrap_or(0.0),
        pid: raw.pid.and_then(|p| p.0),
        tid: raw.tid.and_then(|t| t.0),
        external_id: args.external_id.or(args.external_id_lower).and_then(|i| i.0),
        correlation: args.correlation.and_then(|c| c.0),
        step,
        has_call_stack: args.call_stack.is_some_and(|s| !s.is_empty()),
        detail: detail as u32,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_kineto() {
        let e = KinetoTrace::decode(br#"{"displayTimeUnit":"ns","traceEvents":[]}"#).unwrap_err();
        assert!(matches!(e, KinetoError::NotKineto { .. }), "{e}");
        let e = KinetoTrace::decode(b"{}").unwrap_err();
        assert!(matches!(e, KinetoError::NotKineto { .. }), "{e}");
        let e = KinetoTrace::decode(b"[1,2]").unwrap_err();
        assert!(matches!(e, KinetoError::NotKineto { .. }), "{e}");
        let e = KinetoTrace::decode(br#"{"schemaVersion":1,"traceEvents":[{"ph":"X","#).unwrap_err();
        assert!(matches!(e, KinetoError::Truncated { .. }), "{e}");
    }

    #[test]
    fn classifies_as_the_plugin_with_its_faults_corrected() {
        let t = KinetoTrace::decode(
            br#"{"schemaVersion":1,"traceEvents":[
            {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":1.5,"dur":2,"pid":1,"tid":1,"args":{"External id":3,"correlation":9}},
            {"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#2","ts":1,"dur":2,"pid":0,"tid":7},
            {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","ts":1,"dur":2,"pid":1,"tid":1},
            {"ph":"i","name":"[memory]","ts":2,"pid":1,"tid":1,"args":{"Bytes":-512,"Addr":5,"Device Type":1,"Device Id":0}}]}"#,
        )
        .unwrap();
        let kinds: Vec<Kind> = t.events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [Kind::Runtime, Kind::ProfilerStep, Kind::Memory]);
        assert_eq!(t.events[1].step, 2);
        assert_eq!(t.memory[0].bytes, -512);
        assert!(t.memory[0].total_allocated.is_nan());
    }
}
