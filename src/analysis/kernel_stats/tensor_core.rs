//! Tensor Core (NVIDIA) / matrix core (AMD) heuristics of XProf's kernel stats: whether a kernel uses
//! them, by its name and the vendor its device plane names, and whether the op that launched it could,
//! by the op's name. The rules and lists are XProf 2.24's (`IsKernelUsingTensorCore`,
//! `IsOpTensorCoreEligible`, `IsEinsumTensorCoreEligible`, read from its release build, which differs
//! from the older upstream source: a vendor dispatch, an AMD rule, JAX op names).

use crate::analysis::device_ops::gpu_perf::{AMD, NVIDIA};

/// Substrings of the names of NVIDIA kernels that use Tensor Cores (`volta_h884gemm`,
/// `turing_fp16_s1688cudnn_fp16`, `sm90_xmma_gemm_…`). Hopper's `nvjet_…` cuBLAS kernels and XLA's
/// Triton `gemm_fusion_…` kernels match none, so XProf says they do not use Tensor Cores.
const NVIDIA_TENSOR_CORE_PATTERNS: &[&str] = &[
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
];

/// AMD kernels whose names say they do not use matrix cores, whatever else the name holds
/// (composable-kernel helpers of flash attention and MoE).
const AMD_EXCLUDED_PATTERNS: &[&str] = &["_odo_", "_dq_convert", "_dq_shuffle", "topksoftmax", "DqAccPrezeroKernel"];

/// Substrings of the names of AMD kernels that use matrix cores: composable-kernel tile shapes, then
/// rocBLAS/hipBLASLt custom kernels, XLA's Triton gemms, MIOpen, aiter and MFMA/WMMA kernels.
const AMD_MATRIX_CORE_PATTERNS: &[&str] = &[
    "TileGemmShape<",
    "TileFmhaShape<",
    "TileFmhaBwdShape<",
    "TileFlatmmShape<",
    "TileSageAttnShape<",
    "gemm_fusion",
    "Custom_Cijk_",
    "_xdl",
    "gtcx",
    "miopenSp3AsmConvRage",
    "moe_gemm",
    "moe_mxgemm",
    "wmma",
    "aiter",
    "FMHA_FWD",
    "attn_fwd",
    "bwd_kernel_",
    "mfma",
];

/// Whether a kernel named `kernel_name` on a device of `vendor` (its plane's `device_vendor` stat)
/// uses Tensor Cores; never on a plane that names neither NVIDIA nor AMD (older TensorFlow traces).
pub fn is_kernel_using_tensor_core(vendor: &str, kernel_name: &str) -> bool {
    match vendor {
        NVIDIA => NVIDIA_TENSOR_CORE_PATTERNS.iter().any(|p| kernel_name.contains(p)),
        AMD => is_amd_kernel_using_matrix_cores(kernel_name),
        _ => false,
    }
}

fn is_amd_kernel_using_matrix_cores(kernel_name: &str) -> bool {
    if AMD_EXCLUDED_PATTERNS.iter().any(|p| kernel_name.contains(p)) {
        return false;
    }
    names_mfma_instruction(kernel_name) || AMD_MATRIX_CORE_PATTERNS.iter().any(|p| kernel_name.contains(p))
}

/// Whether the name holds a Tensile MFMA instruction shape, `_MI<m>x<n>x<k>` (`…_MI16x16x16x1_…`):
/// three runs of digits joined by `x` after `_MI`.
fn names_mfma_instruction(kernel_name: &str) -> bool {
    kernel_name.match_indices("_MI").any(|(at, _)| {
        let mut rest = &kernel_name[at + 3..];
        for dim in 0..3 {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return false;
            }
            rest = &rest[digits..];
            if dim < 2 {
                let Some(after_x) = rest.strip_prefix('x') else { return false };
                rest = after_x;
            }
        }
        true
    })
}

/// Whether an op of this name can use Tensor Cores (not exhaustive, as in XProf): convolutions and
/// matrix multiplications by TensorFlow op type, and any op whose name holds JAX's `dot_general` or
/// `conv_general_dilated`.
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
    ];
    const INFIXES: &[&str] = &["BatchMatMul", "CudnnRNNV", "CudnnRNNForward", "CudnnRNNBackprop", "dot_general", "conv_general_dilated"];
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
    fn nvidia_kernels() {
        assert!(is_kernel_using_tensor_core(NVIDIA, "volta_h884gemm_64x64_ldg8_nn"));
        assert!(is_kernel_using_tensor_core(NVIDIA, "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x256x32"));
        assert!(!is_kernel_using_tensor_core(NVIDIA, "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"));
        assert!(!is_kernel_using_tensor_core(NVIDIA, "gemm_fusion_dot_4"));
        // A plane that names no vendor: never.
        assert!(!is_kernel_using_tensor_core("", "volta_h884gemm_64x64_ldg8_nn"));
    }

    #[test]
    fn amd_kernels() {
        let amd = |name| is_kernel_using_tensor_core(AMD, name);
        assert!(amd("Cijk_Ailk_Bljk_BBS_BH_MT256x128x64_MI16x16x16x1_SN.kd"));
        assert!(amd("gemm_fusion_dot_4"));
        assert!(amd("ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync<ck_tile::TileFmhaShape<…>>>"));
        assert!(!amd("ck_tile::FmhaBwdOGradDotOKernel<…_odo_…TileFmhaShape<…>>"));
        assert!(!amd("Cijk_Ailk_Bljk_BBS_BH_MT256x128x64_MI16x16x_SN"));
        assert!(!amd("Cijk_Ailk_Bljk_BBS_BH_MT256x128x64_MIx16x16_SN"));
        assert!(amd("a_MI16x16x_b_MI32x32x8"));
        assert!(!amd("loop_reduce_fusion.kd"));
        assert!(!amd("volta_h884gemm_64x64_ldg8_nn"));
    }

    #[test]
    fn ops() {
        assert!(is_op_tensor_core_eligible("model/dense/MatMul"));
        assert!(!is_op_tensor_core_eligible("model/dense/MatMulX"));
        assert!(is_op_tensor_core_eligible("jit(f)/jvp(bsd,de->bse)/dot_general"));
        assert!(is_op_tensor_core_eligible("jit(f)/dot_general_thing"));
        assert!(is_op_tensor_core_eligible("a/BatchMatMulV2"));
        assert!(!is_op_tensor_core_eligible("jit(f)/transpose"));
        assert!(is_einsum_tensor_core_eligible("ab,bc->ac"));
        assert!(!is_einsum_tensor_core_eligible("ab->ba"));
        assert!(!is_einsum_tensor_core_eligible("a,b,c->abc"));
        assert!(!is_einsum_tensor_core_eligible(""));
    }
}
