//! The engine's side of the web worker: it owns the [`Session`] and answers the page's requests
//! (see [`crate::engine::protocol`]). Messages arrive as `[request_json, File | ArrayBuffer | null]`;
//! every reply, progress included, is posted back as a JSON string.
//!
//! A `File` (any `Blob`) is read here, in slices, synchronously: the worker may block while it reads,
//! the page never does. Each slice is copied into the engine's one buffer for the file as it arrives
//! ([`crate::decode::stream`]); no copy of the whole file is ever made on the JavaScript side.
//!
//! The session holds one such trace at a time ([`crate::engine::residency`]): every `File` is kept,
//! and a request that needs a released file's bytes has it read again, the same way, before it is
//! answered.
//!
//! If the engine panics anyway (a bug no test found), the panic hook first answers the request being
//! served with a `failed` reply naming its file and the panic, so the page can say which file broke
//! the engine; the trap that follows ends the worker, and the page starts a fresh one.

use crate::engine::protocol::{self, Request, RequestBody, Response, ResponseBody, VERSION};
use crate::engine::{EngineError, Session};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

thread_local! {
    /// The request being served (sequence number, file it is about), for the panic hook.
    static CURRENT: RefCell<Option<(u64, String)>> = const { RefCell::new(None) };
}

fn post(scope: &DedicatedWorkerGlobalScope, r: &Response, bytes: Option<js_sys::ArrayBuffer>) {
    match serde_json::to_string(r) {
        Ok(json) => {
            let _ = match bytes {
                // [json, ArrayBuffer], the buffer transferred rather than copied.
                Some(buf) => {
                    let msg = js_sys::Array::of2(&JsValue::from_str(&json), &buf);
                    scope.post_message_with_transfer(&msg, &js_sys::Array::of1(&buf))
                }
                None => scope.post_message(&JsValue::from_str(&json)),
            };
        }
        Err(e) => web_sys::console::error_1(&format!("tidemark worker: cannot encode reply: {e}").into()),
    }
}

/// What a request is about, in the words of a banner: the file it opens, else its sequence number.
fn subject(json: &str) -> Option<(u64, String)> {
    let req: Request = serde_json::from_str(json).ok()?;
    let subject = match &req.body {
        RequestBody::Open { path } => path.clone(),
        _ => format!("request #{}", req.seq),
    };
    Some((req.seq, subject))
}

/// A panic's message, for the page's banners (the page's own hook uses it too).
pub fn panic_message(info: &std::panic::PanicHookInfo) -> String {
    info.payload()
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Logs the panic to the console (with its stack) and fails the request being served with it.
fn on_panic(info: &std::panic::PanicHookInfo) {
    console_error_panic_hook::hook(info);
    let Some((seq, file)) = CURRENT.with(|c| c.try_borrow().ok().and_then(|c| c.clone())) else { return };
    let what = panic_message(info);
    let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
    let error = EngineError::EngineStopped {
        file,
        reason: format!("{what}{place}"),
        then: "this is a bug in Tidemark: please report it, with the file if you can. The engine has been restarted; other files are unaffected".into(),
    };
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    post(&scope, &Response { v: VERSION, seq, body: ResponseBody::Failed { error } }, None);
}

/// A `Blob` read front to back in slices of the size asked for, each read synchronously
/// (`FileReaderSync`, which only a worker has) and copied into the engine's buffer.
struct BlobReader {
    blob: web_sys::Blob,
    at: f64,
}

impl BlobReader {
    fn size_bytes(&self) -> u64 {
        self.blob.size() as u64
    }

    /// The blob's bytes `start..end`, as a view of a buffer of their own.
    fn slice(&self, start: f64, end: f64) -> std::io::Result<js_sys::Uint8Array> {
        let failed =
            |e: JsValue| std::io::Error::other(format!("the browser could not read the file (was it moved, deleted or changed?): {e:?}"));
        let slice = self.blob.slice_with_f64_and_f64(start, end).map_err(failed)?;
        let bytes = web_sys::FileReaderSync::new().and_then(|r| r.read_as_array_buffer(&slice)).map_err(failed)?;
        Ok(js_sys::Uint8Array::new(&bytes))
    }

    /// The blob's last four bytes (where a gzip file states its inflated size), if it has four.
    fn last4(&self) -> Option<[u8; 4]> {
        let size = self.blob.size();
        if size < 4.0 {
            return None;
        }
        let view = self.slice(size - 4.0, size).ok()?;
        let mut last4 = [0u8; 4];
        (view.length() == 4).then(|| view.copy_to(&mut last4)).map(|()| last4)
    }
}

impl std::io::Read for BlobReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let end = (self.at + buf.len() as f64).min(self.blob.size());
        if buf.is_empty() || end <= self.at {
            return Ok(0);
        }
        let view = self.slice(self.at, end)?;
        let n = view.length() as usize;
        if n == 0 || n > buf.len() {
            return Err(std::io::Error::other("the file changed while it was being read"));
        }
        view.copy_to(&mut buf[..n]);
        self.at += n as f64;
        Ok(n)
    }
}

