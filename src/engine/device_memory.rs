//! Device memory (JAX pprof) analyses of opened files, shaped for the page: the report, the stack
//! tree flattened for a flame graph, and which kinds and devices the files hold (for the filters).

use super::{EngineError, Session};
use crate::analysis::device_memory::{self as dm, DiffReport, ProfileReport, SeriesReport, TreeNode};
use crate::decode::pprof::PprofFile;
use crate::decode::Profile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// What to read from the profiles: the analysis [`dm::Options`] plus a device filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceMemoryQuery {
    pub fold_library_frames: bool,
    /// Keep only samples of this `kind` label (`buffer`, `executable`).
    pub kind: Option<String>,
    /// Keep only samples of this `device` label (`cpu:0`, `cuda:1`). Executables carry no device
    /// label, so a device filter keeps buffers only.
    pub device: Option<String>,
}

impl Default for DeviceMemoryQuery {
    /// Folded, as the CLI: a JAX stack's leaf is always JAX's dispatch code, which names nothing useful.
    fn default() -> Self {
        DeviceMemoryQuery { fold_library_frames: true, kind: None, device: None }
    }
}

/// The `kind` and `device` labels present in the queried files, unfiltered, so the page can offer
/// them as filters whatever is selected now.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Labels {
    pub kinds: Vec<String>,
    /// Non-empty device labels only.
    pub devices: Vec<String>,
}

/// A node of a stack tree in preorder, with its depth (root = 0); `node` has no children. The page
/// receives the tree flat because a nested tree as deep as a Python stack can exceed the JSON
/// decoder's nesting limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlameNode {
    pub depth: u32,
    #[serde(flatten)]
    pub node: TreeNode,
}

/// A flame node reads as its tree node (`n.function`, `n.total_bytes`).
impl std::ops::Deref for FlameNode {
    type Target = TreeNode;
    fn deref(&self) -> &TreeNode {
        &self.node
    }
}

/// Flattens `tree` in preorder, children in the tree's order (largest first).
pub fn flatten(tree: &TreeNode) -> Vec<FlameNode> {
    flame(tree.clone())
}

fn flame(tree: TreeNode) -> Vec<FlameNode> {
    tree.into_preorder().into_iter().map(|(depth, node)| FlameNode { depth, node }).collect()
}

/// Moves `tree`'s nodes into a flat list and leaves the root without children.
fn take_tree(tree: &mut TreeNode) -> Vec<FlameNode> {
    let children = std::mem::take(&mut tree.children);
    flame(TreeNode { children, ..tree.clone() })
}

/// One profile for the page. `report.tree` has no children: the tree is in `flame`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceMemoryProfileView {
    pub file_id: u32,
    pub name: String,
    pub labels: Labels,
    pub report: ProfileReport,
    pub flame: Vec<FlameNode>,
}

/// Target minus base for the page. `report.tree` has no children: the tree of deltas is in `flame`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceMemoryDiffView {
    pub base_file_id: u32,
    pub target_file_id: u32,
    pub base_name: String,
    pub target_name: String,
    pub labels: Labels,
    pub report: DiffReport,
    pub flame: Vec<FlameNode>,
}

/// A series of snapshots for the page; `report.snapshots` are in series order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceMemorySeriesView {
    /// The files as requested.
    pub file_ids: Vec<u32>,
    pub labels: Labels,
    pub report: SeriesReport,
}

impl Session {
    /// The pprof profile of file `file_id`, or why there is none.
    fn pprof(&self, file_id: u32) -> Result<(&str, &PprofFile), EngineError> {
        let f = self.file(file_id)?;
        match &f.file.profile {
            Profile::Pprof(p) => Ok((&f.file.name, p)),
            other => Err(EngineError::WrongFormat {
                file: f.file.name.clone(),
                tool: "Device memory tool".into(),
                found: other.format(),
                needs: "a JAX device memory profile (*.prof from jax.profiler.save_device_memory_profile)".into(),
            }),
        }
    }

    /// The analysis of one profile, `query` applied: what the CLI prints, and the page's view below.
    pub fn device_memory_report(&self, file_id: u32, query: &DeviceMemoryQuery) -> Result<ProfileReport, EngineError> {
        let (_, p) = self.pprof(file_id)?;
        let kept = on_device(p, query);
        Ok(dm::analyze(kept.as_ref().unwrap_or(p), &options(query)))
    }

