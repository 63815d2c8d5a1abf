//! The op tree per thread (`NodeParserMixin.parse_nodes`, `OpTreeBuilder._build_tree`,
//! `OperatorNode.fill_stats`): CPU ops nested by time containment, runtime calls attached to the op
//! with their external id, device work attached to the runtime call with its correlation id.

use crate::decode::kineto::{is_collective, Kind, KinetoTrace};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Kernel names that use Tensor Cores (`TC_Allowlist`, substring match).
const TC_KERNELS: [&str; 18] = [
    "h884",
    "s884",
    "h1688",
    "s1688",
    "hmma",
    "i8816",
    "16816",
    "dgrad_1x1_stride_2x2",
    "first_layer_wgrad_kernel",
    "conv1x1",
    "conv2d_c1_k1",
    "direct_group",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_warp_specialized_implicit_gemm",
    "xmma_gemm",
    "xmma_sparse_gemm",
    "c1688",
];

/// Ops eligible for Tensor Cores (`TC_OP_Allowlist`, exact names).
const TC_OPS: [&str; 45] = [
    "aten::_convolution",
    "aten::conv1d",
    "aten::conv2d",
    "aten::conv3d",
    "aten::conv_tbc",
    "aten::conv_transpose1d",
    "aten::conv_transpose2d",
    "aten::conv_transpose3d",
    "aten::convolution",
    "aten::cudnn_convolution",
    "aten::cudnn_convolution_transpose",
    "aten::prelu",
    "aten::addmm",
    "aten::addmv",
    "aten::addr",
    "aten::matmul",
    "aten::mm",
    "aten::mv",
    "aten::linear",
    "aten::addbmm",
    "aten::baddbmm",
    "aten::bmm",
    "aten::chain_matmul",
    "aten::linalg_multi_dot",
    "aten::_thnn_fused_lstm_cell",
    "aten::_thnn_fused_gru_cell",
    "aten::lstm_cell",
    "aten::gru_cell",
    "aten::rnn_tanh_cell",
    "aten::rnn_relu_cell",
    "CudnnConvolutionBackward",
    "BmmBackward0",
    "aten::cudnn_convolution_transpose_backward",
    "CudnnConvolutionTransposeBackward",
    "MmBackward",
    "aten::cudnn_convolution_backward_weight",
    "aten::addmm_",
    "AddmvBackward",
    "MvBackward",
    "aten::cudnn_convolution_transpose_backward_weight",
    "aten::cudnn_convolution_transpose_backward_input",
    "AddmmBackward",
    "aten::cudnn_convolution_backward_input",
    "AddbmmBackward",
    "aten::cudnn_convolution_backward",
];

pub fn kernel_uses_tc(name: &str) -> bool {
    TC_KERNELS.iter().any(|p| name.contains(p))
}

/// The plugin's node classes, which decide what counts as an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Root,
    Operator,
    ProfilerStep,
    Module,
    DataLoader,
    Optimizer,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub class: Class,
    /// The event's type (`Operator`, `Python`, ...); the root is `Python`.
    pub kind: Kind,
    pub name: u32,
    pub start: f64,
    pub end: f64,
    pub external_id: Option<i64>,
    pub has_call_stack: bool,
    /// Index into [`KinetoTrace::input_dims`].
    pub input_dims: u32,
    pub children: Vec<usize>,
    pub runtimes: Vec<usize>,
    pub device_duration: f64,
    pub self_host_duration: f64,
    pub self_device_duration: f64,
    pub tc_eligible: bool,
    pub tc_self_duration: f64,
    pub tc_total_duration: f64,
    /// Whether the device durations stayed Python's int 0.
    pub device_int: bool,
    pub self_device_int: bool,
}

#[derive(Debug, Clone)]
pub struct Runtime {
    pub start: f64,
    pub end: f64,
    /// The root's stand-in for device work no runtime call launched.
    pub dummy: bool,
    pub device_nodes: Vec<usize>,
    pub device_duration: f64,
    pub tc_duration: f64,
}

#[derive(Debug, Clone)]
pub struct Device {
    pub kind: Kind,
    pub name: u32,
    pub start: f64,
    pub end: f64,
    /// Index into the trace's kernels, for kernels.
    pub kernel: Option<usize>,
    pub op_name: Option<u32>,
    pub op_tc_eligible: bool,
    pub tc_used: bool,
}

/// The op trees of every thread, with the runtime calls and device work they hold.
pub struct OpTree {
    pub nodes: Vec<Node>,
    pub runtimes: Vec<Runtime>,
    pub devices: Vec<Device>,
    /// (tid, root node) per thread, in order of first appearance.
    pub roots: Vec<(i64, usize)>,
    pub used_devices: BTreeSet<i64>,
    comm_ids: HashSet<i64>,
}

