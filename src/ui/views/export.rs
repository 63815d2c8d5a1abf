//! "Export offline HTML": one file holding the app and the loaded profiles, which a teammate opens from
//! disk with no server and no network and sees this same view. The bundle is built by the engine's
//! [`crate::engine::bundle`], the same code as `tidemark bundle`.

use crate::engine::bundle::{self, Assets};
use crate::ui::components::metric::Bytes;
use crate::ui::engine_client;
use crate::ui::state::AppState;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// A prepared bundle, ready to download.
#[derive(Clone)]
struct Prepared {
    html: std::rc::Rc<String>,
    app_bytes: u64,
    profile_bytes: u64,
    files: usize,
}

/// The full bundle, and the slim one when it is much smaller (see `engine::slim`).
#[derive(Clone)]
struct Choices {
    full: Prepared,
    slim: Option<Prepared>,
}

async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp: web_sys::Response = JsFuture::from(window.fetch_with_str(url)).await.map_err(|e| format!("{url}: {e:?}"))?.unchecked_into();
    if !resp.ok() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    let buf = JsFuture::from(resp.array_buffer().map_err(|e| format!("{e:?}"))?).await.map_err(|e| format!("{e:?}"))?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

/// The app's own assets: from the server it was loaded from, or from the bundle it runs in.
async fn own_assets() -> Result<Assets, String> {
    if let Some(boot) = engine_client::bundle() {
        let get = |k: &str| js_sys::Reflect::get(&boot, &k.into()).map_err(|e| format!("{e:?}"));
        let css = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.query_selector("style").ok().flatten())
            .and_then(|s| s.text_content())
            .unwrap_or_default();
        let bytes = |k: &str| get(k).map(|v| js_sys::Uint8Array::new(&v).to_vec());
        return Ok(Assets {
            js: bytes("js")?,
            wasm: bytes("wasm")?,
            engine_js: bytes("engineJs")?,
            engine_wasm: bytes("engineWasm")?,
            css: css.into_bytes(),
        });
    }
    Ok(Assets {
        js: fetch_bytes(&format!("./{}", bundle::JS_NAME)).await?,
        wasm: fetch_bytes(&format!("./{}", bundle::WASM_NAME)).await?,
        engine_js: fetch_bytes(&format!("./{}", bundle::ENGINE_JS_NAME)).await?,
        engine_wasm: fetch_bytes(&format!("./{}", bundle::ENGINE_WASM_NAME)).await?,
        css: fetch_bytes(&format!("./{}", bundle::CSS_NAME)).await?,
    })
}

fn assemble(assets: &Assets, sources: &[(String, Vec<u8>)], hash: &str) -> Prepared {
    let profiles: Vec<bundle::Profile> = sources.iter().map(|(name, bytes)| bundle::Profile { name, bytes }).collect();
    let html = bundle::build(assets, &profiles, hash);
    // As embedded: base64 for the glue and wasm, CSS as text; the rest is the profiles (and a little markup).
    let b64 = |n: usize| n.div_ceil(3) as u64 * 4;
    let app_bytes = [&assets.js, &assets.wasm, &assets.engine_js, &assets.engine_wasm].into_iter().map(|a| b64(a.len())).sum::<u64>()
        + assets.css.len() as u64;
    Prepared {
        app_bytes,
        profile_bytes: (html.len() as u64).saturating_sub(app_bytes),
        files: profiles.len(),
        html: std::rc::Rc::new(html),
    }
}

async fn prepare(state: AppState) -> Result<Choices, String> {
    let assets = own_assets().await?;
    let loaded = untrack(|| state.ready_files());
    if loaded.is_empty() {
        return Err("no profile is loaded: open one first".into());
    }
    let (mut full, mut slim, mut any_slim) = (Vec::new(), Vec::new(), false);
    for (id, name) in &loaded {
        let (buf, _) = engine_client::source(*id, name.clone(), false).await?;
        full.push((name.clone(), js_sys::Uint8Array::new(&buf).to_vec()));
        let (buf, slimmed) = engine_client::source(*id, name.clone(), true).await?;
        any_slim |= slimmed;
        slim.push((name.clone(), js_sys::Uint8Array::new(&buf).to_vec()));
    }
    let hash = web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default();
    let full = assemble(&assets, &full, &hash);
    // Offered only when its profiles are much smaller (the app, the same in both, does not count):
    // otherwise the full profiles are the better thing to share.
    let slim = any_slim.then(|| assemble(&assets, &slim, &hash)).filter(|s| s.profile_bytes * 2 < full.profile_bytes);
    Ok(Choices { full, slim })
}

