//! The reader's reads from the bytes ([`Reader::read_entry`]) against the machine building every
//! container: the same snapshot from any bytes, the real one and written ones (every shape a frame
//! list takes, `FRAME`s anywhere, memo keys given new values), and a clear error where a file adds
//! to an entry after it was read.

use super::*;
use std::collections::HashMap;

/// `SHORT_BINUNICODE` of `s`.
fn text(s: &str) -> Vec<u8> {
    let mut v = vec![0x8c, s.len() as u8];
    v.extend(s.as_bytes());
    v
}

/// An entry dict filled by one `SETITEMS`: `alloc` of `size` bytes at `addr`.
fn entry(addr: u8, size: u8) -> Vec<u8> {
    let mut v = vec![b'}', b'('];
    for part in [text("action"), text("alloc"), text("addr"), vec![b'K', addr], text("size"), vec![b'K', size]] {
        v.extend(part);
    }
    v.push(b'u');
    v
}

/// A snapshot whose only device's list of entries is filled by `batch` (inside its `MARK`).
fn snapshot(batch: &[u8]) -> Result<TorchSnapshot, DecodeError> {
    let mut p = vec![0x80, 4, b'}', b'('];
    p.extend(text("device_traces"));
    p.extend([b']', b'(', b']', b'(']);
    p.extend(batch);
    p.extend([b'e', b'e', b'u', b'.']);
    TorchSnapshot::decode(&p)
}

/// The reader, its reads from the bytes allowed or refused (the machine then builds every
/// container), counting those it made.
struct Counted {
    reader: Reader,
    from_bytes: bool,
    reads: usize,
}

impl Consumer for Counted {
    fn top_role(&mut self, is_list: bool) -> Role {
        self.reader.top_role(is_list)
    }
    fn role(&mut self, heap: &Heap, places: &[Place], is_list: bool) -> Role {
        self.reader.role(heap, places, is_list)
    }
    fn take(&mut self, heap: &mut Heap, list: Role, index: usize, item: Value) -> Result<bool, String> {
        self.reader.take(heap, list, index, item)
    }
    fn read(&mut self, role: Role, cursor: &mut Cursor) -> Option<u32> {
        let read = if self.from_bytes { self.reader.read(role, cursor) } else { None };
        self.reads += usize::from(read.is_some());
        read
    }
}

/// The snapshot in `bytes` and how many containers were read from the bytes.
fn decode(bytes: &[u8], from_bytes: bool) -> (Result<TorchSnapshot, String>, usize) {
    let mut c = Counted { reader: Reader::default(), from_bytes, reads: 0 };
    let s = pickle::read(bytes, &mut c).map_err(|e| e.to_string()).and_then(|(top, heap)| c.reader.finish(top, heap));
    (s, c.reads)
}

/// Every event and segment of `s` as text, its strings and frames resolved (ids are the reader's own).
fn resolved(s: &TorchSnapshot) -> Vec<String> {
    let stack = |id: u32| -> Vec<(String, String, i64)> {
        s.stack(id).iter().map(|f| &s.frames[*f as usize]).map(|f| (s.str(f.name).into(), s.str(f.filename).into(), f.line)).collect()
    };
    let mut out = Vec::new();
    for (d, t) in s.devices.iter().enumerate() {
        for i in 0..t.len() {
            out.push(format!(
                "{d} {} {} {} {} {} {:?} {:?} {:?}",
                s.str(t.action[i]),
                t.addr[i],
                t.size[i],
                t.stream[i],
                t.time_us[i],
                stack(t.stack[i]),
                s.str(t.compile_context[i]),
                s.str(t.user_metadata[i])
            ));
        }
    }
    for g in &s.segments {
        let blocks: Vec<_> = g.blocks.iter().map(|b| (b.address, b.size, s.str(b.state), stack(b.stack))).collect();
        out.push(format!("{} {} {} {:?} {:?}", g.address, g.total_size, s.str(g.segment_type), stack(g.stack), blocks));
    }
    out
}

/// A pickle written as Python's pickler writes one (protocol 4): each string and container
/// memoized when first written, a memo reference for each repeat, items in batches.
#[derive(Default)]
struct Writer {
    ops: Vec<Vec<u8>>,
    memo: u32,
    strings: HashMap<String, u32>,
    /// Frame dicts written, by frame number: their memo keys.
    frames: HashMap<usize, u32>,
}

impl Writer {
    fn op(&mut self, bytes: &[u8]) {
        self.ops.push(bytes.to_vec());
    }

    fn memoize(&mut self) -> u32 {
        self.op(&[0x94]);
        self.memo += 1;
        self.memo - 1
    }

    fn get(&mut self, key: u32) {
        match u8::try_from(key) {
            Ok(k) => self.op(&[b'h', k]),
            Err(_) => self.op(&[[b'j'].as_slice(), &key.to_le_bytes()].concat()),
        }
    }

