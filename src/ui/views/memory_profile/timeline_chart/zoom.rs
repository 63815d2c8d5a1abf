//! The chart's zoom: the range shown (opening on the step picked in the Overview and following a
//! new pick), kept inside the profile, and the engine's full-resolution events of a zoomed range.

use super::super::*;
use crate::engine::memory_profile::TimelineWindow;
use crate::ui::state::StepPick;

/// Zooming: the visible range `v` kept inside the profile and at least [`MIN_SPAN_PS`] wide, or
/// `None` for the whole profile.
pub(super) fn zoomed(full: (i64, i64), v: Viewport) -> Option<(i64, i64)> {
    let v = v.within(Viewport::x_range(full.0 as f64, full.1 as f64), MIN_SPAN_PS as f64, 0.0);
    let range = (v.x0.round() as i64, v.x1.round() as i64);
    (range != full).then_some(range)
}

/// The zoomed range of a profile spanning `full`: the step selected in the Overview's span, so the
/// chart opens zoomed to it, follows a new pick and shows the whole profile again when it is cleared.
pub(super) fn follow_step(full: (i64, i64)) -> RwSignal<Option<(i64, i64)>> {
    let state = expect_context::<AppState>();
    let step_zoom = move |p: Option<StepPick>| p.and_then(|p| zoomed(full, Viewport::x_range(p.begin_ps as f64, p.end_ps as f64)));
    let zoom = RwSignal::new(step_zoom(state.step.get_untracked()));
    Effect::new(move |prev: Option<Option<StepPick>>| {
        let picked = state.step.get();
        if prev.is_some_and(|prev| prev != picked) {
            zoom.set(step_zoom(picked));
        }
        picked
    });
    zoom
}

/// Zoomed: the full-resolution events of allocator `memory_id`'s range (about two per pixel of
/// `width`).
pub(super) fn events(
    file_id: u32,
    memory_id: String,
    zoom: RwSignal<Option<(i64, i64)>>,
    width: RwSignal<f64>,
) -> ReadSignal<Reply<Arc<TimelineWindow>>> {
    use_engine("Memory Profile zoom", move || {
        let (start_ps, end_ps) = zoom.get()?;
        let max_points = (width.get_untracked() * 2.0).max(500.0) as usize;
        Some(request::MemoryTimeline { file_id, memory_id: memory_id.clone(), start_ps, end_ps, max_points })
    })
    .reply
}
