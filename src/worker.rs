//! The engine's side of the web worker: it owns the [`Session`] and answers the page's requests
//! (see [`crate::engine::protocol`]). Messages arrive as `[request_json, ArrayBuffer | null]`; every
//! reply, progress included, is posted back as a JSON string.
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

/// Whether this wasm instance runs inside a dedicated worker.
pub fn in_worker() -> bool {
    js_sys::global().dyn_into::<DedicatedWorkerGlobalScope>().is_ok()
}

fn post(scope: &DedicatedWorkerGlobalScope, r: &Response, bytes: Option<&[u8]>) {
    match serde_json::to_string(r) {
        Ok(json) => {
            let _ = match bytes {
                // [json, ArrayBuffer], the buffer transferred rather than copied.
                Some(b) => {
                    let buf = js_sys::Uint8Array::from(b).buffer();
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

/// Installs the message handler; the worker then lives as long as the page keeps it.
pub fn run() {
    std::panic::set_hook(Box::new(on_panic));
    // The analyses' hash maps need a secret the file's author cannot know (see `fast_hash`); wasm32
    // has no randomness of its own.
    let word = || (js_sys::Math::random() * 4_294_967_296.0) as u64;
    crate::fast_hash::set_key(word() << 32 | word());
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let session = RefCell::new(Session::new());
    let reply_scope = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        // Anything but `[string, ArrayBuffer | null]` reads as an empty request, which is rejected.
        let msg = ev.data().dyn_into::<js_sys::Array>().unwrap_or_default();
        let json = msg.get(0).as_string().unwrap_or_default();
        let bytes = msg.get(1).dyn_into::<js_sys::ArrayBuffer>().ok().map(|b| js_sys::Uint8Array::new(&b).to_vec());
        let mut session = session.borrow_mut();
        CURRENT.with(|c| *c.borrow_mut() = subject(&json));
        let mut emit = |r: Response| post(&reply_scope, &r, None);
        let reply = protocol::handle(&mut session, &json, bytes, &mut emit);
        post(&reply_scope, &reply, protocol::source_bytes(&session, &reply).as_deref());
        CURRENT.with(|c| *c.borrow_mut() = None);
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    // Tell the page the engine is ready to take requests.
    let _ = scope.post_message(&JsValue::from_str("{\"ready\":true}"));
    // While the page is idle, get V8 to optimise the engine's hot code before the first real file
    // (see `engine::warmup`); requests that arrive meanwhile wait for it.
    crate::engine::warmup::run();
}