    fn str(&mut self, s: &str) {
        match self.strings.get(s) {
            Some(k) => self.get(*k),
            None => {
                self.op(&text(s));
                let k = self.memoize();
                self.strings.insert(s.into(), k);
            }
        }
    }

    fn int(&mut self, v: i64) {
        match (u8::try_from(v), i32::try_from(v)) {
            (Ok(b), _) => self.op(&[b'K', b]),
            (_, Ok(i)) => self.op(&[[b'J'].as_slice(), &i.to_le_bytes()].concat()),
            _ => self.op(&[[0x8a, 8].as_slice(), &v.to_le_bytes()].concat()),
        }
    }

    /// A list of `n` items written by `item`, in batches of `batch` (a batch of one: `APPEND`).
    fn list(&mut self, n: usize, batch: usize, mut item: impl FnMut(&mut Self, usize)) {
        self.op(b"]");
        self.memoize();
        for start in (0..n).step_by(batch) {
            let end = n.min(start + batch);
            if end - start > 1 {
                self.op(b"(");
            }
            for i in start..end {
                item(self, i);
            }
            self.op(if end - start > 1 { b"e" } else { b"a" });
        }
    }

    /// A dict of two items or more, written by `items`.
    fn dict(&mut self, items: impl FnOnce(&mut Self)) {
        self.op(b"}");
        self.memoize();
        self.op(b"(");
        items(self);
        self.op(b"u");
    }

    /// Frame `f`: written the first time, a memo reference after.
    fn frame(&mut self, f: usize) {
        if let Some(k) = self.frames.get(&f) {
            return self.get(*k);
        }
        // The dict's own memo key: the next one.
        self.frames.insert(f, self.memo);
        self.dict(|w| {
            w.str("filename");
            w.str(["??", "torch/nn/modules/module.py", "train.py"][f % 3]);
            w.str("line");
            w.int(f as i64 * 7);
            w.str("name");
            w.str(&format!("fn{f}"));
        });
    }

    /// The pickle: `PROTO 4`, the ops with a `FRAME` before each one `frame_at` picks, `STOP`.
    fn bytes(&self, mut frame_at: impl FnMut(usize) -> bool) -> Vec<u8> {
        let mut out = vec![0x80, 4];
        for (i, op) in self.ops.iter().enumerate() {
            if frame_at(i) {
                out.extend([0x95, 0, 0, 1, 0, 0, 0, 0, 0]);
            }
            out.extend(op);
        }
        out.push(b'.');
        out
    }
}

/// A snapshot of `n` events as PyTorch writes one: each stack one of a few, its frames shared
/// (each written the first time it is used), lists of every shape: none, empty, one frame, and
/// longer than a batch (`batch`, 1000 in Python's pickler).
fn written_snapshot(n: usize, batch: usize) -> Writer {
    let stacks: [&[usize]; 6] = [&[0, 1, 2, 3], &[0, 1, 4, 5, 6, 7, 8, 9, 10], &[11], &[], &[0, 1, 4, 12], &[13, 1, 2, 3, 14, 15, 16]];
    let mut w = Writer::default();
    w.dict(|w| {
        w.str("segments");
        w.list(0, batch, |_, _| {});
        w.str("device_traces");
        w.list(1, batch, |w, _| {
            w.list(n, batch, |w, i| {
                w.dict(|w| {
                    w.str("action");
                    w.str(["alloc", "free_requested", "free_completed"][i % 3]);
                    w.str("addr");
                    w.int(0x7f00_0000_0000 + (i as i64 / 3) * 512);
                    w.str("size");
                    w.int(512 + i as i64);
                    w.str("stream");
                    w.int(0);
                    w.str("time_us");
                    w.int(1_700_000_000_000_000 + i as i64);
                    if i % 5 == 0 {
                        w.str("compile_context");
                        w.str(&format!("ctx{}", i % 4));
                    }
                    w.str("frames");
                    match i % 7 {
                        6 => w.op(b"N"),
                        k => {
                            let stack = stacks[k % stacks.len()];
                            w.list(stack.len(), batch, |w, j| w.frame(stack[j]));
                        }
                    }
                });
            });
        });
    });
    w
}

