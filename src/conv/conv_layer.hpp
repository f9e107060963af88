#pragma once
// One convolution layer and the network files that list them (data/networks/*.csv).
//
// Notation of Zhou et al., "Characterizing and Demystifying the Implicit Convolution
// Algorithm on Commercial Matrix-Multiplication Accelerators" (Sec. II-A, Fig. 1): a batch
// of N input feature maps (IFMap) of C_I channels, H_I x W_I each, convolved with C_O
// filters of C_I x H_F x W_F, gives C_O output maps (OFMap) of H_O x W_O. We add zero
// padding, stride, dilation and groups (the channels split into `groups` independent
// convolutions of C_I / groups -> C_O / groups channels, as AlexNet's two-GPU layers).
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace triada {

// A SCALE-Sim GEMM row's sizes: an M x K by K x N product (its topology's "Layer, M, N, K").
struct GemmShape {
  index_t M = 0, N = 0, K = 0;
};

struct ConvLayer {
  std::string name;
  // Set when the layer came from a SCALE-Sim GEMM row, run as the 1x1 convolution
  // N = 1, H_I = M, W_I = 1, C_I = K, C_O = N (so both methods and every counter apply).
  std::optional<GemmShape> gemm;
  index_t N = 1;    // batch
  index_t C_I = 1;  // input channels
  index_t H_I = 1, W_I = 1;
  index_t C_O = 1;  // output channels (filters)
  index_t H_F = 1, W_F = 1;
  // Per axis, as ONNX's Conv expresses them: strides and dilations (h, w), and zeros added
  // before and after each axis (ONNX's pads order is top, left, bottom, right).
  index_t stride_h = 1, stride_w = 1;
  index_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  index_t dilation_h = 1, dilation_w = 1;  // filter taps dil apart
  index_t groups = 1;                      // C_I and C_O are multiples of it

  // The same value along both axes (and, for pad, on every side).
  void set_stride(index_t s) { stride_h = stride_w = s; }
  void set_pad(index_t p) { pad_top = pad_left = pad_bottom = pad_right = p; }
  void set_dilation(index_t d) { dilation_h = dilation_w = d; }
  // The one value when uniform, else nullopt (the report's stride, pad and dilation keys).
  std::optional<index_t> uniform_stride() const;
  std::optional<index_t> uniform_pad() const;
  std::optional<index_t> uniform_dilation() const;

  // Output size per axis: H_O = floor((H_I + pad_top + pad_bottom - dil_h (H_F - 1) - 1) /
  // stride_h) + 1, W_O alike.
  index_t H_O() const {
    return (H_I + pad_top + pad_bottom - dilation_h * (H_F - 1) - 1) / stride_h + 1;
  }
  index_t W_O() const {
    return (W_I + pad_left + pad_right - dilation_w * (W_F - 1) - 1) / stride_w + 1;
  }
  index_t C_I_group() const { return C_I / groups; }
  index_t C_O_group() const { return C_O / groups; }
  // Rows of the lowered GEMM (one per output pixel) and its depth per group (Fig. 1).
  index_t M() const { return N * H_O() * W_O(); }
  index_t K_group() const { return H_F * W_F * C_I_group(); }

  // The layer's multiply-adds: N H_O W_O C_O H_F W_F C_I / groups (padding zeros included).
  std::uint64_t macs() const;
  std::uint64_t ifmap_elements() const;   // N C_I H_I W_I
  std::uint64_t ofmap_elements() const;   // N C_O H_O W_O
  std::uint64_t weight_elements() const;  // C_O C_I/groups H_F W_F
  // Bytes (float64) of the IFMap and of the explicit lowered matrix
  // (N H_O W_O) x (H_F W_F C_I): N H_O W_O H_F W_F C_I * 8 (Sec. II-B, Table I).
  std::uint64_t ifmap_bytes() const { return ifmap_elements() * 8; }
  std::uint64_t lowered_bytes() const;
  // Bytes one run of the layer holds at once on an MXU of side x side cells: operands
  // (and their NHWC copy), the direct reference and a method's output, the lowered and
  // filter matrices padded to the unit and the padded output block (conv_explicit.cpp).
  std::uint64_t memory_bytes(index_t side) const;
  // "1x3x227x227 -> 96 11x11 s4 p0" (d and g only when not 1); a per-axis value in the
  // spec's forms: "s2x1", "p1x2" (symmetric per axis), "p1:0:2:1" (top:left:bottom:right).
  std::string shape_string() const;
  // "gemm" for a SCALE-Sim GEMM row, else "conv".
  const char* kind() const { return gemm ? "gemm" : "conv"; }
};

// Checks a layer; throws config_error "<where>: <problem>" (non-positive size, negative
// padding, groups not dividing the channels, filter larger than the padded input).
void validate_layer(const ConvLayer& layer, const std::string& where);

// "N,CI,HI,WI,CO,HF,WF,stride,pad[,dil[,groups]]": stride S or SHxSW, dilation D or DHxDW,
// pad P, PHxPW (symmetric per axis) or T:L:B:R (ONNX's order: top, left, bottom, right).
// Throws config_error "<where>: <problem>" (triada-conv passes its option, --layer).
ConvLayer parse_layer_spec(const std::string& spec, const std::string& where = "layer");

// A network file in one of three formats, told apart by its header row (the first line
// that is neither blank, nor a '#' comment, nor only commas; such lines are skipped
// anywhere). Header names are compared trimmed and case-insensitively.
//  ours            "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,
//                  Num Filter,Strides,Padding[,Dilation[,Groups]]": every row has the header's
//                  column count; IFMAP Height/Width are the unpadded input; Strides,
//                  Padding and Dilation take --layer's per-axis forms (parse_layer_spec).
//  SCALE-Sim conv  the same first eight columns, without Padding (its topologies/conv_nets):
//                  the IFMAP is already padded, so pad 0, dilation 1, groups 1; columns past
//                  the eighth are ignored.
//  SCALE-Sim GEMM  "Layer, M, N, K" (or "Layer name, ..."; its topologies/GEMM_mnk): each row
//                  an M x K by K x N product, run as a 1x1 convolution (ConvLayer::gemm);
//                  columns past the fourth are ignored.
// A trailing comma (as SCALE-Sim writes) and a UTF-8 byte-order mark before the header (as
// spreadsheets export) are allowed. Every layer gets N = 1. Throws config_error
// "<source>:<line>: <problem>" naming the field, the file's bytes escaped (printable).
std::vector<ConvLayer> parse_network_csv(std::istream& in, const std::string& source);
std::vector<ConvLayer> read_network_csv(const std::string& path);

}  // namespace triada
