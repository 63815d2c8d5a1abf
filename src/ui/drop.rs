//! Turning what the user dropped or picked — files, several files, whole folders — into files to open.
//! Folders are walked recursively and only files named like profiles are taken, so dropping a
//! TensorBoard run folder opens its `*.xplane.pb` and skips XProf's JSON outputs beside them.
//!
//! Each file is named by its path relative to what was opened: `logs/run1/host.xplane.pb` for a
//! dropped or picked folder `logs`, the file name for a dropped or picked file. Runs repeat host file
//! names, so the base name alone would make one run's file replace another's.

use super::engine_client;
use super::state::AppState;
use crate::decode::sniff::is_profile_name;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{FileSystemDirectoryEntry, FileSystemEntry, FileSystemFileEntry};

/// Opens every file of a `FileList` (file picker, folder picker, or a drop without entries).
/// Explicitly chosen single files are opened whatever their name; files of a folder are filtered.
pub fn open_list(state: AppState, list: &web_sys::FileList, from_folder: bool) {
    let mut files: Vec<(String, web_sys::File)> = (0..list.length()).filter_map(|i| list.get(i)).map(|f| (relative_path(&f), f)).collect();
    if from_folder {
        files.retain(|(_, f)| is_profile_name(&f.name()));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, f) in files {
        engine_client::open_file(state, f, path);
    }
}

/// A picked file's path inside the picked folder (`webkitRelativePath`), else its name.
fn relative_path(file: &web_sys::File) -> String {
    js_sys::Reflect::get(file, &"webkitRelativePath".into())
        .ok()
        .and_then(|p| p.as_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| file.name())
}

/// Handles a drop: entries are taken synchronously (the DataTransfer is emptied after the event).
pub fn open_drop(state: AppState, ev: &web_sys::DragEvent) {
    let Some(dt) = ev.data_transfer() else { return };
    let items = dt.items();
    let entries: Vec<FileSystemEntry> =
        (0..items.length()).filter_map(|i| items.get(i)).filter_map(|it| it.webkit_get_as_entry().ok().flatten()).collect();
    if entries.is_empty() {
        if let Some(list) = dt.files() {
            open_list(state, &list, false);
        }
        return;
    }
    let single = entries.len() == 1;
    for e in entries {
        walk(state, e, !single);
    }
}

fn walk(state: AppState, entry: FileSystemEntry, filter: bool) {
    if entry.is_directory() {
        read_dir(state, entry.unchecked_into::<FileSystemDirectoryEntry>().create_reader());
    } else if !filter || is_profile_name(&entry.name()) {
        // `fullPath` is the path inside the drop, from `/`.
        let path = entry.full_path().trim_start_matches('/').to_string();
        let path = if path.is_empty() { entry.name() } else { path };
        let cb = Closure::once_into_js(move |file: web_sys::File| engine_client::open_file(state, file, path));
        entry.unchecked_into::<FileSystemFileEntry>().file_with_callback(cb.unchecked_ref());
    }
}

/// `readEntries` answers in batches until it answers an empty one.
fn read_dir(state: AppState, reader: web_sys::FileSystemDirectoryReader) {
    let again = reader.clone();
    let cb = Closure::once_into_js(move |batch: js_sys::Array| {
        if batch.length() == 0 {
            return;
        }
        let mut entries: Vec<FileSystemEntry> = batch.iter().map(|e| e.unchecked_into()).collect();
        entries.sort_by_key(|e| e.name());
        for e in entries {
            walk(state, e, true);
        }
        read_dir(state, again);
    });
    let _ = reader.read_entries_with_callback(cb.unchecked_ref());
}

/// Loads the demo profiles shipped in `demo/` (listed in `demo/manifest.json`).
pub fn open_demo(state: AppState) {
    wasm_bindgen_futures::spawn_local(async move {
        if let Err(e) = fetch_demo(state).await {
            state.alerts.update(|a| a.push(format!("The demo profiles could not be loaded: {e}")));
        }
    });
}

async fn fetch_bytes(url: &str) -> Result<js_sys::ArrayBuffer, String> {
    use wasm_bindgen_futures::JsFuture;
    let window = web_sys::window().ok_or("no window")?;
    let resp: web_sys::Response = JsFuture::from(window.fetch_with_str(url)).await.map_err(|e| format!("{url}: {e:?}"))?.unchecked_into();
    if !resp.ok() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    let buf = JsFuture::from(resp.array_buffer().map_err(|e| format!("{e:?}"))?).await.map_err(|e| format!("{e:?}"))?;
    Ok(buf.unchecked_into())
}

async fn fetch_demo(state: AppState) -> Result<(), String> {
    let manifest = fetch_bytes("./demo/manifest.json").await?;
    let text = String::from_utf8_lossy(&js_sys::Uint8Array::new(&manifest).to_vec()).into_owned();
    #[derive(serde::Deserialize)]
    struct Manifest {
        files: Vec<String>,
    }
    let m: Manifest = serde_json::from_str(&text).map_err(|e| format!("demo/manifest.json: {e}"))?;
    for name in m.files {
        let buf = fetch_bytes(&format!("./demo/{name}")).await?;
        engine_client::open_bytes(state, &name, buf);
    }
    Ok(())
}

/// Opens the profiles embedded in an offline bundle (see `engine::bundle`).
pub fn open_embedded(state: AppState, boot: &JsValue) {
    let Ok(profiles) = js_sys::Reflect::get(boot, &"profiles".into()) else { return };
    for p in js_sys::Array::from(&profiles).iter() {
        let name = js_sys::Reflect::get(&p, &"name".into()).ok().and_then(|n| n.as_string()).unwrap_or_default();
        if let Some(buf) = js_sys::Reflect::get(&p, &"bytes".into()).ok().and_then(|b| b.dyn_into::<js_sys::ArrayBuffer>().ok()) {
            engine_client::open_bytes(state, &name, buf);
        }
    }
}
