//! Shared by the integration tests: where the fixtures are and how to read them.
#![allow(dead_code)]

pub mod memory_profile;
pub mod memory_viewer;

use std::io::Read;
use std::path::{Path, PathBuf};

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(rel)
}

/// The fixture's bytes as stored (gzipped or not): what a user would drop.
pub fn bytes(rel: &str) -> Vec<u8> {
    let p = fixture(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A JSON fixture, gunzipped if stored as `.gz`.
pub fn json(rel: &str) -> serde_json::Value {
    json_at(&fixture(rel))
}

pub fn open(rel: &str) -> tidemark::decode::DecodedFile {
    tidemark::decode::decode(rel, bytes(rel), &mut |_, _| {}).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The file at `path`, decoded under its path as its name.
pub fn open_at(path: &Path) -> tidemark::decode::DecodedFile {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    tidemark::decode::decode(&path.display().to_string(), bytes, &mut |_, _| {}).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A pprof fixture, decoded.
pub fn pprof(rel: &str) -> tidemark::decode::pprof::PprofFile {
    match open(rel).profile {
        tidemark::decode::Profile::Pprof(p) => p,
        _ => panic!("{rel} is not pprof"),
    }
}

/// `path`, or `path.gz` where only the gzipped copy is stored.
pub fn plain_or_gz(path: PathBuf) -> PathBuf {
    if path.exists() {
        return path;
    }
    let mut gz = path.into_os_string();
    gz.push(".gz");
    PathBuf::from(gz)
}

/// Runs the `tidemark` CLI: exit code, stdout, stderr.
pub fn tidemark(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tidemark")).args(args).output().expect("run tidemark");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A real GPU/TPU profile recorded by others, read in place from `../shared/fixtures/device/` beside the
/// checkout (CI has it; it is other people's data and is never copied into the repository). Where that
/// folder is absent: with `CI=true` the test fails (a run that passes by skipping hides a broken
/// checkout); otherwise `None`, with a note on stderr and a line in the file `TIDEMARK_SKIP_LOG` names
/// (`scripts/test.sh` counts them), so the test passes as skipped.
pub fn device_fixture(rel: &str) -> Option<PathBuf> {
    // This project's own NVIDIA recording n1 is also kept in the repository (tests/fixtures/device/…),
    // so a clone without `../shared` still checks every tool on a real GPU trace: that copy first.
    let in_repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/device").join(rel);
    if in_repo.is_file() {
        return Some(in_repo);
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/device").join(rel);
    if p.exists() {
        return Some(p);
    }
    let why = format!("device fixture {} is absent (it lives beside the checkout, not in it)", p.display());
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why}; with CI=true every device fixture must be there");
    }
    eprintln!("skipped: {why}");
    if let Some(log) = std::env::var_os("TIDEMARK_SKIP_LOG") {
        use std::io::Write;
        let test = std::thread::current().name().unwrap_or("?").to_string();
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
            let _ = writeln!(f, "{} {test}: {why}", env!("CARGO_CRATE_NAME"));
        }
    }
    None
}

/// `body` sent as the page's worker sends it (JSON, sequence number `seq`, the file's bytes beside it),
/// the reply checked to carry `seq`, and returned as the page reads it (JSON both ways, so a figure may
/// differ from the engine's in the last bit).
pub fn ask_at(s: &mut tidemark::engine::Session, seq: u64, body: &str, bytes: Option<Vec<u8>>) -> tidemark::engine::protocol::Response {
    use tidemark::engine::protocol::{handle, Response, VERSION};
    let request = format!(r#"{{"v":{VERSION},"seq":{seq},"body":{body}}}"#);
    let reply = handle(s, &request, bytes, &mut |_| {});
    assert_eq!(reply.seq, seq);
    serde_json::from_str::<Response>(&serde_json::to_string(&reply).expect("encodes")).expect("the page can read the reply")
}

/// [`ask_at`] with a typed request body: the reply's body.
pub fn ask(
    s: &mut tidemark::engine::Session,
    body: tidemark::engine::protocol::RequestBody,
    bytes: Option<Vec<u8>>,
) -> tidemark::engine::protocol::ResponseBody {
    ask_json(s, &serde_json::to_string(&body).expect("encodes"), bytes)
}

/// [`ask_at`] with the request body as JSON (as a test of the wire format writes it): the reply's body.
pub fn ask_json(s: &mut tidemark::engine::Session, body: &str, bytes: Option<Vec<u8>>) -> tidemark::engine::protocol::ResponseBody {
    ask_at(s, 1, body, bytes).body
}

/// A JSON file at `path`, gunzipped if it ends in `.gz`.
pub fn json_at(path: &Path) -> serde_json::Value {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = if path.extension().is_some_and(|e| e == "gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&raw[..]).read_to_string(&mut s).expect("gunzip");
        s
    } else {
        String::from_utf8(raw).expect("utf-8")
    };
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first place where `actual` differs from XProf's `expected`, as a JSON path and both values; numbers
/// are equal within 1e-9 relative (XProf prints shortest round-trip doubles, we may sum in another order).
pub fn json_diff(actual: &serde_json::Value, expected: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    fn walk(a: &Value, e: &Value, path: &mut String) -> Option<String> {
        match (a, e) {
            (Value::Number(x), Value::Number(y)) => {
                let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
                let close = x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs());
                (!close).then(|| format!("{path}: {x} != expected {y}"))
            }
            (Value::Array(xs), Value::Array(ys)) => {
                if xs.len() != ys.len() {
                    return Some(format!("{path}: {} items != expected {}", xs.len(), ys.len()));
                }
                xs.iter().zip(ys).enumerate().find_map(|(i, (x, y))| {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    let d = walk(x, y, path);
                    path.truncate(len);
                    d
                })
            }
            (Value::Object(xs), Value::Object(ys)) => {
                let mut keys: Vec<&String> = xs.keys().chain(ys.keys()).collect();
                keys.sort();
                keys.dedup();
                keys.into_iter().find_map(|k| {
                    let len = path.len();
                    path.push_str(&format!(".{k}"));
                    let d = match (xs.get(k), ys.get(k)) {
                        (Some(x), Some(y)) => walk(x, y, path),
                        (x, y) => Some(format!("{path}: {x:?} != expected {y:?}")),
                    };
                    path.truncate(len);
                    d
                })
            }
            _ => (a != e).then(|| format!("{path}: {a} != expected {e}")),
        }
    }
    walk(actual, expected, &mut String::from("$"))
}

/// The CPU traces with XProf's outputs beside them, as `<folder>/<stem>` (add `.xplane.pb.gz` or
/// `.<tool>.json`).
pub const CPU_TRACES: [&str; 6] = [
    "tf/d2_tf_cnn/d2_tf_cnn",
    "tf/d1_tf_keras_bfc/d1_tf_keras_bfc",
    "tf/d1_tf_keras_none/d1_tf_keras_none",
    "tf/d1_tf_keras_stats/d1_tf_keras_stats",
    "jax/a1_docs_seed/a1_docs_seed",
    "jax/a2_mlp_train/a2_mlp_train",
];

/// Orders every Op Profile node's children by time (longest first), then name: XProf lists children
/// of equal time in hash order.
pub fn sort_equal_time_children(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(o) => {
            if let Some(serde_json::Value::Array(children)) = o.get_mut("children") {
                let key = |c: &serde_json::Value| {
                    (-c["metrics"]["rawTime"].as_f64().unwrap_or(0.0), c["name"].as_str().unwrap_or("").to_string())
                };
                children.sort_by(|a, b| key(a).partial_cmp(&key(b)).unwrap());
            }
            o.values_mut().for_each(sort_equal_time_children);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(sort_equal_time_children),
        _ => {}
    }
}
