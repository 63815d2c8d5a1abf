//! Tensor Core (NVIDIA) / matrix core (AMD) heuristics of XProf's kernel stats: whether a kernel uses
//! them, by its name, and whether the op that launched it could, by the op's name.

/// Substrings of the names of kernels that use Tensor Cores. The first group is XProf's NVIDIA list
/// (`volta_h884gemm`, `turing_fp16_s1688cudnn_fp16`, …). The second is what XProf 2.24 recognises on
/// AMD, as its output on the MI300X/MI355X traces shows: rocBLAS/hipBLASLt `Cijk_…` kernels, XLA's
/// Triton `gemm_fusion_…` kernels and composable-kernel flash attention forward and dQ/dK/dV kernels
/// (not its `OGradDotO` and `ConvertQGrad` helpers).
const TENSOR_CORE_KERNEL_PATTERNS: &[&str] = &[
    "16816",
    "c1688",
    "conv1x1",
    "conv2d_c1_k1",
    "dgrad_1x1_stride_2x2",
    "direct_group",
    "first_layer_wgrad_kernel",
    "h1688",
    "h884",
    "hmma",
    "i16832",
    "i8816",
    "s884",
    "s1688",
    "xmma_gemm",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_sparse_gemm",
    "xmma_warp_specialized_implicit_gemm",
    // AMD
    "Cijk_",
    "gemm_fusion",
    "FmhaFwdKernel",
    "FmhaBwdDQDKDVKernel",
];

pub fn is_kernel_using_tensor_core(kernel_name: &str) -> bool {
    TENSOR_CORE_KERNEL_PATTERNS.iter().any(|p| kernel_name.contains(p))
}

/// Whether an op of this name can use Tensor Cores (not exhaustive, as in XProf): convolutions and
/// matrix multiplications by TensorFlow op type, and JAX's `dot_general` / `conv_general_dilated`.
pub fn is_op_tensor_core_eligible(op_name: &str) -> bool {
    const SUFFIXES: &[&str] = &[
        "Conv2D",
        "Conv2DBackpropFilter",
        "Conv2DBackpropInput",
        "Conv3D",
        "DepthwiseConv2dNative",
        "DepthwiseConv2dNativeBackpropFilter",
        "DepthwiseConv2dNativeBackpropInput",
        "/MatMul",
        "FusedMatMul",
        "/CudnnRNN",
        "XlaDot",
        "XlaDotV2",
        "dot_general",
        "conv_general_dilated",
    ];
    const INFIXES: &[&str] = &["BatchMatMul", "CudnnRNNV", "CudnnRNNForward", "CudnnRNNBackprop"];
    SUFFIXES.iter().any(|s| op_name.ends_with(s)) || INFIXES.iter().any(|s| op_name.contains(s))
}

/// Whether an einsum `equation` (`ab,bc->ac`) multiplies two operands, which Tensor Cores can do.
pub fn is_einsum_tensor_core_eligible(equation: &str) -> bool {
    let mut sides = equation.split("->");
    match (sides.next(), sides.next(), sides.next()) {
        (Some(inputs), Some(_), None) if !equation.is_empty() => inputs.split(',').count() == 2,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_and_ops() {
        assert!(is_kernel_using_tensor_core("volta_h884gemm_64x64_ldg8_nn"));
        assert!(is_kernel_using_tensor_core("Cijk_Ailk_Bljk_BBS_BH_MT256x128x64_MI16x16x16x1_SN.kd"));
        assert!(!is_kernel_using_tensor_core("loop_reduce_fusion.kd"));
        assert!(is_op_tensor_core_eligible("model/dense/MatMul"));
        assert!(!is_op_tensor_core_eligible("model/dense/MatMulX"));
        assert!(is_op_tensor_core_eligible("jit(f)/jvp(bsd,de->bse)/dot_general"));
        assert!(is_op_tensor_core_eligible("a/BatchMatMulV2"));
        assert!(!is_op_tensor_core_eligible("jit(f)/transpose"));
        assert!(is_einsum_tensor_core_eligible("ab,bc->ac"));
        assert!(!is_einsum_tensor_core_eligible("ab->ba"));
        assert!(!is_einsum_tensor_core_eligible("a,b,c->abc"));
        assert!(!is_einsum_tensor_core_eligible(""));
    }
}
