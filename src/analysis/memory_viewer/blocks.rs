//! The allocation-block layout: each simulated allocation is a band on the y axis, and each buffer in
//! it a block (x = first event, width = lifetime, y = offset, height = size).
//!
//! Colours follow XProf, whose blocks come from the same loop as its Graphviz timeline: a buffer shown
//! at the peak keeps its peak colour; any other takes the palette entry of the running rectangle
//! counter, which only advances for rectangles at least half a pixel tall in a 2048-pixel-high
//! drawing. XProf's rectangle height adds the allocation's y offset to the buffer's size; we keep that
//! quirk for the counter only, so colours match.

use super::assignment::Assignment;
use super::heap_simulation::Replay;
use super::peak::{buffer_source, PeakSnapshot};
use super::BufferBlock;

/// XProf's Graphviz canvas height in pixels.
const GRAPH_HEIGHT_PX: f64 = 2048.0;
/// XProf skips (and does not count) rectangles thinner than this.
const MIN_HEIGHT_PX: f64 = 0.5;
/// The band drawn behind each allocation's buffers.
const ALLOCATION_COLOR: &str = "#ffffff";

/// XProf's palette (the frontend's `utils.ts`), indexed by colour number modulo its length.
const PALETTE: [&str; 209] = [
    "#e91e63", "#2196f3", "#81c784", "#4dd0e1", "#3f51b5", "#e53935", "#ff9100", "#b39ddb", "#90a4ae", "#26c6da", "#ad1457", "#03a9f4",
    "#2196f3", "#c2185b", "#795548", "#f9a825", "#00bfa5", "#880e4f", "#d500f9", "#ce93d8", "#ec407a", "#4caf50", "#ff8f00", "#ffca28",
    "#ab47bc", "#00e5ff", "#ff9800", "#40c4ff", "#1e88e5", "#9fa8da", "#bf360c", "#00b8d4", "#f57f17", "#64b5f6", "#e040fb", "#ffab91",
    "#4caf50", "#01579b", "#66bb6a", "#ef9a9a", "#558b2f", "#fb8c00", "#ff4081", "#00e676", "#388e3c", "#424242", "#6d4c41", "#c62828",
    "#616161", "#00897b", "#448aff", "#0d47a1", "#607d8b", "#673ab7", "#00c853", "#2e7d32", "#ffa726", "#5e35b1", "#ba68c8", "#8d6e63",
    "#00bcd4", "#ff6f00", "#f4511e", "#ff1744", "#9e9e9e", "#d81b60", "#4a148c", "#26a69a", "#689f38", "#7b1fa2", "#b0bec5", "#304ffe",
    "#f48fb1", "#ffd600", "#ffb74d", "#8bc34a", "#303f9f", "#5d4037", "#80cbc4", "#ffcc80", "#00acc1", "#3e2723", "#ff5252", "#ff7043",
    "#e91e63", "#ea80fc", "#e65100", "#d84315", "#212121", "#ff5722", "#1976d2", "#2962ff", "#bdbdbd", "#3949ab", "#69f0ae", "#d50000",
    "#ffd740", "#c0ca33", "#ff6e40", "#00b0ff", "#2979ff", "#e64a19", "#7c4dff", "#607d8b", "#009688", "#ffb300", "#c51162", "#ffc400",
    "#29b6f6", "#3d5afe", "#76ff03", "#cddc39", "#b388ff", "#5c6bc0", "#9e9d24", "#7cb342", "#ef5350", "#fdd835", "#ef6c00", "#4fc3f7",
    "#6200ea", "#004d40", "#ff8a65", "#ffab00", "#80deea", "#0097a7", "#7e57c2", "#ff6d00", "#1565c0", "#455a64", "#ffc107", "#4527a0",
    "#ff5722", "#f44336", "#f57c00", "#827717", "#a5d6a7", "#82b1ff", "#9c27b0", "#ff80ab", "#e1bee7", "#78909c", "#311b92", "#00695c",
    "#4e342e", "#3f51b5", "#651fff", "#9e9e9e", "#81d4fa", "#f8bbd0", "#b71c1c", "#0091ea", "#673ab7", "#a1887f", "#4db6ac", "#ffa000",
    "#6a1b9a", "#43a047", "#bcaaa4", "#546e7a", "#aeea00", "#e57373", "#ffccbc", "#006064", "#fbc02d", "#ffeb3b", "#8bc34a", "#039be5",
    "#8e24aa", "#80d8ff", "#009688", "#9ccc65", "#512da8", "#ffc107", "#757575", "#0277bd", "#ff3d00", "#33691e", "#03a9f4", "#00838f",
    "#ff8a80", "#283593", "#f50057", "#1a237e", "#90caf9", "#9c27b0", "#aa00ff", "#aed581", "#afb42b", "#9575cd", "#d32f2f", "#64dd17",
    "#f44336", "#795548", "#cddc39", "#ff9e80", "#7986cb", "#dd2c00", "#0288d1", "#ff9800", "#263238", "#00796b", "#42a5f5", "#8c9eff",
    "#1b5e20", "#ffab40", "#536dfe", "#00bcd4", "#f06292",
];

