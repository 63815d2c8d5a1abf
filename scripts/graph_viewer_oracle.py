# XProf 2.24.2's graph_viewer (type=graph, format=dot) on fixture modules: the oracle for
# `tidemark graph-viewer --format dot` (tests/graph_viewer.rs compares nodes, edges and clusters).
#
# XProf reads "<session dir>/<module>.hlo_proto.pb": for a trace it writes those files itself
# (xspace_to_tool_names); a `--xla_dump_hlo_as_proto` dump is copied there next to a carrier trace
# (as tests/fixtures/scripts/c2_xprof_memory_viewer_on_dump.py does). Each DOT is saved as
# tests/fixtures/graph_viewer/<case>.dot with its stylesheet (one CSS hover rule per edge, several
# KiB, no graph content) and node tooltips emptied, and index.json lists every case's input, module, node and width.
# Usage (from the repository root, XProf 2.24.2 installed: `pip install xprof==2.24.2`):
#   python scripts/graph_viewer_oracle.py
import gzip, json, os, re, shutil, tempfile
from xprof.convert import raw_to_tool_data as r

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests/fixtures/graph_viewer")
SHARED = os.path.join(ROOT, "../shared/fixtures")
CPU = "tests/fixtures/jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz"
TPU = "../shared/fixtures/device/jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb"
GPU_DUMP = "../shared/fixtures/device/nvidia_h200_jax/xla_dump_gpu/module_437688.jit_train_step.sm_9.0a_gpu_after_optimizations.hlo.pb"
# This project's H200 traces: n1 is also kept in the repository (tests/fixtures/device/...), which the
# test reads first, so a checkout without ../shared still compares NVIDIA trace modules.
N1 = "../shared/fixtures/device/nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam.xplane.pb.gz"
N2 = "../shared/fixtures/device/nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16.xplane.pb.gz"

# (case, input, module as XProf names it, node, width)
CASES = [
    ("cpu_ynn_fusion_5_w1", CPU, "jit_train_step(14)", "ynn_fusion.5", 1),
    ("cpu_ynn_fusion_5_w3", CPU, "jit_train_step(14)", "ynn_fusion.5", 3),
    ("cpu_add_select_fusion_w2", CPU, "jit_train_step(14)", "add_select_fusion", 2),
    ("cpu_dot_general_3_w2", CPU, "jit_train_step(14)", "dot_general.3", 2),
    ("tpu_broadcast_add_fusion_1_w1", TPU, "jit_f(12190760917235803885)", "broadcast_add_fusion.1", 1),
    ("tpu_tuple_1_w3", TPU, "jit_f(12190760917235803885)", "tuple.1", 3),
    ("gpu_custom_call_0_w2", GPU_DUMP, "jit_train_step", "custom-call.0", 2),
    ("gpu_while_14_w1", GPU_DUMP, "jit_train_step", "while.14", 1),
    ("gpu_gemm_fusion_dot_7_w2", GPU_DUMP, "jit_train_step", "gemm_fusion_dot.7", 2),
    ("gpu_input_reduce_fusion_2_w3", GPU_DUMP, "jit_train_step", "input_reduce_fusion.2", 3),
    ("gpu_region_4_11_computation", GPU_DUMP, "jit_train_step", "region_4.11", 1),
    # XProf needs a node; these name the entry computation's root, the CLI's default without --node.
    ("nvidia_n1_tuple_5_0_w2", N1, "jit_train_step(5314)", "tuple.5.0", 2),
    ("nvidia_n1_input_scatter_fusion_w1", N1, "jit_train_step(5314)", "input_scatter_fusion", 1),
    ("nvidia_n1_custom_call_1_w3", N1, "jit_train_step(5314)", "custom-call.1", 3),
    ("nvidia_n2_tuple_15_0_w1", N2, "jit_train_step(5312)", "tuple.15.0", 1),
    ("nvidia_n2_cudnn_conv_bw_filter_4_w2", N2, "jit_train_step(5312)", "cudnn-conv-bw-filter.4", 2),
    ("nvidia_n2_loop_reduce_window_fusion_w2", N2, "jit_train_step(5312)", "loop_reduce_window_fusion", 2),
]

STYLESHEET = re.compile(r"stylesheet=<.*?\n>\n", re.S)
# A node's tooltip is its metadata (op name, source stack): not graph content, and it names the
# fixture authors' paths. Edge tooltips ("from -> to") are kept: they name the instructions.
NODE_TOOLTIP = re.compile(r'(>, shape=\w+, tooltip=")(.*?)(", style=)', re.S)


def session(tmp, src):
    """The xplane XProf is pointed at, with the module's .hlo_proto.pb beside it."""
    path = os.path.join(ROOT, src)
    xp = os.path.join(tmp, "session.xplane.pb")
    if src.endswith(".hlo.pb"):
        carrier = os.path.join(ROOT, CPU)
        with gzip.open(carrier) as f, open(xp, "wb") as o:
            o.write(f.read())
        shutil.copy(path, os.path.join(tmp, "jit_train_step.hlo_proto.pb"))
        return xp
    if src.endswith(".gz"):
        with gzip.open(path) as f, open(xp, "wb") as o:
            o.write(f.read())
    else:
        shutil.copy(path, xp)
    r.xspace_to_tool_names([xp])
    return xp


def main():
    os.makedirs(OUT, exist_ok=True)
    index = {}
    sessions = {}
    with tempfile.TemporaryDirectory() as base:
        for case, src, module, node, width in CASES:
            if src not in sessions:
                tmp = os.path.join(base, str(len(sessions)))
                os.makedirs(tmp)
                sessions[src] = session(tmp, src)
            options = {"module_name": module, "type": "graph", "format": "dot", "node_name": node,
                       "graph_width": width, "show_metadata": 1, "merge_fusion": 0}
            data, _ = r.xspace_to_tool_data([sessions[src]], "graph_viewer",
                                            {"graph_viewer_options": options, "use_saved_result": False})
            dot = data.decode() if isinstance(data, bytes) else data
            dot = STYLESHEET.sub("stylesheet=<\n>\n", dot, count=1)
            dot = NODE_TOOLTIP.sub(r"\1\3", dot)
            with open(os.path.join(OUT, case + ".dot"), "w") as f:
                f.write(dot)
            index[case] = {"input": src, "module": module, "node": node, "width": width}
            print(case, len(dot))
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
