//! The page's side of the engine worker: sends requests in the versioned envelope, routes replies by
//! sequence number, and restarts the worker if it dies. Files go to the worker as `File` handles (a
//! structured clone of a `File` copies no bytes), which the worker reads itself: nothing the size of a
//! file is ever read on this thread. Bytes the page already holds (the demo, a bundle's files) are
//! handed over without copying (the `ArrayBuffer` is transferred).

use super::state::{AppState, FileStatus, LoadedFile};
use crate::engine::protocol::{request, Request, RequestBody, Response, ResponseBody, VERSION};
use crate::engine::{first_screen, EngineError};
use leptos::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{ErrorEvent, MessageEvent, Worker, WorkerOptions, WorkerType};

/// The largest file the page accepts: the wasm heap is at most 4 GiB and holds the file's (inflated)
/// bytes, its index and the analyses. The engine refuses the same, and a gzipped file whose trailer
/// states a larger inflated size before reading it.
pub const MAX_FILE_BYTES: u64 = crate::decode::MAX_INPUT_BYTES;

pub(crate) type Handler = Box<dyn FnMut(ResponseBody)>;

struct Client {
    worker: Worker,
    ready: bool,
    queue: Vec<(String, Option<JsValue>)>,
    handlers: HashMap<u64, (String, Handler)>,
    /// Which start of the worker this is: replies and errors of a replaced worker are ignored.
    generation: u64,
    /// Kept alive as long as the worker: dropping them would detach the handlers.
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

thread_local! {
    static CLIENT: RefCell<Option<Client>> = const { RefCell::new(None) };
    static STATE: RefCell<Option<AppState>> = const { RefCell::new(None) };
    static NEXT_KEY: RefCell<u64> = const { RefCell::new(1) };
    /// Bytes that came beside the reply being handled (a `Source` reply's file).
    static REPLY_BYTES: RefCell<Option<js_sys::ArrayBuffer>> = const { RefCell::new(None) };
    /// Request sequence numbers, never reused across worker restarts (a late reply of a dead worker
    /// must not be taken for a new request's).
    static NEXT_SEQ: RefCell<u64> = const { RefCell::new(0) };
    static GENERATION: RefCell<u64> = const { RefCell::new(0) };
}

/// The bytes that came beside the reply being handled, taken (for a handler's `read` of a reply
/// whose payload travels as bytes, such as the Trace Viewer's spans).
pub(crate) fn reply_bytes() -> Option<js_sys::ArrayBuffer> {
    REPLY_BYTES.with(|b| b.borrow_mut().take())
}

fn is_current(generation: u64) -> bool {
    CLIENT.with(|c| c.borrow().as_ref().is_some_and(|c| c.generation == generation))
}

/// Posts `[json, file]`: a `File` is cloned (a handle, no bytes), an `ArrayBuffer` transferred.
fn post(worker: &Worker, json: &str, file: Option<&JsValue>) {
    let msg = js_sys::Array::of2(&JsValue::from_str(json), file.unwrap_or(&JsValue::NULL));
    let res = match file.filter(|f| f.is_instance_of::<js_sys::ArrayBuffer>()) {
        Some(b) => worker.post_message_with_transfer(&msg, &js_sys::Array::of1(b)),
        None => worker.post_message(&msg),
    };
    if let Err(e) = res {
        report_alert(format!("could not send a request to the engine: {e:?}"));
    }
}

fn report_alert(msg: String) {
    STATE.with(|s| {
        if let Some(state) = *s.borrow() {
            state.alerts.update(|a| a.push(msg));
        }
    });
}

fn on_message(generation: u64, ev: MessageEvent) {
    if !is_current(generation) {
        return;
    }
    let data = ev.data();
    let (text, bytes) = match data.as_string() {
        Some(t) => (t, None),
        None => {
            let msg: js_sys::Array = data.unchecked_into();
            (msg.get(0).as_string().unwrap_or_default(), msg.get(1).dyn_into::<js_sys::ArrayBuffer>().ok())
        }
    };
    let resp: Response = match serde_json::from_str(&text) {
        Ok(r) => r,
        Err(e) => {
            report_alert(format!("the engine sent a reply the page cannot read: {e}"));
            return;
        }
    };
    if matches!(resp.body, ResponseBody::Ready) {
        let queued = CLIENT.with(|c| {
            let mut c = c.borrow_mut();
            let c = c.as_mut()?;
            c.ready = true;
            Some((c.worker.clone(), std::mem::take(&mut c.queue)))
        });
        if let Some((worker, queue)) = queued {
            for (json, file) in queue {
                post(&worker, &json, file.as_ref());
            }
        }
        return;
    }
    // The reply is read in this task and handed to its handler (which builds the view) in a task of
    // its own: a large reply's parsing and the view it builds would otherwise block the page's thread
    // as one task. Timers of equal delay run in the order they were set, so replies keep their order.
    set_timeout(move || deliver(resp, bytes), std::time::Duration::ZERO);
}

/// Hands `resp` (and the bytes that came beside it) to the handler of its request; progress keeps the
/// handler for the replies that follow.
fn deliver(resp: Response, bytes: Option<js_sys::ArrayBuffer>) {
    let final_reply = !matches!(resp.body, ResponseBody::Progress { .. } | ResponseBody::Read { .. });
    // Take the handler out while it runs: it may send new requests.
    let Some((label, mut handler)) = CLIENT.with(|c| c.borrow_mut().as_mut().and_then(|c| c.handlers.remove(&resp.seq))) else {
        return; // a reply nobody waits for any more (or its worker stopped meanwhile and failed it)
    };
    REPLY_BYTES.with(|b| *b.borrow_mut() = bytes);
    handler(resp.body);
    REPLY_BYTES.with(|b| b.borrow_mut().take());
    if !final_reply {
        CLIENT.with(|c| {
            if let Some(c) = c.borrow_mut().as_mut() {
                c.handlers.insert(resp.seq, (label, handler));
            }
        });
    }
}

/// The worker died (a trap, out of memory): fail what it was doing, say so, and start a fresh one —
/// unless it never became ready, in which case a restart would fail the same way.
fn on_error(generation: u64, ev: web_sys::Event) {
    ev.prevent_default();
    if !is_current(generation) {
        return;
    }
    // A script that fails to load fires a plain Event, a runtime failure an ErrorEvent.
    let reason =
        ev.dyn_ref::<ErrorEvent>().map(ErrorEvent::message).filter(|m| !m.is_empty()).unwrap_or_else(|| "it failed to start".into());
    let (pending, was_ready): (Vec<(String, Handler)>, bool) = match CLIENT.with(|c| c.borrow_mut().take()) {
        Some(c) => {
            // A trapped instance may still hold its memory (and, after an uncaught exception, even
            // run): end it for good before a replacement starts.
            c.worker.terminate();
            (c.handlers.into_values().collect(), c.ready)
        }
        None => (Vec::new(), false),
    };
    let restart = was_ready;
    let what = if restart { "it has been restarted" } else { "this browser could not start it" };
    for (label, mut handler) in pending {
        handler(ResponseBody::Failed { error: EngineError::EngineStopped { file: label, reason: reason.clone(), then: what.to_string() } });
    }
    if restart {
        report_alert(format!("The engine worker stopped ({reason}) and was restarted. Files loaded before it stopped keep their overview; drop them again to analyse them further."));
        start_worker();
    } else {
        report_alert(format!("The engine worker could not start ({reason}). Reload the page; if this persists, use the `tidemark` CLI."));
    }
}

/// The offline bundle's boot data (`window.__tidemarkBundle`), when this page is a bundle.
pub fn bundle() -> Option<JsValue> {
    let w = web_sys::window()?;
    js_sys::Reflect::get(&w, &"__tidemarkBundle".into()).ok().filter(|v| v.is_object())
}

/// A bundle has no worker.js to load: its worker starts from a blob and receives the engine's glue source
/// and wasm bytes as its first message, and compiles the wasm there, off the page's thread. (It makes its
/// own blob URL for the glue: under file:// every context has its own opaque origin, so the page's blob
/// URLs are not readable from the worker.)
const BUNDLE_WORKER: &str = "self.onmessage = async (e) => { self.onmessage = null; \
const url = URL.createObjectURL(new Blob([e.data.js], { type: 'text/javascript' })); \
const engine = await import(url); await engine.default({ module_or_path: e.data.wasm }); };";

fn new_worker() -> Result<Worker, JsValue> {
    let opts = WorkerOptions::new();
    let Some(boot) = bundle() else {
        // worker.js fetches and compiles the engine's own wasm module, on the worker's thread.
        opts.set_type(WorkerType::Module);
        return Worker::new_with_options("./worker.js", &opts);
    };
    // A classic worker: Chromium refuses module workers from blob: URLs in file:// pages, while a classic
    // one may still import() the ES-module glue.
    opts.set_type(WorkerType::Classic);
    let parts = js_sys::Array::of1(&JsValue::from_str(BUNDLE_WORKER));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type("text/javascript");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let worker = Worker::new_with_options(&url, &opts)?;
    let start = js_sys::Object::new();
    js_sys::Reflect::set(&start, &"js".into(), &js_sys::Reflect::get(&boot, &"engineJs".into())?)?;
    js_sys::Reflect::set(&start, &"wasm".into(), &js_sys::Reflect::get(&boot, &"engineWasm".into())?)?;
    worker.post_message(&start)?;
    Ok(worker)
}

fn start_worker() {
    let worker = match new_worker() {
        Ok(w) => w,
        Err(e) => {
            report_alert(format!("this browser could not start the engine worker: {e:?}"));
            return;
        }
    };
    let generation = GENERATION.with(|g| {
        *g.borrow_mut() += 1;
        *g.borrow()
    });
    let on_msg = Closure::<dyn FnMut(MessageEvent)>::new(move |ev| on_message(generation, ev));
    let on_err = Closure::<dyn FnMut(web_sys::Event)>::new(move |ev| on_error(generation, ev));
    worker.set_onmessage(Some(on_msg.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_err.as_ref().unchecked_ref()));
    CLIENT.with(|c| {
        *c.borrow_mut() = Some(Client {
            worker,
            ready: false,
            queue: Vec::new(),
            handlers: HashMap::new(),
            generation,
            _on_message: on_msg,
            _on_error: on_err,
        })
    });
}

/// Starts the worker; call once at start-up.
pub fn init(state: AppState) {
    STATE.with(|s| *s.borrow_mut() = Some(state));
    start_worker();
}

/// Sends `body` to the engine, with the `File` or `ArrayBuffer` it opens; `handler` gets its progress
/// and its final reply (`label` names the request in errors if the worker dies).
pub(crate) fn send(body: RequestBody, file: Option<JsValue>, label: String, handler: Handler) {
    CLIENT.with(|c| {
        let mut c = c.borrow_mut();
        let Some(c) = c.as_mut() else { return };
        let seq = NEXT_SEQ.with(|s| {
            *s.borrow_mut() += 1;
            *s.borrow()
        });
        let json = serde_json::to_string(&Request { v: VERSION, seq, body }).expect("requests serialize");
        c.handlers.insert(seq, (label, handler));
        if c.ready {
            post(&c.worker, &json, file.as_ref());
        } else {
            c.queue.push((json, file));
        }
    });
}

/// Asks the engine about an opened file (no bytes travel). `handler` gets the final reply; a reply to a
/// request the view no longer waits for is the view's to ignore.
pub(crate) fn request(body: RequestBody, label: String, handler: impl FnMut(ResponseBody) + 'static) {
    send(body, None, label, Box::new(handler));
}

/// Registers a file as loading and returns its key. A file of the same path replaces the old one;
/// files that only share a base name (the same host file in two runs) are both kept.
fn begin(state: AppState, path: &str, total: u64) -> u64 {
    let key = NEXT_KEY.with(|k| {
        let mut k = k.borrow_mut();
        *k += 1;
        *k
    });
    let replaced: Vec<u32> = state.files.with_untracked(|fs| {
        fs.iter()
            .filter(|f| f.path == path)
            .filter_map(|f| match f.status {
                FileStatus::Ready { file_id, .. } => Some(file_id),
                _ => None,
            })
            .collect()
    });
    for file_id in replaced {
        send(RequestBody::Close { file_id }, None, path.to_string(), Box::new(|_| {}));
    }
    state.files.update(|fs| {
        fs.retain(|f| f.path != path);
        fs.push(LoadedFile { key, path: path.to_string(), status: FileStatus::Loading { read: 0, decoded: 0, total } });
    });
    if state.selected.get_untracked().is_none() {
        state.selected.set(Some(path.to_string()));
    }
    key
}

/// Sends `file` (a `File`, which the worker reads, or bytes already read) of `total` bytes to the
/// engine and follows the file's progress (read, then decoded) to its overview or error.
fn decode(state: AppState, key: u64, path: &str, file: JsValue, total: u64) {
    let label = path.to_string();
    send(
        RequestBody::Open { path: path.to_string() },
        Some(file),
        path.to_string(),
        Box::new(move |body| match body {
            ResponseBody::Read { done, total: t } => {
                let read = done.saturating_mul(total).checked_div(t).unwrap_or(total);
                state.update_file(key, FileStatus::Loading { read, decoded: 0, total });
            }
            ResponseBody::Progress { done, total: t } => {
                let decoded = done.saturating_mul(total).checked_div(t).unwrap_or(total);
                state.update_file(key, FileStatus::Loading { read: total, decoded, total });
            }
            ResponseBody::Opened { file_id, overview: details } => {
                land(state, &details);
                state.update_file(key, FileStatus::Ready { file_id, details: details.into() })
            }
            ResponseBody::Failed { error } => state.update_file(key, FileStatus::Failed { error }),
            ResponseBody::Rejected { message } => {
                state.update_file(key, FileStatus::Failed { error: EngineError::Unreadable { file: label.clone(), reason: message } })
            }
            // Replies to other requests are routed to their own handlers.
            _ => {}
        }),
    );
}

/// The first screen: when no tool was chosen yet and the selected file is the one that just opened,
/// the tool the engine names for it ([`first_screen::landing`]); with other files opened beside it
/// (several files, a log folder), the Overview of the newest run, with all its hosts where it has
/// several — as XProf opens a log folder.
fn land(state: AppState, details: &crate::engine::FileDetails) {
    let selected = state.selected.with_untracked(|s| s.as_deref() == Some(details.path.as_str()));
    if !state.landing_pending.get_untracked() || !selected {
        return;
    }
    let with_others = state.files.with_untracked(Vec::len) > 1;
    let tool = first_screen::landing(details, with_others);
    state.landing_pending.set(false);
    if with_others {
        land_on_newest_run(state);
    }
    state.tool.set(tool);
}

/// Selects the first host of the newest run of a log folder, and "all hosts" where that run has
/// several. Loose files (in no folder) are not one program's hosts: the first stays selected alone.
fn land_on_newest_run(state: AppState) {
    let Some((run_dir, _)) = untrack(|| state.runs()).into_iter().next().filter(|(dir, _)| !dir.is_empty()) else { return };
    let hosts = untrack(|| state.run_files(&run_dir));
    if let Some((first, _)) = hosts.first() {
        state.selected.set(Some(first.clone()));
    }
    state.all_hosts.set(hosts.len() > 1);
}

/// Opens `file` from disk: the worker reads it (with progress) and decodes it. `path` names it:
/// relative to the folder it came from, or its name. A file larger than the page can hold is refused
/// here, before anything is read.
pub fn open_file(state: AppState, file: web_sys::File, path: String) {
    let size = file.size() as u64;
    let key = begin(state, &path, size);
    if size > MAX_FILE_BYTES {
        let e = crate::decode::DecodeError::TooLarge { size_bytes: size, limit_bytes: MAX_FILE_BYTES };
        state.update_file(key, FileStatus::Failed { error: EngineError::decode(&path, &e) });
        return;
    }
    decode(state, key, &path, file.into(), size);
}

/// Opens bytes that are already in memory (the bundled demo).
pub fn open_bytes(state: AppState, path: &str, buffer: js_sys::ArrayBuffer) {
    let total = u64::from(buffer.byte_length());
    let key = begin(state, path, total);
    decode(state, key, path, buffer.into(), total);
}

/// The bytes of a loaded file as the user opened it — or its slim copy, when `slim` and one can be made
/// (the returned flag says which) — fetched back from the engine, for a bundle.
pub async fn source(file_id: u32, label: String, slim: bool) -> Result<(js_sys::ArrayBuffer, bool), String> {
    with_bytes(RequestBody::Source { file_id, slim }, label, |body| match body {
        ResponseBody::Source { slim, .. } => Some(*slim),
        _ => None,
    })
    .await
}

/// XProf's trace JSON of the events of file `file_id` overlapping `[start_ps, end_ps]`, written by the
/// engine, for the Trace Viewer's "export visible range".
pub async fn trace_export(file_id: u32, start_ps: i64, end_ps: i64, label: String) -> Result<js_sys::ArrayBuffer, String> {
    let reply = with_bytes(request::TraceExport { file_id, start_ps, end_ps }.into(), label, |body| {
        matches!(body, ResponseBody::TraceExport { .. }).then_some(())
    });
    reply.await.map(|(bytes, ())| bytes)
}

/// Sends `body` and waits for the reply that `accept` takes (what it reads from it) and the bytes that
/// came beside it.
async fn with_bytes<T: 'static>(
    body: RequestBody,
    label: String,
    accept: fn(&ResponseBody) -> Option<T>,
) -> Result<(js_sys::ArrayBuffer, T), String> {
    let (tx, rx) = futures_channel_oneshot();
    let mut tx = Some(tx);
    send(
        body,
        None,
        label,
        Box::new(move |body| {
            let r = match (&body, accept(&body)) {
                (_, Some(t)) => reply_bytes().map(|b| (b, t)).ok_or_else(|| "the engine sent no bytes".to_string()),
                (ResponseBody::Failed { error }, None) => Err(error.detail()),
                (ResponseBody::Rejected { message }, None) => Err(message.clone()),
                _ => return,
            };
            if let Some(tx) = tx.take() {
                tx(r);
            }
        }),
    );
    rx.await
}

/// A one-shot channel on a JS promise (no extra crate): the sender resolves it once.
#[allow(clippy::type_complexity)]
fn futures_channel_oneshot<T: 'static>() -> (Box<dyn FnOnce(T)>, impl std::future::Future<Output = T>) {
    let slot: std::rc::Rc<RefCell<Option<T>>> = std::rc::Rc::new(RefCell::new(None));
    let mut resolve_fn: Option<js_sys::Function> = None;
    let promise = js_sys::Promise::new(&mut |resolve, _| resolve_fn = Some(resolve));
    let resolve_fn = resolve_fn.expect("the promise executor runs synchronously");
    let tx_slot = slot.clone();
    let tx = Box::new(move |v: T| {
        *tx_slot.borrow_mut() = Some(v);
        let _ = resolve_fn.call0(&JsValue::NULL);
    });
    let rx = async move {
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        slot.borrow_mut().take().expect("resolved after the value was set")
    };
    (tx, rx)
}
