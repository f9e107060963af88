#pragma once
// Multi-mode cells (Ha et al., "M3XU: Achieving High-Precision and Complex Matrix
// Multiplication with Low-Precision MXUs"). A cell's multiply-add W = W + y * c in one of
// these arithmetics; every executor calls the same function, so every executor gets the
// same bits in every mode.
//   fp64        fused multiply-add in binary64 (default)
//   fp32        operands rounded to binary32, fused multiply-add in binary32 (the paper's
//               FP32-MXU: a separate, larger unit, Sec. II-B and Table III)
//   tf32, bf16, fp16
//               operands rounded to the format (round to nearest even), the product is exact
//               in binary32 (at most 11 x 11 significand bits), accumulated in binary32
//   m3xu-fp32   operands binary32; each significand split on its IEEE bit pattern into a
//               high and a low 12-bit half (integer operations); the partial products
//               hi*hi + lo*lo, then hi*lo + lo*hi (Eqs. 3-8), each exact, sum to the exact
//               binary32 x binary32 product. The unit writes FP32 (Sec. V-B: "exactly the same
//               as FP32"): in a cell step the exact product is added to the binary32 W with
//               one rounding, so the mode equals an fp32 FMA cell bit for bit. One call of the
//               planar MXU is one MMA: its exact products are summed wide and added to the
//               binary32 C once (mma_*, below).
//   m3xu-fp32c  complex binary32 (Eq. 9): the exact products yr*cr, yi*ci, yr*ci, yi*cr; a
//               step adds yr*cr - yi*ci to W's real part and yr*ci + yi*cr to its imaginary
//               part, each exact sum with one rounding to binary32
//   m3xu-fp32-wide
//               beyond the paper, what a wide accumulator would buy: the exact products
//               accumulate in binary64 over the whole dot product and W is rounded to
//               binary32 only when the stage stores it (complex: per component)
//   3xtf32      software baseline (CUTLASS's tensorop sgemm, Table IV): a = a_hi + a_lo with
//               a_hi = tf32(a), a_lo = tf32(a - a_hi); products a_lo*b_hi, a_hi*b_lo, a_hi*b_hi
//               (small ones first) accumulated in binary32; a_lo*b_lo dropped
//   4xtf32      the same with a_lo*b_lo added first (the paper, Sec. VI-B: "perfectly
//               emulating FP32 GEMM using TF32 Tensor Core will require 4 TF32 GEMM")
//   3xbf16      the EEHC-style baseline (Table IV, fp32-B): 3xtf32's scheme with bf16 halves
// A real run in a complex-only mode (m3xu-fp32c) uses its real part: one exact product.
#include <array>
#include <cstdint>
#include <string>

#include "core/types.hpp"