/// Installs the message handler; the worker then lives as long as the page keeps it. The engine's wasm
/// entry point (src/bin/tidemark-engine.rs).
pub fn run() {
    std::panic::set_hook(Box::new(on_panic));
    // The analyses' hash maps need a secret the file's author cannot know (see `fast_hash`); wasm32
    // has no randomness of its own.
    let word = || (js_sys::Math::random() * 4_294_967_296.0) as u64;
    crate::fast_hash::set_key(word() << 32 | word());
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    // One trace's bytes at a time: a log folder of many large hosts would not fit in wasm memory
    // (see `engine::residency`); a released file is read again from its `File`. A trace's Memory
    // Profile waits until a tool asks for it, as in the CLI.
    let session = RefCell::new(Session::holding_one_trace());
    // The files opened from a `File`, by file id: read again when a tool needs a released one, and
    // for a gzipped file (the engine keeps its inflated bytes only), when a bundle embeds it as the
    // user opened it.
    let opened_files = RefCell::new(std::collections::HashMap::<u32, web_sys::Blob>::new());
    let reply_scope = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        // Anything but `[string, ArrayBuffer | null]` reads as an empty request, which is rejected.
        let msg = ev.data().dyn_into::<js_sys::Array>().unwrap_or_default();
        let json = msg.get(0).as_string().unwrap_or_default();
        let mut session = session.borrow_mut();
        CURRENT.with(|c| *c.borrow_mut() = subject(&json));
        let mut emit = |r: Response| post(&reply_scope, &r, None);
        let mut opened_files = opened_files.borrow_mut();
        let protocol::Answered { response: reply, beside } = match msg.get(1).dyn_into::<web_sys::Blob>() {
            Ok(blob) => {
                let mut reader = BlobReader { blob, at: 0.0 };
                let (size_bytes, last4) = (reader.size_bytes(), reader.last4());
                let reply = protocol::handle_open_stream(&mut session, &json, size_bytes, last4, &mut reader, &mut emit);
                if let ResponseBody::Opened { file_id, .. } = &reply.body {
                    opened_files.insert(*file_id, reader.blob);
                }
                protocol::Answered { response: reply, beside: None }
            }
            Err(other) => {
                let bytes = other.dyn_into::<js_sys::ArrayBuffer>().ok().map(|b| js_sys::Uint8Array::new(&b).to_vec());
                let mut reread = |session: &mut Session, file_id: u32| {
                    let blob = opened_files.get(&file_id).cloned().ok_or(EngineError::UnknownFile { file_id })?;
                    let mut reader = BlobReader { blob, at: 0.0 };
                    let (size_bytes, last4) = (reader.size_bytes(), reader.last4());
                    let source = crate::decode::stream::Source { size_bytes, last4, reader: &mut reader };
                    session.reread_stream(file_id, source, &mut |_, _| {})
                };
                protocol::answer_rereading(&mut session, &json, bytes, &mut emit, &mut reread)
            }
        };
        if let ResponseBody::Closed { file_id } = &reply.body {
            opened_files.remove(file_id);
        }
        // A gzipped file goes into a bundle as it was opened (read again), else as the engine holds it.
        let as_opened = match &reply.body {
            ResponseBody::Source { file_id, slim: false, .. } if session.overview(*file_id).is_ok_and(|o| o.gzipped) => {
                opened_files.get(file_id)
            }
            _ => None,
        };
        let bytes = as_opened
            .and_then(|blob| BlobReader { blob: blob.clone(), at: 0.0 }.slice(0.0, blob.size()).ok())
            .map(|v| v.buffer())
            .or_else(|| beside.map(|b| js_sys::Uint8Array::from(&b[..]).buffer()))
            .or_else(|| protocol::source_bytes(&session, &reply).map(|b| js_sys::Uint8Array::from(b.as_ref()).buffer()));
        post(&reply_scope, &reply, bytes);
        CURRENT.with(|c| *c.borrow_mut() = None);
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    // Tell the page the engine is ready to take requests.
    post(&scope, &Response { v: VERSION, seq: 0, body: ResponseBody::Ready }, None);
    // While the page is idle, get V8 to optimise the engine's hot code before the first real file
    // (see `engine::warmup`); requests that arrive meanwhile wait for it.
    crate::engine::warmup::run();
}
