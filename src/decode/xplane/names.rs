//! XProf's names of XSpace planes, lines and stats: the one list every decoder and analysis reads
//! them from, so that a name XProf changes is changed here once. XProf defines them in
//! `xla/tsl/profiler/utils/xplane_schema.{h,cc}` (the `k…PlaneName` / `k…LineName` constants and
//! `GetStatTypeStrMap`, each named beside its constant below); the profilers write them as text, and
//! these are the texts.
//!
//! Names that only one decoder reads for a detail of its own format stay beside it, said why there:
//! the allocator's memory-event stats (`analysis::memory_events`), the trace viewer's internal
//! stats it hides (`analysis::trace_viewer::layout`) and the lines it alone derives, the
//! step-grouping roles (`analysis::step_groups::classify`).

// Planes.

/// The host threads' plane (`kHostThreadsPlaneName`).
pub const HOST_PLANE: &str = "/host:CPU";
/// The GPU planes, `/device:GPU:<n>` (`kGpuPlanePrefix`).
pub const GPU_PLANE_PREFIX: &str = "/device:GPU:";
/// The TPU planes, `/device:TPU:<n>` (`kTpuPlanePrefix`).
pub const TPU_PLANE_PREFIX: &str = "/device:TPU:";
/// Other accelerators' planes, `/device:CUSTOM:<n>` (`kCustomPlanePrefix`).
pub const CUSTOM_PLANE_PREFIX: &str = "/device:CUSTOM:";
/// What every device plane's name begins with (the three prefixes above share it).
pub const DEVICE_PLANE_PREFIX: &str = "/device:";
/// The plane of the HLO protos and other metadata (`kMetadataPlaneName`).
pub const METADATA_PLANE: &str = "/host:metadata";
/// The plane of the run's environment, its stats the hosts' and devices' facts (`kTaskEnvPlaneName`).
pub const TASK_ENV_PLANE: &str = "Task Environment";
/// The plane of the scope-range call-stack tree the GPU profiler writes (`kScopeRangeIdTreePlaneName`).
pub const SCOPE_RANGE_TREE_PLANE: &str = "/host:__ScopeRangeCallStack__";

// Lines.

/// The device's XLA ops (`kXlaOpLineName`).
pub const XLA_OPS_LINE: &str = "XLA Ops";
/// The device's XLA modules (`kXlaModuleLineName`).
pub const XLA_MODULES_LINE: &str = "XLA Modules";
/// The device's steps (`kStepLineName`).
pub const STEPS_LINE: &str = "Steps";
/// The TensorFlow ops a TPU ran: what TPU traces call the line XProf now names `kTensorFlowOpLineName`.
pub const TENSORFLOW_OPS_LINE: &str = "TensorFlow Ops";
/// A SparseCore's ops (`kSparseCoreOpLineName`).
pub const SPARSE_CORE_OPS_LINE: &str = "Sparse Core Ops";
/// A SparseCore's modules (`kSparseCoreModuleLineName`).
pub const SPARSE_CORE_MODULES_LINE: &str = "Sparse Core Modules";
/// A SparseCore's XLA ops as the TPU traces read here name the line (XProf's op table reads it
/// beside `kSparseCoreOpLineName`).
pub const SPARSE_CORE_XLA_OPS_LINE: &str = "SparseCore XLA Ops";
/// A SparseCore's steps as the TPU traces read here name the line (`kSparseCoreStepLineName` is
/// `Sparse Core Steps`).
pub const SPARSE_CORE_STEPS_LINE: &str = "SparseCore Steps";
/// The device's asynchronous XLA ops (`kXlaAsyncOpLineName`).
pub const XLA_ASYNC_OPS_LINE: &str = "Async XLA Ops";
/// The framework's name scopes XProf derives on a device (`kTensorFlowNameScopeLineName`).
pub const FRAMEWORK_NAME_SCOPE_LINE: &str = "Framework Name Scope";
/// The framework ops XProf derives on a device (`kTensorFlowOpLineName`).
pub const FRAMEWORK_OPS_LINE: &str = "Framework Ops";
/// The source lines XProf derives on a device (`kSourceLineName`).
pub const SOURCE_LINE: &str = "Source code";
/// The kernel launches XProf derives from the host's launch events (`kKernelLaunchLineName`).
pub const LAUNCH_STATS_LINE: &str = "Launch Stats";

// Stats (`GetStatTypeStrMap`).

/// The framework op an event ran for (`kTfOp`).
pub const TF_OP: &str = "tf_op";
/// The HLO op (`kHloOp`).
pub const HLO_OP: &str = "hlo_op";
/// The HLO module (`kHloModule`).
pub const HLO_MODULE: &str = "hlo_module";
/// The XLA program's id (`kProgramId`).
pub const PROGRAM_ID: &str = "program_id";
/// The HLO op's id in its program (`kSymbolId`).
pub const SYMBOL_ID: &str = "symbol_id";
/// The step group an event belongs to (`kGroupId`).
pub const GROUP_ID: &str = "group_id";
/// The step's name (`kStepName`).
pub const STEP_NAME: &str = "step_name";
/// What ties a GPU kernel to its launch on the host (`kCorrelationId`).
pub const CORRELATION_ID: &str = "correlation_id";
/// An op run eagerly, not in a compiled function (`kIsEager`).
pub const IS_EAGER: &str = "is_eager";
/// A GPU kernel's launch shape and registers (`kKernelDetails`).
pub const KERNEL_DETAILS: &str = "kernel_details";
/// An HLO op's category (`kHloCategory`).
pub const HLO_CATEGORY: &str = "hlo_category";
/// A device plane's device type (`kDeviceTypeString`).
pub const DEVICE_TYPE_STRING: &str = "device_type_string";
/// The name an HLO op shares with its duplicates (`kDeduplicatedName`).
pub const DEDUPLICATED_NAME: &str = "deduplicated_name";
/// An HLO op's shape with its layout (`kShapeWithLayout`).
pub const SHAPE_WITH_LAYOUT: &str = "shape_with_layout";
/// A serialized HloProto on the metadata plane (`kHloProto`).
pub const HLO_PROTO: &str = "Hlo Proto";