impl OpTree {
    pub fn comm_external_ids(&self) -> &HashSet<i64> {
        &self.comm_ids
    }

    /// Whether the plugin counts `n` as an operator (`is_operator_node`).
    pub fn is_operator(&self, n: usize, trace: &KinetoTrace) -> bool {
        let node = &self.nodes[n];
        let name = self.name(n, trace);
        node.class == Class::Operator
            && node.kind == Kind::Operator
            && name != "DataParallel.forward"
            && name != "DistributedDataParallel.forward"
            && !name.starts_with("Optimizer.")
    }

    pub fn build(trace: &KinetoTrace, order: &[usize]) -> OpTree {
        let mut t = OpTree {
            nodes: Vec::new(),
            runtimes: Vec::new(),
            devices: Vec::new(),
            roots: Vec::new(),
            used_devices: BTreeSet::new(),
            comm_ids: HashSet::new(),
        };
        let mut tid_lists: Vec<(i64, Vec<usize>)> = Vec::new();
        let mut tid_index: HashMap<i64, usize> = HashMap::new();
        let mut zero_rts: HashMap<i64, Vec<usize>> = HashMap::new();
        let mut corr_to_device: Vec<(Option<i64>, Vec<usize>)> = Vec::new();
        let mut corr_device_index: HashMap<Option<i64>, usize> = HashMap::new();
        let mut corr_to_runtime: HashMap<Option<i64>, usize> = HashMap::new();
        let mut ext_to_runtime: HashMap<Option<i64>, Vec<usize>> = HashMap::new();
        for &i in order {
            let e = &trace.events[i];
            let name = trace.name(e);
            match e.kind {
                Kind::Kernel | Kind::Memcpy | Kind::Memset => {
                    if let Some(pid) = e.pid {
                        t.used_devices.insert(pid);
                    }
                    let d = t.devices.len();
                    t.devices.push(Device {
                        kind: e.kind,
                        name: e.name,
                        start: e.ts,
                        end: e.ts + e.dur,
                        kernel: (e.kind == Kind::Kernel).then_some(e.detail as usize),
                        op_name: None,
                        op_tc_eligible: false,
                        tc_used: kernel_uses_tc(name),
                    });
                    match corr_to_runtime.get(&e.correlation) {
                        Some(&r) => t.runtimes[r].device_nodes.push(d),
                        None => {
                            let slot = *corr_device_index.entry(e.correlation).or_insert_with(|| {
                                corr_to_device.push((e.correlation, Vec::new()));
                                corr_to_device.len() - 1
                            });
                            corr_to_device[slot].1.push(d);
                        }
                    }
                }
                Kind::Runtime => {
                    let mut device_nodes = match corr_device_index.remove(&e.correlation) {
                        Some(slot) => std::mem::take(&mut corr_to_device[slot].1),
                        None => Vec::new(),
                    };
                    let devs = &t.devices;
                    device_nodes.sort_by(|&a, &b| devs[a].start.total_cmp(&devs[b].start).then(devs[b].end.total_cmp(&devs[a].end)));
                    let r = t.runtimes.len();
                    t.runtimes.push(Runtime {
                        start: e.ts,
                        end: e.ts + e.dur,
                        dummy: false,
                        device_nodes,
                        device_duration: 0.0,
                        tc_duration: 0.0,
                    });
                    corr_to_runtime.insert(e.correlation, r);
                    ext_to_runtime.entry(e.external_id).or_default().push(r);
                    if e.external_id == Some(0) {
                        if let Some(tid) = e.tid {
                            zero_rts.entry(tid).or_default().push(r);
                        }
                    }
                }
                Kind::Python | Kind::Operator | Kind::ProfilerStep | Kind::Module | Kind::Communication => {
                    let class = match e.kind {
                        Kind::ProfilerStep => Class::ProfilerStep,
                        Kind::Module => Class::Module,
                        _ if is_dataloader_name(name) => Class::DataLoader,
                        _ if name.starts_with("Optimizer.step") => Class::Optimizer,
                        _ => Class::Operator,
                    };
                    if is_collective(name) {
                        if let Some(x) = e.external_id {
                            t.comm_ids.insert(x);
                        }
                    }
                    let n = t.nodes.len();
                    t.nodes.push(Node {
                        class,
                        kind: e.kind,
                        name: e.name,
                        start: e.ts,
                        end: e.ts + e.dur,
                        // A module's external id is always 0 in traces; the plugin drops it.
                        external_id: if e.kind == Kind::Module { None } else { e.external_id },
                        has_call_stack: e.has_call_stack,
                        input_dims: e.input_dims,
                        children: Vec::new(),
                        runtimes: Vec::new(),
                        device_duration: 0.0,
                        self_host_duration: 0.0,
                        self_device_duration: 0.0,
                        tc_eligible: TC_OPS.contains(&name),
                        tc_self_duration: 0.0,
                        tc_total_duration: 0.0,
                        device_int: true,
                        self_device_int: true,
                    });
                    let tid = e.tid.unwrap_or(0);
                    let slot = *tid_index.entry(tid).or_insert_with(|| {
                        tid_lists.push((tid, Vec::new()));
                        tid_lists.len() - 1
                    });
                    tid_lists[slot].1.push(n);
                }
                _ => {}
            }
        }
        // Runtime calls go to the first op (threads in order, ops in time order) with their external id.
        for (_, list) in &tid_lists {
            for &n in list {
                if let Some(rts) = ext_to_runtime.remove(&t.nodes[n].external_id) {
                    t.nodes[n].runtimes.extend(rts);
                }
            }
        }
        // Device work whose launch was not captured: only its kernels, under the first thread with steps.
        let staled: Vec<usize> = corr_to_device
            .iter()
            .filter(|(c, _)| corr_device_index.contains_key(c))
            .flat_map(|(_, ds)| ds.iter().copied())
            .filter(|&d| t.devices[d].kind == Kind::Kernel)
            .collect();
        let mut staled = Some(staled).filter(|s| !s.is_empty());
        for (tid, mut list) in tid_lists {
            let nodes = &t.nodes;
            list.sort_by(|&a, &b| nodes[a].start.total_cmp(&nodes[b].start).then(nodes[b].end.total_cmp(&nodes[a].end)));
            let main = list.iter().any(|&n| trace.names[t.nodes[n].name as usize].starts_with("ProfilerStep#"));
            let mut root_rts = zero_rts.remove(&tid).unwrap_or_default();
            if main {
                if let Some(devs) = staled.take() {
                    let r = t.runtimes.len();
                    t.runtimes.push(Runtime {
                        start: f64::NAN,
                        end: f64::NAN,
                        dummy: true,
                        device_nodes: devs,
                        device_duration: 0.0,
                        tc_duration: 0.0,
                    });
                    t.fill_runtime(r, None);
                    root_rts.push(r);
                }
            }
            let root = t.build_thread(&list, root_rts);
            t.roots.push((tid, root));
        }
        t
    }

