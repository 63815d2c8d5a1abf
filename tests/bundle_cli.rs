//! `tidemark bundle` as the notebook package calls it: `--json`'s summary, `--max-bytes` refusing
//! (exit 3) what would embed more, the slim copy under the limit, a folder with no profile said in one
//! sentence, and the view left to the page's first screen when no tool is asked for.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};

const D2: &str = "tests/fixtures/tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz";
/// A JAX trace that is mostly its Python tracer line, which the slim copy sheds.
const A2: &str = "tests/fixtures/jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz";

/// A stand-in for the built page: the bundle embeds its five assets as they are.
fn dist(dir: &Path) -> PathBuf {
    let d = dir.join("dist");
    std::fs::create_dir_all(&d).unwrap();
    for (name, text) in [
        ("tidemark-web.js", "export default async () => {};"),
        ("tidemark-web_bg.wasm", "\0asm"),
        ("tidemark-engine.js", "export default async () => {};"),
        ("tidemark-engine_bg.wasm", "\0asm"),
        ("app.css", "body{}"),
    ] {
        std::fs::write(d.join(name), text).unwrap();
    }
    d
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tidemark-bundle-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn bundle(dir: &Path, file: &str, extra: &[&str]) -> (i32, String, String) {
    let out = dir.join("out.html");
    let dist = dist(dir);
    let mut args = vec!["bundle", file, "-o", out.to_str().unwrap(), "--dist", dist.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    common::tidemark(&args)
}

#[test]
fn json_summary_and_the_first_screen_view() {
    let dir = scratch("summary");
    let (code, stdout, stderr) = bundle(&dir, D2, &[]);
    assert_eq!(code, 0, "{stderr}");
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
    let on_disk = std::fs::metadata(D2).unwrap().len();
    assert_eq!(summary["embedded_bytes"], on_disk);
    assert_eq!(summary["profiles"][0]["name"], "d2_tf_cnn.xplane.pb.gz");
    assert_eq!(summary["profiles"][0]["source_bytes"], on_disk);
    assert_eq!(summary["slim"], false);
    let html = std::fs::read_to_string(dir.join("out.html")).unwrap();
    assert_eq!(summary["bytes"], html.len());
    // No --tool: the hash names only the file, and the page lands where a drop would.
    assert!(html.contains(r##""hash":"#file=d2_tf_cnn.xplane.pb.gz""##), "{}", &html[html.find("tm-meta").unwrap()..][..300]);
}

#[test]
fn max_bytes_refuses_then_the_slim_copy_fits() {
    let dir = scratch("max");
    let on_disk = std::fs::metadata(A2).unwrap().len();
    let limit = (on_disk - 1).to_string();
    let (code, stdout, stderr) = bundle(&dir, A2, &["--max-bytes", &limit]);
    assert_eq!(code, 3, "{stderr}");
    assert!(!dir.join("out.html").exists(), "nothing written");
    let refused: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(refused["error"], "too_large");
    assert_eq!(refused["bytes"], on_disk);
    assert!(stderr.contains("--slim keeps only what the memory tools read"), "{stderr}");

    let (code, stdout, stderr) = bundle(&dir, A2, &["--max-bytes", &limit, "--slim"]);
    assert_eq!(code, 0, "{stderr}");
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(summary["slim"], true);
    assert!(summary["embedded_bytes"].as_u64().unwrap() < on_disk);
}

#[test]
fn a_folder_without_a_profile_is_one_sentence() {
    let dir = scratch("empty");
    std::fs::write(dir.join("notes.txt"), "not a profile").unwrap();
    let (code, _, stderr) = common::tidemark(&["bundle", dir.to_str().unwrap(), "-o", dir.join("o.html").to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with(&format!("tidemark bundle: no profile in {}: Tidemark reads", dir.display())), "{stderr}");
}