namespace triada {

enum class CellMode {
  fp64,
  fp32,
  tf32,
  bf16,
  fp16,
  m3xu_fp32,
  m3xu_fp32c,
  m3xu_fp32_wide,
  x3tf32,
  x4tf32,
  x3bf16
};

// Every cell mode, declared once: what parses, prints, costs and rounds per mode, and the
// [energy] key of one sub-step, is read from here.
//
// Sub-steps (the cost model's cycles per time step) count passes of the mode's unit, as
// the M3XU paper counts them relative to the p-bit (fp16) unit: a p-bit MAC is one pass,
// a p-bit complex MAC four (four real products; Observation 3: a p-bit M x N x K CGEMM
// takes 4c), a 2p-bit MAC on the p-bit unit four (Corollaries 1-2: a quarter of the p-bit
// rate) and a 2p-bit complex MAC sixteen (Corollary 3: 16c). A software scheme of k narrow
// products takes k passes (k per product of its complex MAC's four). fp32 is the paper's
// FP32-MXU, a separate larger unit: a MAC is one pass of its own unit (four for complex, as
// any p-bit MXU). fp64 is the TriADA paper's cell: one fp64 FMA unit, so a complex MAC is
// its four real FMAs (doc/design.md §4), four sub-steps, as every other single unit.
struct CellModeInfo {
  CellMode mode;
  const char* name;  // as written in [cell] mode and --cell-mode
  int substeps_real;
  int substeps_complex;
  bool rounds_on_store;        // a wide accumulator rounded to binary32 when the stage stores W
  bool sums_call_wide;         // the planar MXU: a call's products summed wide, C added once
  const char* energy_key;      // [energy] key of one sub-step's energy (pJ)
  const char* energy_default;  // its built-in value (= meshcfg/default.ini), as written
  const char* energy_help;
};
inline constexpr std::array kCellModeTable = std::to_array<CellModeInfo>({
    {CellMode::fp64, "fp64", 1, 4, false, false, "mac_pj", "108.9",
     "energy of one fp64 MAC (pJ; a complex MAC takes 4)"},
    {CellMode::fp32, "fp32", 1, 4, false, false, "mac_pj_fp32", "15.94",
     "energy of one step of the FP32-MXU (pJ; a complex MAC takes 4)"},
    {CellMode::tf32, "tf32", 1, 4, false, false, "mac_pj_tf32", "2.2",
     "energy of one tf32 MAC (pJ; a complex MAC takes 4)"},
    {CellMode::bf16, "bf16", 1, 4, false, false, "mac_pj_bf16", "1.9",
     "energy of one bf16 MAC (pJ; a complex MAC takes 4)"},
    {CellMode::fp16, "fp16", 1, 4, false, false, "mac_pj_fp16", "2.0",
     "energy of one fp16 MAC (pJ; a complex MAC takes 4)"},
    {CellMode::m3xu_fp32, "m3xu-fp32", 4, 16, false, true, "mac_pj_m3xu_fp32", "1.67",
     "energy of one sub-step of the M3XU unit (pJ; a MAC takes 4, a complex MAC 16)"},
    {CellMode::m3xu_fp32c, "m3xu-fp32c", 4, 16, false, true, "mac_pj_m3xu_fp32c", "1.67",
     "energy of one sub-step of the M3XU unit in FP32C mode (pJ; a complex MAC takes 16)"},
    {CellMode::m3xu_fp32_wide, "m3xu-fp32-wide", 4, 16, true, false, "mac_pj_m3xu_fp32_wide",
     "1.67", "energy of one sub-step of an M3XU unit with a wide accumulator (pJ)"},
    {CellMode::x3tf32, "3xtf32", 3, 12, false, false, "mac_pj_3xtf32", "2.2",
     "energy of one of the three tf32 products of a 3xtf32 MAC (pJ)"},
    {CellMode::x4tf32, "4xtf32", 4, 16, false, false, "mac_pj_4xtf32", "2.2",
     "energy of one of the four tf32 products of a 4xtf32 MAC (pJ)"},
    {CellMode::x3bf16, "3xbf16", 3, 12, false, false, "mac_pj_3xbf16", "1.9",
     "energy of one of the three bf16 products of a 3xbf16 MAC (pJ)"},
});
inline constexpr int kCellModes = static_cast<int>(kCellModeTable.size());

// The table is indexed by the enum: row i describes CellMode(i).
constexpr bool cell_mode_table_in_order() {
  for (int i = 0; i < kCellModes; ++i)
    if (static_cast<int>(kCellModeTable[i].mode) != i) return false;
  return true;
}
static_assert(cell_mode_table_in_order());

constexpr const CellModeInfo& cell_mode_info(CellMode m) {
  return kCellModeTable[static_cast<int>(m)];
}

CellMode parse_cell_mode(const std::string& word);  // throws config_error listing the modes
std::string to_string(CellMode m);
// "fp64, fp32, ..., 4xtf32<last_sep>3xbf16": every mode's name, in table order.
std::string cell_mode_names(const std::string& last_sep = ", ");
// Sub-steps a cell takes per time step in this mode (CellModeInfo::substeps_*).
int substeps(CellMode m, bool complex_data = false);

// Rounding of a binary32 value to the narrower formats, round to nearest even on the bit
// pattern; Inf and NaN pass through, overflow gives Inf (fp16: 5-bit exponent, subnormals).
float round_tf32(float x);
float round_bf16(float x);
float round_fp16(float x);

// The M3XU split of a binary32 into the two halves of its significand: x == hi + lo
// exactly, hi holding the top 12 significand bits (the implicit one included) and lo the
// low 12; both are binary32 values with at most 12 significant bits.
struct M3xuSplit {
  float hi;
  float lo;
};
M3xuSplit m3xu_split(float x);
// The product of two binary32 values from M3XU's partial products (the paper's two steps,
// Eqs. 6 and 8: four 12 x 12-bit products): exact (as a binary64).
double m3xu_product(float a, float b);

// a + b + c computed exactly and rounded once to binary32 (nearest even; an exact zero is
// -0 only when all three are -0). For finite values below 2^1020 in magnitude (binary32
// values and their products always are); with an Inf or NaN, the IEEE (a + b) + c. -0.0
// is the additive identity: a + b is round_sum_binary32(a, b, -0.0).
float round_sum_binary32(double a, double b, double c);

// The cell's multiply-add in a mode (one time step of the 3D mesh).
double mac(CellMode m, double w, double y, double c);
cplx mac(CellMode m, const cplx& w, const cplx& y, const cplx& c);

// What a stage stores when its W register becomes the result: m3xu-fp32-wide rounds its
// wide accumulator to binary32; every other mode already holds its format.
bool rounds_on_store(CellMode m);
double store(CellMode m, double w);
cplx store(CellMode m, const cplx& w);

// The planar MXU (mxu/tensor_unit.hpp): one call is one MMA, C = A B + C0 (C0 = +0 without
// accumulate). An output's register starts at mma_start(m, C0), takes mma_mac per update
// and the call stores mma_store(m, C0, W). In the M3XU modes (sums_call_wide) the register
// is the unit's wide accumulator: it starts empty (-0.0, the additive identity), adds each
// exact product in binary64, and the call writes the binary32 C0 + sum with one rounding
// (Sec. IV-A: the 48-bit accumulation register, an FP32 result). Every other mode is its
// cell: start at C0, mac(), store().
double mma_start(CellMode m, double c0);
double mma_mac(CellMode m, double w, double y, double c);
double mma_store(CellMode m, double c0, double w);

// What a W register holds when it is loaded with a value instead of starting at +0 (the
// affine form's initial output Y0, doc/design.md §3.1): the value in the format the
// mode's cells store, binary64 in fp64 and binary32 (round to nearest even, per
// component) in every other mode, the format of their accumulators or of their store.
double seed_register(CellMode m, double w);
cplx seed_register(CellMode m, const cplx& w);

}  // namespace triada