    fn build_thread(&mut self, list: &[usize], root_rts: Vec<usize>) -> usize {
        let root = self.nodes.len();
        self.nodes.push(Node {
            class: Class::Root,
            kind: Kind::Python,
            name: u32::MAX,
            start: f64::NEG_INFINITY,
            end: f64::INFINITY,
            external_id: None,
            has_call_stack: false,
            input_dims: 0,
            children: Vec::new(),
            runtimes: root_rts,
            device_duration: 0.0,
            self_host_duration: 0.0,
            self_device_duration: 0.0,
            tc_eligible: false,
            tc_self_duration: 0.0,
            tc_total_duration: 0.0,
            device_int: true,
            self_device_int: true,
        });
        let mut stack = vec![root];
        for &n in list {
            loop {
                let tail = *stack.last().expect("the root stays");
                if self.nodes[n].start < self.nodes[tail].end {
                    if self.nodes[n].end <= self.nodes[tail].end {
                        self.nodes[tail].children.push(n);
                        stack.push(n);
                    }
                    // else: ranges on one thread that intersect; the plugin drops the node.
                    break;
                }
                stack.pop();
            }
        }
        self.remove_dup_nodes(root);
        self.fill_stats(root);
        let first = self.nodes[root].children.first().map(|&c| self.nodes[c].start);
        let last = self.nodes[root].children.last().map(|&c| self.nodes[c].end);
        self.nodes[root].start = first.unwrap_or(f64::NAN);
        self.nodes[root].end = last.unwrap_or(f64::NAN);
        root
    }

