//! The XLA programs the TPU ran, as XProf lists them beside the Memory Profile (its `hloModules`,
//! `GenerateHloModules`): every event of each TPU plane's `XLA Modules` line, in file order.

use crate::decode::xplane::names::{DEVICE_PLANE_PREFIX, TPU_PLANE_PREFIX, XLA_MODULES_LINE};
use crate::decode::xplane::XSpace;
use crate::decode::DecodeError;
use serde::Serialize;

/// One run of an XLA program on a TPU core.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleRun {
    /// Numbered in file order over every TPU plane, from 0.
    pub id: i64,
    pub name: String,
    /// The event's raw `offset_ps` (not adding its line's start), as XProf reports it.
    pub start_time_ps: i64,
    pub end_time_ps: i64,
    /// The plane's name without `/device:` (`TPU:0`).
    pub plane_name: String,
}

/// The module runs of every TPU plane of `space`, in file order (planes, then events).
pub fn module_runs(space: &XSpace) -> Result<Vec<ModuleRun>, DecodeError> {
    let mut runs = Vec::new();
    for plane in space.planes.iter().filter(|p| p.name().starts_with(TPU_PLANE_PREFIX)) {
        let no_stats = plane.stat_selection(&[]);
        let plane_name = plane.name().strip_prefix(DEVICE_PLANE_PREFIX).unwrap_or(plane.name());
        for line in plane.lines.iter().filter(|l| l.header.name == XLA_MODULES_LINE) {
            space.for_each_raw_event(
                line,
                &no_stats,
                |_| true,
                |_, ev| {
                    let h = &ev.header;
                    runs.push(ModuleRun {
                        id: runs.len() as i64,
                        name: plane.event_name(h.metadata_id).to_string(),
                        start_time_ps: h.offset_ps,
                        end_time_ps: h.offset_ps.wrapping_add(h.duration_ps),
                        plane_name: plane_name.to_string(),
                    });
                    Ok(())
                },
            )?;
        }
    }
    Ok(runs)
}
