//! Search by the op an event ran for. TensorFlow shows its host events by op type (`_FusedConv2D`,
//! the metadata's display name) and keeps the framework op in the full name (`long_name`:
//! `sequential_1/conv2d_1_2/Relu:_FusedConv2D`); GPU kernels and XLA's events carry theirs in the
//! `tf_op` and `hlo_op` stats. The "occurrences" of such an op are the events whose name, full name or
//! one of these stats contains its name ([`search`]). Full names and stats are read from the file on
//! each search (one scan of the lines of the planes that can match), not kept in the store.

use super::store::{Source, TraceStore};
use super::summary::{self, SearchResult};
use crate::decode::xplane::{IdTable, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;

/// The stats naming the op an event ran for.
pub const OP_STATS: [&str; 2] = ["tf_op", "hlo_op"];

/// The events whose name, full name, `tf_op` or `hlo_op` (an event's own stat or its metadata's)
/// contains `needle`, ignoring case; in the order of [`summary::search`].
pub fn search(store: &TraceStore, space: &XSpace, needle: &str) -> Result<SearchResult, DecodeError> {
    let lower = needle.to_lowercase();
    let by_arg = matching_places(space, &lower)?;
    let mut result = summary::search(store, needle);
    if by_arg.is_empty() {
        return Ok(result);
    }
    let mut event = std::mem::take(&mut result.event);
    let by_name: Vec<bool> = {
        let mut v = vec![false; store.event_count()];
        event.iter().for_each(|&e| v[e as usize] = true);
        v
    };
    for e in 0..store.event_count() as u32 {
        if by_name[e as usize] {
            continue;
        }
        if let Some(Source::File { plane, line, index }) = store.source(e) {
            if by_arg.get(&(plane, line)).is_some_and(|indices| indices.binary_search(&index).is_ok()) {
                event.push(e);
            }
        }
    }
    event.sort_by_key(|&e| (store.start_ps()[e as usize], e));
    let start_ps = event.iter().map(|&e| store.start_ps()[e as usize]).collect();
    Ok(SearchResult { count: event.len(), event, start_ps })
}

/// The events (by plane, line, and index in the line, ascending) whose full name or op stats contain
/// `lower`.
fn matching_places(space: &XSpace, lower: &str) -> Result<FastMap<(usize, usize), Vec<u32>>, DecodeError> {
    let mut places: FastMap<(usize, usize), Vec<u32>> = FastMap::default();
    let contains = |s: &str| s.to_lowercase().contains(lower);
    for (p, plane) in space.planes.iter().enumerate() {
        let ids: Vec<i64> = OP_STATS.iter().filter_map(|n| plane.stat_id(n)).collect();
        // Events whose metadata matches (its full name, or its op stats), whatever their own stats say.
        let by_metadata: IdTable<bool> = IdTable::new(plane.meta.event_metadata.iter().map(|(&id, m)| {
            let stat_hit = || {
                m.stats
                    .iter()
                    .any(|s| ids.contains(&s.metadata_id) && plane.stat_value(s).is_some_and(|v| v.as_str().is_some_and(contains)))
            };
            (id, contains(&m.name) || stat_hit())
        }));
        if ids.is_empty() && !by_metadata.any() {
            continue;
        }
        let select = IdTable::new(ids.iter().map(|&id| (id, true)));
        // Without op stats only the events of matching metadata need visiting.
        let every_event = !ids.is_empty();
        for (l, line) in plane.lines.iter().enumerate() {
            let mut hits = Vec::new();
            space.for_each_raw_event(
                line,
                &select,
                |id| every_event || by_metadata.get(id),
                |index, ev| {
                    let mut hit = by_metadata.get(ev.header.metadata_id);
                    for s in ev.stats {
                        if !hit {
                            hit = plane.raw_stat_value(s)?.is_some_and(|v| v.as_str().is_some_and(contains));
                        }
                    }
                    if hit {
                        hits.push(u32::try_from(index).unwrap_or(u32::MAX));
                    }
                    Ok(())
                },
            )?;
            if !hits.is_empty() {
                places.insert((p, l), hits);
            }
        }
    }
    Ok(places)
}
