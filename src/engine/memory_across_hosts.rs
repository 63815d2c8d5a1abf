//! Memory across hosts ([`crate::analysis::memory_across_hosts`]): each host's allocator rows read
//! from its kept Memory Profile, combined on the run's one time axis.

use super::{EngineError, Session};
pub use crate::analysis::memory_across_hosts::*;
use crate::decode::Profile;

/// One host's part of the overview, kept per file (see [`Session::host_memory`]): what Memory across
/// hosts and Run comparison read of its Memory Profile, which a page holding one trace at a time
/// releases with the trace.
#[derive(Debug, Clone)]
pub struct HostMemory {
    /// Where the host's memory events' offsets start, ns since the epoch ([`host_start_ns`]).
    pub start_ns: i64,
    /// Each allocator's row, its times the host's own offsets, and its lifetime peak.
    pub allocators: Vec<(HostAllocator, i64)>,
}

impl Session {
    /// Memory across the hosts `file_ids` of a run (one file is a run of one host): every allocator's
    /// peak, capacity and timeline, read from each file's kept Memory Profile.
    pub fn memory_across_hosts(&mut self, file_ids: &[u32]) -> Result<MemoryAcrossHosts, EngineError> {
        if file_ids.is_empty() {
            return Err(EngineError::EmptyRun);
        }
        let mut hosts = Vec::new();
        let mut without_memory = Vec::new();
        for &id in file_ids {
            let path = self.overview(id)?.path.clone();
            let host = match self.host_memory(id) {
                Err(EngineError::WrongFormat { .. }) => None,
                other => Some(other?),
            };
            match host.filter(|h| !h.allocators.is_empty()) {
                Some(h) => hosts.push((h.start_ns, h.allocators.iter().map(|(row, _)| row.clone()).collect::<Vec<_>>())),
                None => without_memory.push(path),
            }
        }
        Ok(combine(hosts, without_memory))
    }

    /// Trace `file_id`'s memory summary, from its Memory Profile, computed once and kept until the
    /// file is closed (through the release of its bytes); a file that is no trace answers the Memory
    /// Profile's [`EngineError::WrongFormat`].
    pub fn host_memory(&mut self, file_id: u32) -> Result<&HostMemory, EngineError> {
        if !self.host_memory.contains_key(&file_id) {
            let f = self.file(file_id)?;
            let (path, host) = (f.overview.path.clone(), f.overview.run_host.host.clone());
            let start_ns = match &f.file.profile {
                Profile::XSpace(space) => host_start_ns(space),
                _ => 0,
            };
            let (profile, names) = self.cached_named_memory_profile(file_id)?;
            let allocators = profile
                .allocators
                .iter()
                .map(|a| {
                    let named = names.and_then(|n| n.allocator(&a.memory_id)).filter(|n| n.unaligned.is_none());
                    (allocator_row(file_id, &path, &host, a, named), a.summary.peak_bytes_usage_lifetime)
                })
                .collect();
            self.host_memory.insert(file_id, HostMemory { start_ns, allocators });
        }
        self.host_memory.get(&file_id).ok_or(EngineError::UnknownFile { file_id })
    }
}