fn download(html: &str, name: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(html));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type("text/html");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag).map_err(|e| format!("{e:?}"))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| format!("{e:?}"))?;
    let doc = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc.create_element("a").map_err(|e| format!("{e:?}"))?.unchecked_into();
    a.set_href(&url);
    a.set_download(name);
    a.click();
    Ok(())
}

/// The export dialog: prepares the bundle, says its size (warning when it is large, offering the slim
/// copy when that is much smaller), downloads it.
#[component]
pub fn ExportDialog(
    /// Whether the dialog is open.
    open: RwSignal<bool>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let prepared: RwSignal<Option<Result<Choices, String>>, LocalStorage> = RwSignal::new_local(None);
    let use_slim = RwSignal::new(false);
    Effect::new(move |_| {
        if open.get() {
            prepared.set(None);
            wasm_bindgen_futures::spawn_local(async move {
                let p = prepare(state).await;
                // Large and much smaller when slim: slim is the better default.
                use_slim.set(matches!(&p, Ok(c) if c.slim.is_some() && c.full.html.len() as u64 > bundle::LARGE_BUNDLE_BYTES));
                prepared.set(Some(p));
            });
        }
    });
    let file_name = move || {
        let selected = state.selected.get_untracked().unwrap_or_else(|| "profile".into());
        let base = crate::engine::file_details::base_name(&selected).split('.').next().unwrap_or("profile").to_string();
        format!("tidemark-{base}.html")
    };
    view! {
        <Show when=move || open.get()>
            <div class="modal-backdrop" on:click=move |_| open.set(false)></div>
            <div class="modal" role="dialog" aria-label="Export offline HTML" data-testid="export-dialog">
                <h2>"Export offline HTML"</h2>
                <p class="muted">"One .html file with the app and the loaded profiles (compressed). It opens from disk — no server, no network — and shows this view."</p>
                {move || match prepared.get() {
                    None => view! { <p class="muted">"Preparing…"</p> }.into_any(),
                    Some(Err(e)) => view! { <p class="banner error">{e}</p> }.into_any(),
                    Some(Ok(c)) => {
                        let large = c.full.html.len() as u64 > bundle::LARGE_BUNDLE_BYTES;
                        let (full_html, slim_html) = (c.full.html.clone(), c.slim.as_ref().map(|s| s.html.clone()));
                        view! {
                            <table class="grid">
                                <tr><td>"Bundle size"</td><td class="r"><Bytes metric="bundle_bytes" value=c.full.html.len() as i64 /></td></tr>
                                <tr><td>"App (wasm, JS, CSS)"</td><td class="r"><Bytes metric="bundle_app_bytes" value=c.full.app_bytes as i64 /></td></tr>
                                <tr><td>{format!("Profiles ({}, compressed)", c.full.files)}</td><td class="r"><Bytes metric="bundle_profile_bytes" value=c.full.profile_bytes as i64 /></td></tr>
                            </table>
                            {large.then(|| view! {
                                <p class="banner warn" data-testid="bundle-large">
                                    "This bundle is large for e-mail. Remove files you do not need from the file list (×) before exporting, or share the slim copy."
                                </p>
                            })}
                            {c.slim.as_ref().map(|s| view! {
                                <label class="field check slim-choice">
                                    <input type="checkbox" data-testid="export-slim" prop:checked=move || use_slim.get() on:change=move |ev| use_slim.set(event_target_checked(&ev)) />
                                    "Slim copy: "
                                    <Bytes metric="slim_bundle_bytes" value=s.html.len() as i64 />
                                    " — drops the trace lines no memory tool reads (Python tracer, host threads without allocator events); every figure of the memory tools is kept"
                                </label>
                            })}
                            <p class="actions">
                                <button class="btn primary" data-testid="export-download" on:click=move |_| {
                                    let html = match (&slim_html, use_slim.get_untracked()) {
                                        (Some(s), true) => s.clone(),
                                        _ => full_html.clone(),
                                    };
                                    if let Err(e) = download(&html, &file_name()) {
                                        state.alerts.update(|a| a.push(format!("The bundle could not be saved: {e}")));
                                    }
                                    open.set(false);
                                }>"Download"</button>
                                " "
                                <button class="btn" on:click=move |_| open.set(false)>"Cancel"</button>
                            </p>
                        }.into_any()
                    }
                }}
            </div>
        </Show>
    }
}
