use tidemark::decode::xplane::IdTable;
use tidemark::decode::Profile;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let plane_name = &args[2];
    let line_name = &args[3];
    let max: usize = args[4].parse().unwrap();
    let bytes = std::fs::read(path).unwrap();
    let file = tidemark::decode::decode(path, bytes, &mut |_, _| {}).unwrap();
    let Profile::XSpace(space) = &file.profile else { panic!() };
    for plane in space.planes.iter().filter(|p| p.name() == plane_name) {
        let all = IdTable::new(plane.meta.stat_metadata.keys().map(|&id| (id, true)));
        for line in plane.lines.iter().filter(|l| line_name == "*" || l.header.name == *line_name) {
            println!("LINE {} id {} display {} n {}", line.header.name, line.header.id, line.header.display_id, line.event_count);
            let mut n = 0;
            space.for_each_raw_event(line, &all, |_| true, |_, ev| {
                if n < max {
                    let m = plane.meta.event_metadata.get(&ev.header.metadata_id);
                    let mut s = String::new();
                    for st in m.map(|m| m.stats.as_slice()).unwrap_or_default() { s += &format!(" M:{}={:?}", plane.stat_name(st.metadata_id), plane.stat_value(st)); }
                    for st in ev.stats { s += &format!(" {}={:?}", plane.stat_name(st.metadata_id), plane.raw_stat_value(st)?); }
                    let name = m.map(|m| m.name.as_str()).unwrap_or("");
                    println!("  {} +{} d{} {}", &name[..name.len().min(60)], line.header.timestamp_ns * 1000 + ev.header.offset_ps, ev.header.duration_ps, &s[..s.len().min(600)]);
                }
                n += 1;
                Ok(())
            }).unwrap();
        }
    }
}
