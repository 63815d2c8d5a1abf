//! PyTorch profiler traces (Kineto's `*.pt.trace.json[.gz]`): the Chrome trace JSON that
//! `torch.profiler` writes, read into columns of the events the PyTorch Profiler's TensorBoard plugin
//! (torch-tb-profiler 0.4.3) reads, classified as it classifies them.
//!
//! The JSON is streamed: each event of `traceEvents` is parsed borrowing from the file's bytes, its
//! name interned, the fields the views need kept, and the event dropped; no JSON tree of the file
//! is ever built. Beside the plugin's events, every event chrome://tracing draws (with its flow
//! steps, metadata and `args` as written) is kept for the Trace Viewer ([`Timeline`]). The plugin's
//! three faults on current traces are not reproduced: `cuda_runtime` and
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
    /// Index into [`KinetoTrace::input_dims`]: the op's `Input Dims` (older traces: `Input dims`) as
    /// written, which the plugin's Operator view groups by; 0 (`[]`) where the event has none.
    pub input_dims: u32,
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
    /// Each distinct `Input Dims` text of the events ([`Event::input_dims`]), `[]` first.
    pub input_dims: Vec<String>,
    pub device_props: Option<Vec<DeviceProps>>,
    pub schema_version: Option<i64>,
    /// `distributedInfo.rank`: which rank of a distributed run wrote the trace (`None` outside one).
    pub rank: Option<i64>,
    /// `baseTimeNanoseconds`: what the events' `ts` (µs) count from, in ns since the Unix epoch, so
    /// that `base + ts` is the wall-clock time a CUDA memory snapshot stamps its events with
    /// ([`KinetoTrace::epoch_us`]).
    pub base_time_ns: Option<i64>,
    /// `traceEvents` entries read (all of them, kept or not).
    pub raw_events: u64,
    /// Every event as a trace viewer shows it ([`Timeline`]): the Trace Viewer's columns, beside the
    /// plugin's.
    pub timeline: Timeline,
}

/// A process or thread id as written: Kineto writes integers, and text for its own tracks
/// (`"pid": "Spans"`, `"tid": "PyTorch Profiler"`). An integer written as text is the integer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    Int(i64),
    Text(String),
}

impl Label {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Label::Int(i) => Some(*i),
            Label::Text(_) => None,
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Label::Int(i) => write!(f, "{i}"),
            Label::Text(t) => f.write_str(t),
        }
    }
}

/// One flow event (`ph` `s`, `t` or `f`): a step of the arrow chain of its (category, id), bound to a
/// slice of its thread as the Chrome trace format says ([`FlowPoint::enclosing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowPoint {
    /// Index into [`Timeline::names`].
    pub category: u32,
    pub id: i64,
    /// `b's'` (the chain starts), `b't'` (it passes), `b'f'` (it ends).
    pub phase: u8,
    /// Binds to the slice enclosing its time (`s`, `t`, and `f` written with `"bp":"e"`), else to
    /// the next slice that starts at or after it.
    pub enclosing: bool,
    /// Index into [`Timeline::tracks`].
    pub track: u32,
    pub ts_ns: i64,
}

/// What a metadata event (`ph` `M`) names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataKind {
    ProcessName,
    ProcessLabels,
    ProcessSortIndex,
    ThreadName,
    ThreadSortIndex,
}

/// One metadata event: a process's (`tid` unused) or a thread's name, labels or sort index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub kind: MetadataKind,
    pub pid: Label,
    pub tid: Label,
    /// The name or labels; empty for a sort index.
    pub text: String,
    pub sort_index: i64,
}

/// Every complete (`X`) and instant (`i`, `I`) event of the trace in columns, in file order, with
/// the flow and metadata events that place and link them: what chrome://tracing and Perfetto draw.
/// Times are integer ns: Kineto writes µs with three decimals, and a `ts` below 2^43 µs (~100 days
/// of a monotonic clock) is read back to the exact ns it was written from ([`micros_to_ns`]).
/// Arguments are kept as their JSON text, read when an event is opened.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Event names and categories (a table of its own: [`KinetoTrace::names`] is the plugin's).
    pub names: Vec<String>,
    pub name: Vec<u32>,
    pub category: Vec<u32>,
    pub ts_ns: Vec<i64>,
    /// 0 for an instant.
    pub dur_ns: Vec<i64>,
    pub instant: Vec<bool>,
    /// Index into [`Timeline::tracks`].
    pub track: Vec<u32>,
    /// Each event's `args` as a range of [`Timeline::args_text`] (start, length); empty for none.
    pub args: Vec<(u64, u32)>,
    pub args_text: String,
    /// (pid, tid) of each track, in order of first appearance.
    pub tracks: Vec<(Label, Label)>,
    pub flows: Vec<FlowPoint>,
    /// In file order (a later one overrides an earlier one of the same kind, as in Chrome).
    pub metadata: Vec<Metadata>,
}