    pub fn device_memory_profile(&self, file_id: u32, query: &DeviceMemoryQuery) -> Result<DeviceMemoryProfileView, EngineError> {
        let mut report = self.device_memory_report(file_id, query)?;
        let (name, p) = self.pprof(file_id)?;
        let flame = take_tree(&mut report.tree);
        Ok(DeviceMemoryProfileView { file_id, name: name.to_string(), labels: labels(&[p]), report, flame })
    }

    /// `target` minus `base`, stack by stack, `query` applied to both.
    pub fn device_memory_diff_report(
        &self,
        base_file_id: u32,
        target_file_id: u32,
        query: &DeviceMemoryQuery,
    ) -> Result<DiffReport, EngineError> {
        let (_, base) = self.pprof(base_file_id)?;
        let (_, target) = self.pprof(target_file_id)?;
        let (kept_base, kept_target) = (on_device(base, query), on_device(target, query));
        Ok(dm::diff(kept_base.as_ref().unwrap_or(base), kept_target.as_ref().unwrap_or(target), &options(query)))
    }

    pub fn device_memory_diff(
        &self,
        base_file_id: u32,
        target_file_id: u32,
        query: &DeviceMemoryQuery,
    ) -> Result<DeviceMemoryDiffView, EngineError> {
        let mut report = self.device_memory_diff_report(base_file_id, target_file_id, query)?;
        let (base_name, base) = self.pprof(base_file_id)?;
        let (target_name, target) = self.pprof(target_file_id)?;
        let flame = take_tree(&mut report.tree);
        Ok(DeviceMemoryDiffView {
            base_file_id,
            target_file_id,
            base_name: base_name.to_string(),
            target_name: target_name.to_string(),
            labels: labels(&[base, target]),
            report,
            flame,
        })
    }

    /// The series of `file_ids`, ordered by the numbers in their names when they all have one.
    pub fn device_memory_series_report(&self, file_ids: &[u32], query: &DeviceMemoryQuery) -> Result<SeriesReport, EngineError> {
        let files = file_ids.iter().map(|&id| self.pprof(id)).collect::<Result<Vec<_>, _>>()?;
        let kept: Vec<Option<PprofFile>> = files.iter().map(|(_, p)| on_device(p, query)).collect();
        let named: Vec<(&str, &PprofFile)> = files.iter().zip(&kept).map(|((n, p), k)| (*n, k.as_ref().unwrap_or(p))).collect();
        Ok(dm::series(&named, &options(query)))
    }

    pub fn device_memory_series(&self, file_ids: &[u32], query: &DeviceMemoryQuery) -> Result<DeviceMemorySeriesView, EngineError> {
        let report = self.device_memory_series_report(file_ids, query)?;
        let all = file_ids.iter().map(|&id| self.pprof(id).map(|(_, p)| p)).collect::<Result<Vec<_>, _>>()?;
        Ok(DeviceMemorySeriesView { file_ids: file_ids.to_vec(), labels: labels(&all), report })
    }
}

fn options(q: &DeviceMemoryQuery) -> dm::Options {
    dm::Options { fold_library_frames: q.fold_library_frames, kind: q.kind.clone() }
}

/// A sample's string label `key` ("" when absent).
fn label<'a>(p: &'a PprofFile, s: &crate::proto::pprof::Sample, key: &str) -> &'a str {
    s.label.iter().find(|l| p.str(l.key) == key).map_or("", |l| p.str(l.str))
}

/// A copy of `p` with only the samples on `query.device`; `None` (use `p` as is) without a device filter.
fn on_device(p: &PprofFile, query: &DeviceMemoryQuery) -> Option<PprofFile> {
    let device = query.device.as_deref()?;
    let mut proto = p.proto.clone();
    proto.sample.retain(|s| label(p, s, "device") == device);
    Some(PprofFile { proto })
}

fn labels(files: &[&PprofFile]) -> Labels {
    let (mut kinds, mut devices) = (BTreeSet::new(), BTreeSet::new());
    for p in files {
        for s in &p.proto.sample {
            kinds.insert(label(p, s, "kind"));
            devices.insert(label(p, s, "device"));
        }
    }
    kinds.remove("");
    devices.remove("");
    Labels { kinds: kinds.into_iter().map(str::to_string).collect(), devices: devices.into_iter().map(str::to_string).collect() }
}