fn palette(n: i64) -> &'static str {
    PALETTE[n.rem_euclid(PALETTE.len() as i64) as usize]
}

/// The blocks of memory space `color`: for each simulated allocation (non-indefinite, with a trace;
/// by index), its band, then its buffers in assignment order that were allocated in the replayed trace
/// and did not share another buffer's memory.
pub fn blocks(assignment: &Assignment, color: i64, replay: &Replay, peak: &PeakSnapshot) -> Vec<BufferBlock> {
    let simulated: Vec<_> = assignment.allocations_of(color).filter(|a| !a.is_indefinite() && a.trace_index.is_some()).collect();
    let total_y_bytes: i64 = simulated.iter().map(|a| a.proto.size).fold(0, i64::saturating_add);
    let total_x_steps = simulated
        .iter()
        .filter_map(|a| a.trace_index.and_then(|t| assignment.traces.get(t)))
        .map(|t| t.events.len() as i64)
        .max()
        .unwrap_or(0);
    if total_y_bytes <= 0 || total_x_steps == 0 {
        return Vec::new();
    }
    let px_per_byte = GRAPH_HEIGHT_PX / total_y_bytes as f64;
    let drawn = |height_bytes: i64| i64::from(height_bytes as f64 * px_per_byte >= MIN_HEIGHT_PX);
    let mut rectangles: i64 = 0;
    let mut out = Vec::new();
    let mut y_bytes = 0i64;
    for allocation in simulated {
        let category = allocation.category();
        out.push(BufferBlock {
            logical_buffer_id: None,
            name: category.to_string(),
            offset_bytes: y_bytes,
            size_bytes: allocation.proto.size,
            start_step: 0,
            end_step: total_x_steps,
            op_name: String::new(),
            category: category.into(),
            source: None,
            shape: String::new(),
            unpadded_bytes: 0,
            color: ALLOCATION_COLOR.into(),
        });
        rectangles += drawn(allocation.proto.size);
        for assigned in &allocation.proto.assigned {
            let Some(buffer) = assignment.buffer(assigned.logical_buffer_id) else { continue };
            let Some(span) = replay.spans.get(&buffer.id()) else { continue };
            if replay.shared.contains(&buffer.id()) {
                continue;
            }
            let color = match peak.color_of_buffer.get(&buffer.id()) {
                Some(&c) => palette(i64::from(c)),
                None => palette(rectangles),
            };
            out.push(BufferBlock {
                logical_buffer_id: Some(buffer.id()),
                name: buffer.name_with_shape_index(),
                offset_bytes: y_bytes.saturating_add(buffer.offset_bytes),
                size_bytes: buffer.size_bytes(),
                start_step: span.start,
                end_step: span.limit,
                op_name: buffer.op_name().to_string(),
                category: category.into(),
                source: buffer_source(assignment, buffer),
                shape: buffer.shape_text(),
                unpadded_bytes: buffer.unpadded_bytes(),
                color: color.into(),
            });
            rectangles += drawn(y_bytes.saturating_add(buffer.size_bytes()));
        }
        y_bytes = y_bytes.saturating_add(allocation.proto.size);
    }
    out
}
