//! The whole page path: the worker protocol opens the bytes (sniffing, gzip, decoding, overview) and
//! answers with JSON the page can read back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tidemark::engine::protocol::{handle, Response, ResponseBody, VERSION};
use tidemark::engine::Session;

fuzz_target!(|data: &[u8]| {
    let mut session = Session::new();
    let request = format!(r#"{{"v":{VERSION},"seq":1,"body":{{"type":"open","name":"fuzz.pb"}}}}"#);
    let reply = handle(&mut session, &request, Some(data.to_vec()), &mut |_| {});
    let json = serde_json::to_string(&reply).expect("reply serializes");
    let back: Response = serde_json::from_str(&json).expect("reply parses back");
    if let ResponseBody::Opened { file_id, .. } = back.body {
        let _ = session.memory_profile(file_id);
    }
});
