//! Small XSpaces built in memory for unit tests: planes of lines of events, encoded as profilers
//! write them (the generated `XPlane`/`XLine` types leave out their children, so these are appended
//! on the wire).

use crate::decode::wire::put_len_field;
use crate::decode::xplane::XSpace;
use crate::proto::xplane as pb;
use prost::Message;

/// One line: its header and events.
pub struct TestLine {
    pub header: pb::XLine,
    pub events: Vec<pb::XEvent>,
}

/// One plane: metadata (with `XPlane.lines` left empty) and lines.
pub struct TestPlane {
    pub meta: pb::XPlane,
    pub lines: Vec<TestLine>,
}

/// The event metadata map of (id, name) pairs.
pub fn event_metadata(names: &[(i64, &str)]) -> std::collections::BTreeMap<i64, pb::XEventMetadata> {
    names.iter().map(|&(id, name)| (id, pb::XEventMetadata { id, name: name.into(), ..Default::default() })).collect()
}

/// The stat metadata map of (id, name) pairs.
pub fn stat_metadata(names: &[(i64, &str)]) -> std::collections::BTreeMap<i64, pb::XStatMetadata> {
    names.iter().map(|&(id, name)| (id, pb::XStatMetadata { id, name: name.into(), ..Default::default() })).collect()
}

pub fn event(metadata_id: i64, offset_ps: i64, duration_ps: i64, stats: Vec<pb::XStat>) -> pb::XEvent {
    pb::XEvent { metadata_id, data: Some(pb::x_event::Data::OffsetPs(offset_ps)), duration_ps, stats }
}

pub fn stat(metadata_id: i64, value: pb::x_stat::Value) -> pb::XStat {
    pb::XStat { metadata_id, value: Some(value) }
}

/// The encoded XSpace.
pub fn encode(planes: &[TestPlane]) -> Vec<u8> {
    let mut space = Vec::new();
    for p in planes {
        let mut plane = p.meta.encode_to_vec();
        for l in &p.lines {
            let mut line = l.header.encode_to_vec();
            for e in &l.events {
                put_len_field(&mut line, 4, &e.encode_to_vec());
            }
            put_len_field(&mut plane, 3, &line);
        }
        put_len_field(&mut space, 1, &plane);
    }
    space
}

/// The indexed XSpace.
pub fn index(planes: &[TestPlane]) -> XSpace {
    XSpace::index(encode(planes), &mut |_, _| {}).expect("a test XSpace indexes")
}