impl Timeline {
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }

    pub fn name_of(&self, event: usize) -> &str {
        &self.names[self.name[event] as usize]
    }

    /// Event `event`'s `args` as written (`""` for none).
    pub fn args_json(&self, event: usize) -> &str {
        let (start, len) = self.args[event];
        self.args_text.get(start as usize..start as usize + len as usize).unwrap_or("")
    }
}

/// µs as Kineto writes them (three decimals) to integer ns: the whole µs and the fraction are
/// converted apart, so a value below 2^43 µs, whose double is within half a ns of its text, gives
/// back the exact ns; larger ones are as near as the double holds.
pub fn micros_to_ns(us: f64) -> i64 {
    let whole = us.floor();
    (whole as i64).saturating_mul(1000).saturating_add(((us - whole) * 1000.0).round() as i64)
}

impl KinetoTrace {
    pub fn name(&self, e: &Event) -> &str {
        &self.names[e.name as usize]
    }

    /// An event time `ts` (µs) as µs since the Unix epoch, where the trace says what its times
    /// count from (`baseTimeNanoseconds`); `None` where it does not.
    pub fn epoch_us(&self, ts: f64) -> Option<f64> {
        self.base_time_ns.map(|base| base as f64 / 1000.0 + ts)
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
        let mut dims = Interner::default();
        dims.intern("[]");
        let mut timeline = TimelineBuilder::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if KINETO_KEYS.contains(&key.as_ref()) {
                seen.kineto_keys = true;
            }
            match key.as_ref() {
                "traceEvents" => {
                    seen.trace_events = true;
                    map.next_value_seed(EventsSeed {
                        trace: self.trace,
                        interner: &mut interner,
                        dims: &mut dims,
                        timeline: &mut timeline,
                    })?;
                }
                "deviceProperties" => self.trace.device_props = map.next_value::<Option<Vec<DeviceProps>>>()?,
                "schemaVersion" => self.trace.schema_version = map.next_value::<Option<i64>>().ok().flatten(),
                "distributedInfo" => self.trace.rank = map.next_value::<Option<DistributedInfo>>()?.and_then(|d| d.rank),
                "baseTimeNanoseconds" => self.trace.base_time_ns = map.next_value::<Option<i64>>().ok().flatten(),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        self.trace.names = interner.names;
        self.trace.input_dims = dims.names;
        self.trace.timeline = timeline.finish();
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
    dims: &'t mut Interner,
    timeline: &'t mut TimelineBuilder,
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
            self.timeline.add(&raw);
            let args = match raw.args {
                Some(text) => Some(serde_json::from_str::<RawArgs>(text.get()).map_err(de::Error::custom)?),
                None => None,
            };
            keep(self.trace, (self.interner, self.dims), raw, args);
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

/// A `pid` or `tid` as written ([`Label`]), borrowing its text.
#[derive(Debug, Clone)]
enum RawLabel<'a> {
    Int(i64),
    Text(Cow<'a, str>),
}

impl RawLabel<'_> {
    /// The id the plugin reads: an integer, or text that is one.
    fn id(&self) -> Option<i64> {
        match self {
            RawLabel::Int(i) => Some(*i),
            RawLabel::Text(t) => t.trim().parse().ok(),
        }
    }

    fn label(&self) -> Label {
        match (self, self.id()) {
            (_, Some(i)) => Label::Int(i),
            (RawLabel::Text(t), None) => Label::Text(t.to_string()),
            (RawLabel::Int(_), None) => unreachable!("an integer label is its id"),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RawLabel<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawLabel<'a>, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = RawLabel<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawLabel<'a>, E> {
                Ok(RawLabel::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawLabel<'a>, E> {
                Ok(i64::try_from(v).map_or_else(|_| RawLabel::Text(Cow::Owned(v.to_string())), RawLabel::Int))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawLabel<'a>, E> {
                Ok(if v.fract() == 0.0 { RawLabel::Int(v as i64) } else { RawLabel::Text(Cow::Owned(v.to_string())) })
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<RawLabel<'a>, E> {
                Ok(RawLabel::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawLabel<'a>, E> {
                Ok(RawLabel::Text(Cow::Owned(v.to_string())))
            }
            fn visit_unit<E: de::Error>(self) -> Result<RawLabel<'a>, E> {
                Ok(RawLabel::Text(Cow::Borrowed("")))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
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
    #[serde(borrow)]
    pid: Option<RawLabel<'a>>,
    #[serde(borrow)]
    tid: Option<RawLabel<'a>>,
    /// A flow event's id.
    id: Option<Id>,
    /// A flow end's binding point (`"e"`: the enclosing slice).
    #[serde(borrow)]
    bp: Option<Cow<'a, str>>,
    /// As written: the Trace Viewer keeps the text, the plugin's fields are read from it ([`RawArgs`]).
    #[serde(borrow)]
    args: Option<&'a serde_json::value::RawValue>,
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
    #[serde(rename = "Input Dims", borrow)]
    input_dims: Option<&'a serde_json::value::RawValue>,
    #[serde(rename = "Input dims", borrow)]
    input_dims_older: Option<&'a serde_json::value::RawValue>,
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
fn classify(raw: &RawEvent, args: Option<&RawArgs>) -> Option<Kind> {
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
        "python_function" if args.is_some_and(|a| a.module_id.is_some()) => Kind::Module,
        "python_function" => Kind::PythonFunction,
        _ => return None,
    })
}

fn keep(trace: &mut KinetoTrace, (interner, dims): (&mut Interner, &mut Interner), raw: RawEvent, args: Option<RawArgs>) {
    let Some(kind) = classify(&raw, args.as_ref()) else { return };
    let Some(ts) = raw.ts else { return };
    let name = raw.name.as_deref().unwrap_or("");
    let args = args.unwrap_or_default();
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
        pid: raw.pid.as_ref().and_then(RawLabel::id),
        tid: raw.tid.as_ref().and_then(RawLabel::id),
        external_id: args.external_id.or(args.external_id_lower).and_then(|i| i.0),
        correlation: args.correlation.and_then(|c| c.0),
        step,
        has_call_stack: args.call_stack.is_some_and(|s| !s.is_empty()),
        input_dims: args.input_dims.or(args.input_dims_older).map_or(0, |d| dims.intern(d.get())),
        detail: detail as u32,
    });
}

/// A `pid` or `tid` as a [`Label`]; an absent one is empty text.
fn label(l: &Option<RawLabel>) -> Label {
    l.as_ref().map_or(Label::Text(String::new()), RawLabel::label)
}

/// [`Timeline`] while the events stream by.
#[derive(Default)]
struct TimelineBuilder {
    timeline: Timeline,
    names: Interner,
    tracks: HashMap<Label, HashMap<Label, u32>>,
}

impl TimelineBuilder {
    fn track(&mut self, raw: &RawEvent) -> u32 {
        let (pid, tid) = (label(&raw.pid), label(&raw.tid));
        let tracks = &mut self.timeline.tracks;
        let by_tid = self.tracks.entry(pid.clone()).or_default();
        *by_tid.entry(tid.clone()).or_insert_with(|| {
            tracks.push((pid, tid));
            tracks.len() as u32 - 1
        })
    }

    /// Keeps `raw` if it is an event, a flow step or metadata the Trace Viewer reads.
    fn add(&mut self, raw: &RawEvent) {
        let (Some(ph), Some(ts)) = (raw.ph.as_deref(), raw.ts) else {
            if raw.ph.as_deref() == Some("M") {
                self.metadata(raw);
            }
            return;
        };
        let ts_ns = micros_to_ns(ts);
        match ph {
            "X" | "i" | "I" => {
                let t = &mut self.timeline;
                t.name.push(self.names.intern(raw.name.as_deref().unwrap_or("")));
                t.category.push(self.names.intern(raw.cat.as_deref().unwrap_or("")));
                t.ts_ns.push(ts_ns);
                t.dur_ns.push(if ph == "X" { micros_to_ns(raw.dur.unwrap_or(0.0)) } else { 0 });
                t.instant.push(ph != "X");
                let args = raw.args.map_or("", |a| a.get());
                t.args.push((t.args_text.len() as u64, args.len() as u32));
                t.args_text.push_str(args);
                let track = self.track(raw);
                self.timeline.track.push(track);
            }
            "s" | "t" | "f" => {
                let Some(id) = raw.id.and_then(|i| i.0) else { return };
                let point = FlowPoint {
                    category: self.names.intern(raw.cat.as_deref().unwrap_or("")),
                    id,
                    phase: ph.as_bytes()[0],
                    enclosing: ph != "f" || raw.bp.as_deref() == Some("e"),
                    track: self.track(raw),
                    ts_ns,
                };
                self.timeline.flows.push(point);
            }
            "M" => self.metadata(raw),
            _ => {}
        }
    }

    fn metadata(&mut self, raw: &RawEvent) {
        #[derive(Deserialize, Default)]
        struct MetaArgs {
            name: Option<String>,
            labels: Option<String>,
            sort_index: Option<i64>,
        }
        let kind = match raw.name.as_deref() {
            Some("process_name") => MetadataKind::ProcessName,
            Some("process_labels") => MetadataKind::ProcessLabels,
            Some("process_sort_index") => MetadataKind::ProcessSortIndex,
            Some("thread_name") => MetadataKind::ThreadName,
            Some("thread_sort_index") => MetadataKind::ThreadSortIndex,
            _ => return,
        };
        let args: MetaArgs = raw.args.and_then(|a| serde_json::from_str(a.get()).ok()).unwrap_or_default();
        self.timeline.metadata.push(Metadata {
            kind,
            pid: label(&raw.pid),
            tid: label(&raw.tid),
            text: args.name.or(args.labels).unwrap_or_default(),
            sort_index: args.sort_index.unwrap_or(0),
        });
    }

    fn finish(mut self) -> Timeline {
        self.timeline.names = self.names.names;
        self.timeline
    }
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

    #[test]
    fn the_timeline_keeps_every_event_flow_step_and_metadata() {
        let t = KinetoTrace::decode(
            br#"{"schemaVersion":1,"traceEvents":[
            {"name":"process_name","ph":"M","ts":1,"pid":7,"tid":0,"args":{"name":"python3"}},
            {"name":"thread_name","ph":"M","pid":7,"tid":8,"args":{"name":"main"}},
            {"ph":"X","cat":"cpu_op","name":"aten::mm","ts":4984196518665.31,"dur":2.5,"pid":7,"tid":8,"args":{"Input Dims":[[2,3]]}},
            {"ph":"X","cat":"weird","name":"other","ts":2,"dur":1,"pid":"Spans","tid":"Profiler"},
            {"ph":"i","s":"t","name":"[memory]","ts":3,"pid":7,"tid":8},
            {"ph":"s","id":5,"cat":"ac2g","name":"ac2g","ts":4984196518665.31,"pid":7,"tid":8},
            {"ph":"f","id":5,"cat":"ac2g","name":"ac2g","ts":9,"pid":0,"tid":7,"bp":"e"},
            {"ph":"f","id":6,"cat":"ac2g","name":"ac2g","ts":9,"pid":0,"tid":7}]}"#,
        )
        .unwrap();
        let tl = &t.timeline;
        assert_eq!(tl.len(), 3, "every complete and instant event, whatever its category");
        assert_eq!((tl.ts_ns[0], tl.dur_ns[0]), (4_984_196_518_665_310, 2_500), "the ns written");
        assert_eq!(tl.args_json(0), r#"{"Input Dims":[[2,3]]}"#);
        assert_eq!((tl.args_json(1), tl.instant[2]), ("", true));
        assert_eq!(tl.tracks[tl.track[1] as usize], (Label::Text("Spans".into()), Label::Text("Profiler".into())));
        let flows: Vec<(u8, bool, i64)> = tl.flows.iter().map(|f| (f.phase, f.enclosing, f.id)).collect();
        assert_eq!(flows, [(b's', true, 5), (b'f', true, 5), (b'f', false, 6)]);
        let meta: Vec<(MetadataKind, &str)> = tl.metadata.iter().map(|m| (m.kind, m.text.as_str())).collect();
        assert_eq!(meta, [(MetadataKind::ProcessName, "python3"), (MetadataKind::ThreadName, "main")]);
        // The plugin's columns are as before: the unknown category is not one of its events.
        assert_eq!(t.events.len(), 2);
    }
}
