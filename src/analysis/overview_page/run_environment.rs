//! The run environment as XProf states it: one host, one task, and the device kind and count from
//! the device planes (`SetRunEnvironment`), and whether the program trains (`ModelTracker`: some HLO
//! instruction lies in a TensorFlow gradient scope or a JAX `transpose(` scope).

use crate::analysis::device_ops::gpu_perf::GpuCapabilities;
use crate::analysis::device_planes::{device_planes, DeviceKind};
use crate::analysis::framework_op_stats::has_gradients;
use crate::analysis::xla_modules::every_decoded_module;
use crate::decode::xplane::XSpace;
use crate::proto::hlo as pb;

#[derive(Debug, Clone, PartialEq)]
pub struct RunEnvironment {
    pub host_count: u32,
    pub task_count: u32,
    /// "CPU", the GPU's model as XProf names it (`AMD GPU - gfx942`; "GPU" where Tidemark does not
    /// derive the name), or the TPU's `device_type_string`.
    pub device_type: String,
    pub device_core_count: usize,
    /// XProf's hardware type name: `CPU_ONLY`, `GPU`, `TPU`.
    pub hardware_type: &'static str,
    pub is_training: bool,
}

impl RunEnvironment {
    pub fn of(space: &XSpace) -> Self {
        Self::with_modules(space, every_decoded_module(space).iter().map(|(_, _, proto)| proto))
    }

    /// [`RunEnvironment::of`] for a caller that has decoded every HLO module of `space` already
    /// (`modules`: each decodable one, in the trace's order).
    pub fn with_modules<'a>(space: &XSpace, modules: impl IntoIterator<Item = &'a pb::HloProto>) -> Self {
        let (device_type, device_core_count, hardware_type) = match device_planes(space) {
            Some((DeviceKind::Gpu, planes)) => (GpuCapabilities::of(planes[0]).model_name(), planes.len(), "GPU"),
            Some((DeviceKind::Tpu, planes)) => {
                let name = planes[0]
                    .stat(crate::decode::xplane::names::DEVICE_TYPE_STRING)
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                (name, planes.len(), "TPU")
            }
            None => ("CPU".to_string(), 0, "CPU_ONLY"),
        };
        RunEnvironment { host_count: 1, task_count: 1, device_type, device_core_count, hardware_type, is_training: is_training(modules) }
    }
}

/// Whether any of the HLO `modules` has a gradient: an instruction whose TensorFlow op (a valid op
/// name and type) lies in a `gradient_tape` or `gradients…` scope, or whose JAX op (or op without a
/// type) lies in a `transpose(…)` scope. A module that cannot be decoded says nothing.
fn is_training<'a>(modules: impl IntoIterator<Item = &'a pb::HloProto>) -> bool {
    modules.into_iter().any(|proto| {
        proto
            .hlo_module
            .iter()
            .flat_map(|m| &m.computations)
            .flat_map(|c| &c.instructions)
            .filter_map(|i| i.metadata.as_ref())
            .any(|md| has_gradients(&md.op_name, &md.op_type))
    })
}

/// The XProf order of hardware types (`UNKNOWN_HARDWARE < CPU_ONLY < GPU < TPU`), by name.
fn hardware_rank(name: &str) -> u8 {
    match name {
        "CPU_ONLY" => 1,
        "GPU" => 2,
        "TPU" => 3,
        _ => 0,
    }
}

impl RunEnvironment {
    /// The run environment of several hosts, each given with its trace's host names, combined as
    /// XProf combines them (`CombineRunEnvironment`): the hosts are the distinct host names, tasks and
    /// device cores add up, the device type is the last host's that names a device (else the first
    /// host's), the hardware type the highest, and "training" the last host's.
    pub fn combined<'a>(hosts: impl IntoIterator<Item = (&'a RunEnvironment, &'a [String])>) -> RunEnvironment {
        let mut names: Vec<&str> = Vec::new();
        let mut env = RunEnvironment {
            host_count: 0,
            task_count: 0,
            device_type: String::new(),
            device_core_count: 0,
            hardware_type: "",
            is_training: false,
        };
        for (src, hostnames) in hosts {
            for h in hostnames {
                if !names.contains(&h.as_str()) {
                    names.push(h);
                }
            }
            env.host_count = names.len() as u32;
            if src.device_type != "CPU" && src.device_type != "Device" {
                env.device_type.clone_from(&src.device_type);
                env.device_core_count += src.device_core_count;
            } else if env.device_type.is_empty() {
                env.device_type.clone_from(&src.device_type);
            }
            if hardware_rank(src.hardware_type) > hardware_rank(env.hardware_type) {
                env.hardware_type = src.hardware_type;
            }
            env.task_count += src.task_count;
            env.is_training = src.is_training;
        }
        env
    }
}