    /// Merges an op into its only child of the same name (`remove_dup_nodes`).
    fn remove_dup_nodes(&mut self, root: usize) {
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            loop {
                let node = &self.nodes[n];
                if node.children.len() != 1 {
                    break;
                }
                let c = node.children[0];
                let child = &self.nodes[c];
                if !(node.name == child.name && node.kind == Kind::Operator && child.kind == Kind::Operator) {
                    break;
                }
                let (children, runtimes) = (child.children.clone(), child.runtimes.clone());
                self.nodes[n].children = children;
                self.nodes[n].runtimes = runtimes;
            }
            stack.extend(self.nodes[n].children.iter().rev());
        }
    }

    fn fill_runtime(&mut self, r: usize, op: Option<usize>) {
        let (op_name, op_tc) = match op {
            Some(o) => (Some(self.nodes[o].name), self.nodes[o].tc_eligible),
            None => (None, false),
        };
        for k in 0..self.runtimes[r].device_nodes.len() {
            let d = self.runtimes[r].device_nodes[k];
            let dev = &mut self.devices[d];
            if op.is_some() {
                dev.op_name = op_name;
                dev.op_tc_eligible = op_tc;
            }
            let dur = dev.end - dev.start;
            let tc = dev.tc_used;
            self.runtimes[r].device_duration += dur;
            if tc {
                self.runtimes[r].tc_duration += dur;
            }
        }
    }

    /// `OperatorNode.fill_stats`, children before parents, without recursion.
    fn fill_stats(&mut self, root: usize) {
        let mut pre = Vec::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            let nodes = &self.nodes;
            let mut children = nodes[n].children.clone();
            children.sort_by(|&a, &b| nodes[a].start.total_cmp(&nodes[b].start).then(nodes[b].end.total_cmp(&nodes[a].end)));
            let rts = &self.runtimes;
            let mut runtimes = nodes[n].runtimes.clone();
            let key = |r: usize| if rts[r].dummy { (f64::INFINITY, f64::INFINITY) } else { (rts[r].start, -rts[r].end) };
            runtimes.sort_by(|&a, &b| {
                let (ka, kb) = (key(a), key(b));
                ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
            });
            self.nodes[n].children = children;
            self.nodes[n].runtimes = runtimes;
            pre.push(n);
            stack.extend(self.nodes[n].children.iter().copied());
        }
        for &n in pre.iter().rev() {
            for k in 0..self.nodes[n].runtimes.len() {
                let r = self.nodes[n].runtimes[k];
                self.fill_runtime(r, Some(n));
            }
            let is_op_type = self.nodes[n].kind == Kind::Operator;
            let mut node = self.nodes[n].clone();
            node.self_host_duration = node.end - node.start;
            for &c in &node.children {
                let child = &self.nodes[c];
                node.device_duration += child.device_duration;
                node.device_int &= child.device_int;
                node.self_host_duration -= child.end - child.start;
                node.tc_total_duration += child.tc_total_duration;
                if is_op_type && !node.tc_eligible && child.tc_eligible {
                    node.tc_eligible = true;
                }
            }
            for &r in &node.runtimes {
                let rt = &self.runtimes[r];
                if !rt.dummy {
                    node.self_host_duration -= rt.end - rt.start;
                }
                node.device_duration += rt.device_duration;
                node.self_device_duration += rt.device_duration;
                if !rt.device_nodes.is_empty() {
                    node.device_int = false;
                    node.self_device_int = false;
                }
                node.tc_self_duration += rt.tc_duration;
                node.tc_total_duration += rt.tc_duration;
                if is_op_type && !node.tc_eligible && rt.tc_duration > 0.0 {
                    node.tc_eligible = true;
                }
            }
            self.nodes[n] = node;
        }
    }

    /// Operators and the kernels under each thread's tree, children first (`get_operator_and_kernels`).
    pub fn operators_and_kernels(&self, trace: &KinetoTrace) -> (Vec<usize>, Vec<usize>) {
        let mut ops = Vec::new();
        let mut kernels = Vec::new();
        for &(_, root) in &self.roots {
            // Post-order: (node, children visited).
            let mut stack = vec![(root, false)];
            while let Some((n, done)) = stack.pop() {
                if !done {
                    stack.push((n, true));
                    for &c in self.nodes[n].children.iter().rev() {
                        stack.push((c, false));
                    }
                    continue;
                }
                for &r in &self.nodes[n].runtimes {
                    kernels.extend(self.runtimes[r].device_nodes.iter().copied().filter(|&d| self.devices[d].kind == Kind::Kernel));
                }
                if self.is_operator(n, trace) {
                    ops.push(n);
                }
            }
        }
        (ops, kernels)
    }

    /// The name of node `n` (the root's is `CallTreeRoot`).
    pub fn name<'a>(&self, n: usize, trace: &'a KinetoTrace) -> &'a str {
        match self.nodes[n].name {
            u32::MAX => "CallTreeRoot",
            i => &trace.names[i as usize],
        }
    }
}

fn is_dataloader_name(name: &str) -> bool {
    name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__") || name.starts_with("enumerate(DataPipe)#")
}
