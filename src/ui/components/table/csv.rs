//! CSV export of a table's rows: RFC 4180 quoting and a download that stays on the page.

use wasm_bindgen::JsCast;

/// `s` as one CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Offers `text` as a file download named `file_name`, without leaving the page.
pub fn download(file_name: &str, text: &str, mime: &str) -> Result<(), wasm_bindgen::JsValue> {
    download_part(file_name, &text.into(), mime)
}

/// Offers `part` (a string, an `ArrayBuffer`: anything a `Blob` is made of) as a file download.
pub fn download_part(file_name: &str, part: &wasm_bindgen::JsValue, mime: &str) -> Result<(), wasm_bindgen::JsValue> {
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&js_sys::Array::of1(part), &opts)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let doc = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc.create_element("a")?.dyn_into().map_err(|_| "no anchor")?;
    a.set_href(&url);
    a.set_download(file_name);
    a.click();
    web_sys::Url::revoke_object_url(&url)
}
