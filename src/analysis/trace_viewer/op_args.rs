//! The Trace Viewer's search, by name and by the op an event ran for. TensorFlow shows its host
//! events by op type (`_FusedConv2D`, the metadata's display name) and keeps the framework op in the
//! full name (`long_name`: `sequential_1/conv2d_1_2/Relu:_FusedConv2D`); GPU kernels and XLA's events
//! carry theirs in the `tf_op` and `hlo_op` stats. A search looks at all of these: the event's name,
//! its full name and those stats (its own or its metadata's).
//!
//! Two kinds of query ([`Query`]): text typed in the box matches within them, ignoring case (`Relu`
//! also finds `ReluGrad`); a query written `="name"` — what an op row's "occurrences" link writes —
//! matches one op exactly: an event whose name, full name, `tf_op` or `hlo_op` is `name`, or is a
//! framework op's full name `name:type` (`sgd/Mul_1` finds `sgd/Mul_1:Mul`, not `sgd/Mul_12:Mul`).
//! Full names and stats are read from the file on each search (one scan of the lines of the planes
//! that can match), not kept in the store.

use super::store::{Source, TraceStore};
use super::summary::{self, SearchResult};
use crate::analysis::op_metrics::tf_op::parse_tf_op_fullname;
use crate::decode::xplane::names::{HLO_OP, TF_OP};
use crate::decode::xplane::{IdTable, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;

/// The stats naming the op an event ran for.
pub const OP_STATS: [&str; 2] = [TF_OP, HLO_OP];

/// What a search looks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// Text within a name, full name or op stat, ignoring case (held lower-cased).
    Contains(String),
    /// One op: a name, full name or op stat that is this, or a framework op `this:type`.
    Exact(String),
}

impl Query {
    /// Reads the search box's text: `="name"` is [`Query::Exact`], anything else [`Query::Contains`].
    pub fn parse(text: &str) -> Query {
        match text.strip_prefix("=\"").and_then(|rest| rest.strip_suffix('"')) {
            Some(op) if !op.is_empty() => Query::Exact(op.to_string()),
            _ => Query::Contains(text.to_lowercase()),
        }
    }

    /// The text of the exact query for `op` (what [`Query::parse`] reads back as `Exact(op)`).
    pub fn exact_text(op: &str) -> String {
        format!("=\"{op}\"")
    }

    /// Whether `text` (a name, full name or op stat) matches.
    pub fn matches(&self, text: &str) -> bool {
        match self {
            Query::Contains(lower) => text.to_lowercase().contains(lower.as_str()),
            Query::Exact(op) => text == op || parse_tf_op_fullname(text).name == op,
        }
    }
}

/// The events whose name, full name, `tf_op` or `hlo_op` (an event's own stat or its metadata's)
/// match the search box's `text` ([`Query::parse`]); in the order of [`summary::search`].
pub fn search(store: &TraceStore, space: &XSpace, text: &str) -> Result<SearchResult, DecodeError> {
    let query = Query::parse(text);
    let by_arg = matching_places(space, &query)?;
    let by_name = names_matching(store, &query);
    Ok(summary::search(store, |e| {
        by_name[store.name_ids()[e as usize] as usize]
            || matches!(store.source(e), Some(Source::File { plane, line, index })
                if by_arg.get(&(plane, line)).is_some_and(|indices| indices.binary_search(&index).is_ok()))
    }))
}

/// Whether each of the store's names matches `query`.
fn names_matching(store: &TraceStore, query: &Query) -> Vec<bool> {
    store.names().iter().map(|n| query.matches(n)).collect()
}

/// The events whose name matches the search box's `text` ([`Query::parse`]): the search of a trace
/// whose events carry no op stats (a Kineto trace names its ops and kernels in full).
pub fn search_names(store: &TraceStore, text: &str) -> SearchResult {
    let by_name = names_matching(store, &Query::parse(text));
    summary::search(store, |e| by_name[store.name_ids()[e as usize] as usize])
}

/// The events (by plane, line, and index in the line, ascending) whose full name or op stats match
/// `query`.
fn matching_places(space: &XSpace, query: &Query) -> Result<FastMap<(usize, usize), Vec<u32>>, DecodeError> {
    let mut places: FastMap<(usize, usize), Vec<u32>> = FastMap::default();
    let matches = |s: &str| query.matches(s);
    for (p, plane) in space.planes.iter().enumerate() {
        let ids: Vec<i64> = OP_STATS.iter().filter_map(|n| plane.stat_id(n)).collect();
        // Events whose metadata matches (its full name, or its op stats), whatever their own stats say.
        let by_metadata: IdTable<bool> = IdTable::new(plane.meta.event_metadata.iter().map(|(&id, m)| {
            let stat_hit = || {
                m.stats.iter().any(|s| ids.contains(&s.metadata_id) && plane.stat_value(s).is_some_and(|v| v.as_str().is_some_and(matches)))
            };
            (id, matches(&m.name) || stat_hit())
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
                            hit = plane.raw_stat_value(s)?.is_some_and(|v| v.as_str().is_some_and(matches));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_name_is_an_exact_query() {
        assert_eq!(Query::parse("=\"sgd/Mul_1\""), Query::Exact("sgd/Mul_1".into()));
        assert_eq!(Query::parse(&Query::exact_text("fusion.3")), Query::Exact("fusion.3".into()));
        // Anything else is text to find within names, ignoring case.
        for text in ["Relu", "=Relu", "=\"\"", "\"Relu\"", "=\"Relu"] {
            assert_eq!(Query::parse(text), Query::Contains(text.to_lowercase()), "{text}");
        }
    }

    #[test]
    fn an_exact_query_matches_the_op_not_ops_whose_name_contains_it() {
        let q = Query::parse("=\"sgd/Mul_1\"");
        for hit in ["sgd/Mul_1", "sgd/Mul_1:Mul"] {
            assert!(q.matches(hit), "{hit}");
        }
        for miss in ["sgd/Mul_12", "sgd/Mul_12:Mul", "sgd/Mul_1/ReadVariableOp:ReadVariableOp", "SGD/MUL_1", "Mul"] {
            assert!(!q.matches(miss), "{miss}");
        }
        // A JAX op's full name ends in `:`; an HLO op is named whole.
        assert!(Query::parse("=\"jit(f)/jit(main)/add\"").matches("jit(f)/jit(main)/add:"));
        assert!(!Query::parse("=\"fusion\"").matches("fusion.3"));
        // Substring search ignores case.
        assert!(Query::parse("relu").matches("gradient_tape/ReluGrad:ReluGrad"));
    }
}
