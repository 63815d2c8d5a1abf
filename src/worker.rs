//! The engine's side of the web worker: it owns the [`Session`] and answers the page's requests
//! (see [`crate::engine::protocol`]). Messages arrive as `[request_json, ArrayBuffer | null]`; every
//! reply, progress included, is posted back as a JSON string.

use crate::engine::protocol::{self, Response};
use crate::engine::Session;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

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

/// Installs the message handler; the worker then lives as long as the page keeps it.
pub fn run() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let session = RefCell::new(Session::new());
    let reply_scope = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let msg: js_sys::Array = ev.data().unchecked_into();
        let json = msg.get(0).as_string().unwrap_or_default();
        let bytes = msg.get(1).dyn_into::<js_sys::ArrayBuffer>().ok().map(|b| js_sys::Uint8Array::new(&b).to_vec());
        let mut session = session.borrow_mut();
        let mut emit = |r: Response| post(&reply_scope, &r, None);
        let reply = protocol::handle(&mut session, &json, bytes, &mut emit);
        post(&reply_scope, &reply, protocol::source_bytes(&session, &reply).as_deref());
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    // Tell the page the engine is ready to take requests.
    let _ = scope.post_message(&JsValue::from_str("{\"ready\":true}"));
}