/// The real snapshot, and written ones with `FRAME`s between any opcodes and frame lists of every
/// shape, read the same whether the reader reads entries from the bytes or the machine builds them;
/// and nearly every entry of a real snapshot is read from the bytes.
#[test]
fn entries_read_from_the_bytes_as_the_machine_builds_them() {
    let real = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/device/nvidia_h200_pytorch/p2_torch_resnet/snapshot.pickle");
    if let Ok(bytes) = std::fs::read(&real) {
        let ((fast, reads), (built, _)) = (decode(&bytes, true), decode(&bytes, false));
        let (fast, built) = (fast.expect("reads"), built.expect("reads"));
        assert_eq!(resolved(&fast), resolved(&built));
        assert!(reads * 10 >= fast.event_count() * 9, "{reads} of {} entries read from the bytes", fast.event_count());
    } else {
        eprintln!("skipped the real snapshot: {} is absent", real.display());
    }
    let w = written_snapshot(300, 4);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for frames in [0, 2, 10, 50] {
        let bytes = w.bytes(|_| random() % 100 < frames);
        let ((fast, reads), (built, _)) = (decode(&bytes, true), decode(&bytes, false));
        let (fast, built) = (fast.expect("reads"), built.expect("reads"));
        assert_eq!(fast.event_count(), 300);
        assert_eq!(resolved(&fast), resolved(&built), "FRAMEs before {frames}% of opcodes");
        if frames == 0 {
            // All but the entries that write a frame for the first time.
            assert!(reads > 250, "{reads} entries read from the bytes");
        }
    }
}

/// A memo key given a new value between two frame lists of the same bytes: the second list's
/// references mean the new frame, as the machine reads them.
#[test]
fn a_memo_key_given_a_new_value_changes_what_a_frame_list_means() {
    let mut w = Writer::default();
    w.dict(|w| {
        w.str("device_traces");
        w.list(1, 1000, |w, _| {
            w.op(b"]");
            w.memoize();
            w.op(b"(");
            for i in 0..3 {
                if i == 2 {
                    // Frame 1's key now holds frame 2, written and popped.
                    let key = w.frames[&1];
                    w.frame(2);
                    w.op(b"r");
                    w.ops.last_mut().expect("op").extend(key.to_le_bytes());
                    w.op(b"0");
                }
                w.dict(|w| {
                    w.str("action");
                    w.str("alloc");
                    w.str("frames");
                    w.list(2, 1000, |w, j| w.frame(j));
                });
            }
            w.op(b"e");
        });
    });
    let bytes = w.bytes(|_| false);
    let ((fast, _), (built, _)) = (decode(&bytes, true), decode(&bytes, false));
    let (fast, built) = (fast.expect("reads"), built.expect("reads"));
    let lines = resolved(&fast);
    assert_eq!(lines, resolved(&built));
    assert!(lines[1].contains("fn1") && lines[2].contains("fn2") && !lines[2].contains("fn1"), "{lines:#?}");
}

/// Entries appended in another order than made, or given more items before their list takes them,
/// are read as the list holds them; one read from the bytes and added to later is refused clearly
/// (a writer fills a dict once), and one listed twice too.
#[test]
fn entries_in_any_order_and_changed_ones() {
    let mut in_order = entry(1, 10);
    in_order.extend(entry(2, 20));
    assert_eq!(snapshot(&in_order).expect("reads").devices[0].addr, [1, 2]);

    let mut reversed = entry(1, 10);
    reversed.extend([b'q', 0, b'0']);
    reversed.extend(entry(2, 20));
    reversed.extend([b'q', 1, b'0', b'h', 1, b'h', 0]);
    let s = snapshot(&reversed).expect("reads");
    assert_eq!((&s.devices[0].addr[..], &s.devices[0].size[..]), (&[2, 1][..], &[20, 10][..]));

    let mut grown = vec![b'}', b'('];
    for part in [text("action"), text("alloc"), text("addr"), vec![b'K', 3], vec![b'u']] {
        grown.extend(part);
    }
    grown.extend(text("size"));
    grown.extend([b'K', 7, b's']);
    grown.extend(entry(4, 40));
    let s = snapshot(&grown).expect("reads");
    assert_eq!((&s.devices[0].addr[..], &s.devices[0].size[..]), (&[3, 4][..], &[7, 40][..]));

    // Read from the bytes when the next entry begins, then given an item through its memo key.
    let mut changed = vec![b'}', 0x94, b'('];
    for part in [text("action"), text("alloc"), text("addr"), vec![b'K', 3], vec![b'u']] {
        changed.extend(part);
    }
    changed.extend(entry(4, 40));
    changed.extend([b'h', 0]);
    changed.extend(text("size"));
    changed.extend([b'K', 7, b's', b'0']);
    let e = snapshot(&changed).expect_err("refused").to_string();
    assert!(e.contains("already read whole"), "{e}");

    let mut twice = vec![b'}', 0x94, b'('];
    for part in [text("action"), text("alloc"), text("addr"), vec![b'K', 3], vec![b'u']] {
        twice.extend(part);
    }
    twice.extend([b'h', 0]);
    let e = snapshot(&twice).expect_err("refused").to_string();
    assert!(e.contains("listed twice"), "{e}");
}
