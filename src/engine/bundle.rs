//! The offline bundle: one self-contained `.html` file holding the app (both wasm modules, their JS glue, CSS) and the
//! profiles, gzip-compressed, with the view to restore. Opened from disk — `file://`, no network, no
//! server — it starts, loads its embedded profiles and shows the saved view.
//!
//! Built here, in plain Rust, so the page (export button) and the CLI (`tidemark bundle`) make the same
//! file. Everything binary is base64 inside inert `<script type="application/octet-stream">` elements:
//! nothing embedded can close the element or run.

use serde::Serialize;
use std::io::Write;

/// The page's own built assets, as Trunk writes them to `dist/`: two wasm modules, each with its
/// wasm-bindgen glue (an ES module), and the style sheet.
pub struct Assets {
    /// `tidemark-web.js`: the page's glue.
    pub js: Vec<u8>,
    /// `tidemark-web_bg.wasm`: the page (the UI).
    pub wasm: Vec<u8>,
    /// `tidemark-engine.js`: the engine worker's glue.
    pub engine_js: Vec<u8>,
    /// `tidemark-engine_bg.wasm`: the engine, which the worker runs.
    pub engine_wasm: Vec<u8>,
    /// `app.css`.
    pub css: Vec<u8>,
}

/// File names of the assets in `dist/`.
pub const JS_NAME: &str = "tidemark-web.js";
pub const WASM_NAME: &str = "tidemark-web_bg.wasm";
pub const ENGINE_JS_NAME: &str = "tidemark-engine.js";
pub const ENGINE_WASM_NAME: &str = "tidemark-engine_bg.wasm";
pub const CSS_NAME: &str = "app.css";

/// One profile to embed, as the user opened it.
pub struct Profile<'a> {
    pub name: &'a str,
    pub bytes: &'a [u8],
}

/// Above this a bundle is unwieldy to mail; the page warns before exporting.
pub const LARGE_BUNDLE_BYTES: u64 = 25 << 20;

/// No network at all: scripts only inline or from the bundle's own blob: URLs.
const CSP: &str = "default-src 'none'; script-src 'unsafe-inline' blob: 'wasm-unsafe-eval'; worker-src blob:; \
style-src 'unsafe-inline'; img-src data: blob:; connect-src blob: data:; object-src 'none'; base-uri 'none'; form-action 'none'";

/// The boot script: decodes the embedded app, records the engine's module, the profiles and the view for
/// the app to find (`window.__tidemarkBundle`; the page starts the engine's worker from it), restores the
/// view into the URL hash and starts the page.
const BOOT: &str = r#"
const text = (id) => document.getElementById(id).textContent;
const bytes = (b64) => { const s = atob(b64); const a = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) a[i] = s.charCodeAt(i); return a; };
const js = bytes(text('tm-js'));
const glue = URL.createObjectURL(new Blob([js], { type: 'text/javascript' }));
const wasm = bytes(text('tm-wasm'));
const meta = JSON.parse(text('tm-meta'));
const profiles = meta.profiles.map((p) => ({ name: p.name, bytes: bytes(text(p.id)).buffer }));
window.__tidemarkBundle = {
  js, wasm: wasm.slice(), engineJs: bytes(text('tm-engine-js')), engineWasm: bytes(text('tm-engine-wasm')), profiles, hash: meta.hash,
};
// In a notebook's output (an about:srcdoc frame) the URL cannot be written: the app reads the view from
// window.__tidemarkBundle.hash there.
if (!location.hash && meta.hash) { try { history.replaceState(null, '', meta.hash); } catch (e) {} }
const app = await import(glue);
await app.default({ module_or_path: wasm });
"#;

/// Standard base64 (RFC 4648) with padding, which the browser's `atob` reads.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 { T[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if c.len() > 2 { T[n as usize & 63] as char } else { '=' });
    }
    out
}

/// The profile as stored in the bundle: gzip-compressed (kept as is when it already was).
pub fn compress(bytes: &[u8]) -> Vec<u8> {
    if crate::decode::gzip::is_gzip(bytes) {
        return bytes.to_vec();
    }
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).and_then(|_| e.finish()).expect("writing to a Vec cannot fail")
}

/// Text safe inside an HTML element or a double-quoted attribute.
pub(crate) fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Percent-encodes a URL-hash value the way `encodeURIComponent` does, so the page reads it back.
pub fn encode_component(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The URL hash of a view: `#tool=…&file=…` plus any further `key=value` the tool uses.
pub fn view_hash(pairs: &[(&str, &str)]) -> String {
    let parts: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={}", encode_component(v))).collect();
    format!("#{}", parts.join("&"))
}

#[derive(Serialize)]
struct Meta<'a> {
    profiles: Vec<MetaProfile<'a>>,
    hash: &'a str,
}

#[derive(Serialize)]
struct MetaProfile<'a> {
    name: &'a str,
    id: String,
}

/// Builds the bundle. `profiles` are embedded compressed; `hash` is the view to restore.
pub fn build(assets: &Assets, profiles: &[Profile], hash: &str) -> String {
    let names: Vec<&str> = profiles.iter().map(|p| p.name).collect();
    let meta =
        Meta { profiles: profiles.iter().enumerate().map(|(i, p)| MetaProfile { name: p.name, id: format!("tm-p{i}") }).collect(), hash };
    // JSON inside a script element: `<` is escaped so no name can close the element.
    let meta_json = serde_json::to_string(&meta).expect("meta serializes").replace('<', "\\u003c");
    let mut html = String::new();
    html.push_str("<!doctype html>\n<html lang=\"en\" data-theme=\"light\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html.push_str(&format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"));
    html.push_str(&format!("<title>Tidemark — {}</title>\n", escape_html(&names.join(", "))));
    html.push_str("<link rel=\"icon\" href=\"data:,\">\n<style>\n");
    html.push_str(&String::from_utf8_lossy(&assets.css).replace("</", "<\\/"));
    html.push_str("\n</style>\n</head>\n<body>\n<noscript>Tidemark needs JavaScript and WebAssembly.</noscript>\n");
    let blob = |id: &str, data: &[u8]| format!("<script type=\"application/octet-stream\" id=\"{id}\">{}</script>\n", base64(data));
    html.push_str(&blob("tm-js", &assets.js));
    html.push_str(&blob("tm-wasm", &assets.wasm));
    html.push_str(&blob("tm-engine-js", &assets.engine_js));
    html.push_str(&blob("tm-engine-wasm", &assets.engine_wasm));
    for (i, p) in profiles.iter().enumerate() {
        html.push_str(&blob(&format!("tm-p{i}"), &compress(p.bytes)));
    }
    html.push_str(&format!("<script type=\"application/json\" id=\"tm-meta\">{meta_json}</script>\n"));
    html.push_str(&format!("<script type=\"module\">{BOOT}</script>\n</body>\n</html>\n"));
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn hostile_names_cannot_escape() {
        let assets = Assets {
            js: b"x".to_vec(),
            wasm: vec![0],
            engine_js: b"y".to_vec(),
            engine_wasm: vec![1],
            css: b"a{}</style><script>".to_vec(),
        };
        let html = build(&assets, &[Profile { name: "</script><script>alert(1)</script>", bytes: b"p" }], "#tool=overview");
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(!html.contains("</style><script>"));
        assert_eq!(view_hash(&[("tool", "memory-viewer"), ("module", "jit_f(14)")]), "#tool=memory-viewer&module=jit_f(14)");
        assert_eq!(encode_component("a b/ü"), "a%20b%2F%C3%BC");
    }
}
