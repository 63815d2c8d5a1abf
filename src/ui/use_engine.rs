//! The one way a view asks the engine: [`use_engine`], a request derived from signals and its reply
//! as a signal. The request is the key: the tool (the request's kind), the file ids and the parameters
//! are all in it, so a view is answered again only when one of them changes, never because something
//! else on the page did. A reply to a request the view no longer wants (the key moved on, or the view
//! is gone) is dropped. Nothing is cached here: the worker keeps what is costly to compute.

use super::engine_client;
use crate::engine::protocol::{RequestBody, ResponseBody};
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
/// again) and returns its reply; `read` takes the reply's payload out of the response. `label` names
/// the request in errors should the worker stop.
pub fn use_engine<T: Clone + Send + Sync + 'static>(
    label: &'static str,
    request: impl Fn() -> Option<RequestBody> + Send + Sync + 'static,
    read: fn(ResponseBody) -> Option<T>,
) -> Fetch<T> {
    let key = Memo::new(move |_| request());
    let (reply, set_reply) = signal(Reply::Waiting);
    let (elapsed_ms, set_elapsed_ms) = signal(None);
    // Counts requests sent by this hook: only the latest one's reply is taken.
    let generation = StoredValue::new(0u64);
    Effect::new(move |_| {
        let Some(body) = key.get() else {
            set_reply.set(Reply::Waiting);
            return;
        };
        let g = generation.get_value() + 1;
        generation.set_value(g);
        set_reply.set(Reply::Waiting);
        let sent_ms = crate::ui::charts::now_ms();
        engine_client::request(body, label.to_string(), move |response| {
            if generation.try_get_value() != Some(g) {
                return; // a newer request is on its way, or the view is gone
            }
            set_elapsed_ms.try_set(Some(crate::ui::charts::now_ms() - sent_ms));
            let next = match response {
                ResponseBody::Failed { error } => Reply::Failed(error),
                ResponseBody::Rejected { message } => Reply::Rejected(message),
                other => match read(other) {
                    Some(t) => Reply::Ready(t),
                    None => Reply::Rejected("the engine answered with a reply of another kind".into()),
                },
            };
            set_reply.try_set(next);
        });
    });
    Fetch { reply, elapsed_ms }
}
