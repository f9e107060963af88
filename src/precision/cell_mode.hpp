#pragma once
// Multi-mode cells (Ha et al., "M3XU: Achieving High-Precision and Complex Matrix
// Multiplication with Low-Precision MXUs"). A cell's multiply-add W = W + y * c in one of
// these arithmetics; every executor calls the same function, so every executor gets the
// same bits in every mode.
//   fp64        fused multiply-add in binary64 (default)
//   fp32        operands rounded to binary32, fused multiply-add in binary32
//   tf32, bf16, fp16
//               operands rounded to the format (round to nearest even), the product is exact
//               in binary32 (at most 11 x 11 significand bits), accumulated in binary32
//   m3xu-fp32   operands binary32; each significand split on its IEEE bit pattern into a
//               high and a low 12-bit half (integer operations); two sub-steps (paper
//               Eqs. 3-8): hi*hi and lo*lo, then hi*lo + lo*hi, each partial product exact,
//               summed exactly into the exact binary32 x binary32 product; W is a wide
//               (binary64) accumulator, rounded to binary32 when the stage stores its result
//   m3xu-fp32c  complex binary32 (paper Eq. 9): four sub-steps giving the exact products
//               yr*cr, yi*ci, yr*ci, yi*cr; the real part takes yr*cr - yi*ci, both parts
//               accumulate wide and are rounded to binary32 per component on store
//   3xtf32      software baseline (as CUTLASS): a = a_hi + a_lo with a_hi = tf32(a),
//               a_lo = tf32(a - a_hi); three tf32 products a_lo*b_hi, a_hi*b_lo, a_hi*b_hi
//               (small ones first) accumulated in binary32; a_lo*b_lo dropped
// A real run in a complex-only mode (m3xu-fp32c) uses its real part: one exact product.
#include <array>
#include <cstdint>
#include <string>

#include "core/types.hpp"

namespace triada {

enum class CellMode { fp64, fp32, tf32, bf16, fp16, m3xu_fp32, m3xu_fp32c, x3tf32 };

// Every cell mode, declared once: what parses, prints, costs and rounds per mode, and the
// [energy] key of its MAC, is read from here.
struct CellModeInfo {
  CellMode mode;
  const char* name;  // as written in [cell] mode and --cell-mode
  // Sub-steps per time step (the cost model's cycles) for real and complex data. The M3XU
  // unit needs two per real product, so four for a complex MAC (Eq. 9) whichever of its
  // two modes is named; every other mode does a MAC of its data type in one step.
  int substeps_real;
  int substeps_complex;
  bool rounds_on_store;        // a wide accumulator rounded to binary32 when the stage stores W
  const char* energy_key;      // [energy] key of one MAC's energy (pJ)
  const char* energy_default;  // its built-in value (= meshcfg/default.ini), as written
  const char* energy_help;
};
inline constexpr std::array kCellModeTable = std::to_array<CellModeInfo>({
    {CellMode::fp64, "fp64", 1, 1, false, "mac_pj", "18.4", "energy of one fp64 MAC (pJ)"},
    {CellMode::fp32, "fp32", 1, 1, false, "mac_pj_fp32", "4.6", "energy of one fp32 MAC (pJ)"},
    {CellMode::tf32, "tf32", 1, 1, false, "mac_pj_tf32", "2.2", "energy of one tf32 MAC (pJ)"},
    {CellMode::bf16, "bf16", 1, 1, false, "mac_pj_bf16", "1.9", "energy of one bf16 MAC (pJ)"},
    {CellMode::fp16, "fp16", 1, 1, false, "mac_pj_fp16", "2.0", "energy of one fp16 MAC (pJ)"},
    {CellMode::m3xu_fp32, "m3xu-fp32", 2, 4, true, "mac_pj_m3xu_fp32", "6.2",
     "energy of one m3xu-fp32 MAC, both sub-steps (pJ)"},
    {CellMode::m3xu_fp32c, "m3xu-fp32c", 2, 4, true, "mac_pj_m3xu_fp32c", "12.4",
     "energy of one m3xu-fp32c complex MAC, four sub-steps (pJ)"},
    {CellMode::x3tf32, "3xtf32", 3, 3, false, "mac_pj_3xtf32", "6.6",
     "energy of one 3xtf32 MAC, three tf32 products (pJ)"},
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
// "fp64, fp32, ..., m3xu-fp32c<last_sep>3xtf32": every mode's name, in table order.
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
// The product of two binary32 values by M3XU's two sub-steps: exact (as a binary64).
double m3xu_product(float a, float b);

// The cell's multiply-add in a mode.
double mac(CellMode m, double w, double y, double c);
cplx mac(CellMode m, const cplx& w, const cplx& y, const cplx& c);

// What a stage stores when its W register becomes the result: the M3XU modes round their
// wide accumulator to binary32; every other mode already holds its format.
bool rounds_on_store(CellMode m);
double store(CellMode m, double w);
cplx store(CellMode m, const cplx& w);

// What a W register holds when it is loaded with a value instead of starting at +0 (the
// affine form's initial output Y0, doc/design.md §3.1): the value in the format the
// mode's cells store, binary64 in fp64 and binary32 (round to nearest even, per
// component) in every other mode, the format of their accumulators or of their store.
double seed_register(CellMode m, double w);
cplx seed_register(CellMode m, const cplx& w);

}  // namespace triada
