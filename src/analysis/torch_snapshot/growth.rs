//! Each frame's live bytes at [`GROWTH_CHECKPOINTS`] points of a device's trace, and how they grew
//! (leak suspects): taken from the report's one replay of the trace as it passes each checkpoint,
//! not from a replay of its own (a hash map's insert and remove per event, for the whole trace).

use super::{frame_text, FrameGrowth, Live, GROWTH_CHECKPOINTS};
use crate::analysis::device_memory::Growth;
use crate::decode::pickle_snapshot::{DeviceTrace, TorchSnapshot};
use crate::fast_hash::FastMap;
use std::collections::BTreeMap;

/// The checkpoints' live bytes by frame, filled as the replay passes them ([`GrowthRecorder::after`]).
pub(super) struct GrowthRecorder {
    /// Evenly spaced by event index, the trace's end included (repeated on a trace of fewer events).
    checkpoints: Vec<usize>,
    /// The next checkpoint to take, by its position in `checkpoints`.
    next: usize,
    texts: FrameTexts,
    /// By text id: live bytes at each checkpoint, for frames live at any.
    per_frame: Vec<Option<Vec<i64>>>,
    /// By text id: live bytes at the checkpoint being taken.
    now: Vec<Option<i64>>,
}

impl GrowthRecorder {
    /// For a trace of `n` events.
    pub(super) fn new(n: usize) -> Self {
        let checkpoints =
            if n == 0 { Vec::new() } else { (1..=GROWTH_CHECKPOINTS).map(|k| (k * n / GROWTH_CHECKPOINTS).max(1) - 1).collect() };
        GrowthRecorder { checkpoints, next: 0, texts: FrameTexts::default(), per_frame: Vec::new(), now: Vec::new() }
    }

    /// The replay has applied event `i` of `t`; `live` is what is live after it.
    #[inline]
    pub(super) fn after(&mut self, i: usize, s: &TorchSnapshot, t: &DeviceTrace, live: &Live) {
        while self.checkpoints.get(self.next) == Some(&i) {
            self.take(s, t, live);
            self.next += 1;
        }
    }

    fn take(&mut self, s: &TorchSnapshot, t: &DeviceTrace, live: &Live) {
        self.now.clear();
        for e in live.live_events() {
            let frame = self.texts.of(s, t.stack[e as usize]) as usize;
            if self.now.len() <= frame {
                self.now.resize(frame + 1, None);
            }
            let slot = self.now[frame].get_or_insert(0);
            *slot = slot.saturating_add(t.size[e as usize]);
        }
        self.per_frame.resize(self.texts.len(), None);
        for (frame, bytes) in self.now.iter().enumerate() {
            if let Some(bytes) = bytes {
                self.per_frame[frame].get_or_insert_with(|| vec![0; GROWTH_CHECKPOINTS])[self.next] = *bytes;
            }
        }
    }

    /// The frames live at any checkpoint: leak suspects (grew in most intervals, ended larger) first.
    pub(super) fn finish(self) -> Vec<FrameGrowth> {
        let per_frame: BTreeMap<String, Vec<i64>> =
            self.per_frame.into_iter().zip(self.texts.into_texts()).filter_map(|(bytes, frame)| Some((frame, bytes?))).collect();
        let checkpoints_event_index: Vec<u64> = self.checkpoints.iter().map(|c| *c as u64).collect();
        let mut rows: Vec<FrameGrowth> = per_frame
            .into_iter()
            .map(|(frame, bytes)| {
                let growth = Growth::of(&bytes);
                FrameGrowth { frame, suspect: growth.is_suspect(), bytes, checkpoints_event_index: checkpoints_event_index.clone(), growth }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.growth.score.total_cmp(&a.growth.score).then_with(|| b.bytes.last().cmp(&a.bytes.last())).then_with(|| a.frame.cmp(&b.frame))
        });
        rows
    }
}

/// Innermost Python frames as text ([`frame_text`]), each made once: by stack id, the id of its text
/// (stacks with the same innermost frame share one).
#[derive(Default)]
struct FrameTexts {
    of_stack: FastMap<u32, u32>,
    ids: FastMap<String, u32>,
    texts: Vec<String>,
}

impl FrameTexts {
    /// The text id of `stack`'s innermost Python frame.
    fn of(&mut self, s: &TorchSnapshot, stack: u32) -> u32 {
        if let Some(id) = self.of_stack.get(&stack) {
            return *id;
        }
        let text = frame_text(s, stack);
        let id = match self.ids.get(&text) {
            Some(id) => *id,
            None => {
                let id = self.texts.len() as u32;
                self.texts.push(text.clone());
                self.ids.insert(text, id);
                id
            }
        };
        self.of_stack.insert(stack, id);
        id
    }

    fn len(&self) -> usize {
        self.texts.len()
    }

    fn into_texts(self) -> Vec<String> {
        self.texts
    }
}
