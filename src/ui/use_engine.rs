//! The one way a view asks the engine: [`use_engine`], a typed request ([`Ask`]) derived from signals
//! and its reply as a signal; the request's type names the reply's, so a view cannot read another
//! request's reply. The request is the key: the tool (the request's kind), the file ids and the parameters
//! are all in it, so a view is answered again only when one of them changes, never because something
//! else on the page did. A reply to a request the view no longer wants (the key moved on, or the view
//! is gone) is dropped. Nothing is cached here: the worker keeps what is costly to compute.

use super::engine_client;
use crate::engine::protocol::request::Ask;
use crate::engine::protocol::ResponseBody;
use crate::engine::EngineError;
use leptos::prelude::*;

/// A request's answer as a view draws it.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply<T> {
    /// Nothing asked (the request function returned `None`), or the answer is on its way.
    Waiting,
    Ready(T),
    /// The engine could not answer; the error says why, in words and as a kind.
    Failed(EngineError),
    /// The worker refused the request itself (a version mismatch), or answered with another kind.
    Rejected(String),
}

impl<T> Reply<T> {
    /// The reply with its payload turned into what a view draws.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Reply<U> {
        match self {
            Reply::Waiting => Reply::Waiting,
            Reply::Ready(t) => Reply::Ready(f(t)),
            Reply::Failed(e) => Reply::Failed(e),
            Reply::Rejected(m) => Reply::Rejected(m),
        }
    }

    pub fn ready(&self) -> Option<&T> {
        match self {
            Reply::Ready(t) => Some(t),
            _ => None,
        }
    }
}

/// A request's reply and how long the engine took to give it.
pub struct Fetch<T: Send + Sync + 'static> {
    pub reply: ReadSignal<Reply<T>>,
    /// From sending the request to its reply, in ms (the page shows it beside the figures).
    pub elapsed_ms: ReadSignal<Option<f64>>,
}

impl<T: Send + Sync + 'static> Clone for Fetch<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Send + Sync + 'static> Copy for Fetch<T> {}

/// Sends `request()` whenever it changes (it is read in a memo, so an equal request is not sent
/// again) and returns its reply. `label` names the request in errors should the worker stop.
pub fn use_engine<R: Ask>(label: &'static str, request: impl Fn() -> Option<R> + Send + Sync + 'static) -> Fetch<R::Reply> {
    let key = Memo::new(move |_| request());
    let (reply, set_reply) = signal(Reply::Waiting);
    let (elapsed_ms, set_elapsed_ms) = signal(None);
    // Counts requests sent by this hook: only the latest one's reply is taken.
    let generation = StoredValue::new(0u64);
    Effect::new(move |_| {
        let Some(request) = key.get() else {
            set_reply.set(Reply::Waiting);
            return;
        };
        let g = generation.get_value() + 1;
        generation.set_value(g);
        set_reply.set(Reply::Waiting);
        let sent_ms = crate::ui::charts::now_ms();
        engine_client::request(request.into(), label.to_string(), move |response| {
            if generation.try_get_value() != Some(g) {
                return; // a newer request is on its way, or the view is gone
            }
            set_elapsed_ms.try_set(Some(crate::ui::charts::now_ms() - sent_ms));
            let next = read::<R>(response);
            set_reply.try_set(next);
        });
    });
    Fetch { reply, elapsed_ms }
}

/// `response` read as request `R`'s reply, with the bytes that came beside it (the Trace Viewer's
/// spans, copied into wasm memory).
pub fn read<R: Ask>(response: ResponseBody) -> Reply<R::Reply> {
    match response {
        ResponseBody::Failed { error } => Reply::Failed(error),
        ResponseBody::Rejected { message } => Reply::Rejected(message),
        other => {
            let beside = engine_client::reply_bytes().map(|b| js_sys::Uint8Array::new(&b).to_vec());
            match R::reply(other, beside.as_deref()) {
                Some(t) => Reply::Ready(t),
                None => Reply::Rejected("the engine's reply could not be read as this request's".into()),
            }
        }
    }
}
