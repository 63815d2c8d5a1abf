//! The HLO modules a decoded file offers the Memory Viewer: every module embedded in an XSpace's
//! `/host:metadata` plane, or the one module of an HloProto dump.

use super::{analyze, MemoryViewerError, Options};
use crate::decode::hlo::{decode_proto, embedded_modules};
use crate::decode::Profile;
use crate::proto::hlo::HloProto;
use serde::Serialize;
use std::borrow::Cow;

/// One module of a file.
pub struct ModuleInput<'a> {
    /// XProf's name for it: `<module>(<program_id>)` inside an XSpace, the module name in a dump.
    pub name: String,
    /// The HloModule's own name.
    pub module_name: String,
    /// The module, or why its embedded proto could not be decoded.
    pub proto: Result<Cow<'a, HloProto>, String>,
}

/// The modules of `profile` in XProf's order; empty for formats that carry none (pprof).
pub fn module_inputs(profile: &Profile) -> Vec<ModuleInput<'_>> {
    match profile {
        Profile::XSpace(space) => embedded_modules(space)
            .into_iter()
            .map(|m| {
                let proto = decode_proto(m.proto_bytes.clone()).map_err(|e| e.to_string());
                let module_name = proto.as_ref().ok().and_then(|p| p.hlo_module.as_ref()).map(|h| h.name.clone()).unwrap_or_default();
                ModuleInput { name: m.name.to_string(), module_name, proto: proto.map(Cow::Owned) }
            })
            .collect(),
        Profile::Hlo(file) => {
            let module_name = file.proto.hlo_module.as_ref().map(|m| m.name.clone()).unwrap_or_default();
            vec![ModuleInput { name: module_name.clone(), module_name, proto: Ok(Cow::Borrowed(&file.proto)) }]
        }
        Profile::Pprof(_) | Profile::Kineto(_) | Profile::TorchSnapshot(_) => Vec::new(),
    }
}

/// The module called `name`: its XProf name (`jit_train_step(14)`) or, when only one module has it,
/// its module name (`jit_train_step`).
pub fn select<'i, 'a>(inputs: &'i [ModuleInput<'a>], name: &str) -> Result<&'i ModuleInput<'a>, MemoryViewerError> {
    if let Some(m) = inputs.iter().find(|m| m.name == name) {
        return Ok(m);
    }
    let by_module: Vec<&ModuleInput> = inputs.iter().filter(|m| m.module_name == name).collect();
    let names = |ms: &mut dyn Iterator<Item = &ModuleInput>| ms.map(|m| m.name.clone()).collect();
    match by_module.as_slice() {
        [one] => Ok(one),
        [] => Err(MemoryViewerError::UnknownModule { module: name.to_string(), known: names(&mut inputs.iter()) }),
        many => Err(MemoryViewerError::AmbiguousModule { module: name.to_string(), candidates: names(&mut many.iter().copied()) }),
    }
}

/// One line of a file's module list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModuleListing {
    pub name: String,
    pub module_name: String,
    /// The peak heap of memory space `options.memory_space`; `None` when it could not be computed.
    pub peak_heap_bytes: Option<i64>,
    /// Why not (no buffer assignment, undecodable proto, bad trace).
    pub problem: Option<String>,
}

/// Every module of `profile` with its peak heap.
pub fn list_modules(profile: &Profile, options: Options) -> Vec<ModuleListing> {
    module_inputs(profile)
        .into_iter()
        .map(|m| {
            let result = m.proto.and_then(|p| analyze(&p, options).map_err(|e| e.to_string()));
            ModuleListing {
                name: m.name,
                module_name: m.module_name,
                peak_heap_bytes: result.as_ref().ok().map(|v| v.peak_heap_bytes),
                problem: result.err(),
            }
        })
        .collect()
}
