#include "conv/conv_layer.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <fstream>
#include <initializer_list>
#include <istream>
#include <optional>
#include <sstream>

#include "config/options.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "io/input_file.hpp"

namespace triada {

namespace {

using u64 = std::uint64_t;
u64 u(index_t v) {
  return static_cast<u64>(v);
}

// Largest value accepted for any one size, so that every product below fits in 64 bits.
constexpr index_t kMaxSize = index_t{1} << 24;

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t p = s.find(sep, start);
    out.push_back(trim(s.substr(start, p == std::string::npos ? p : p - start)));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

bool any_empty(const std::vector<std::string>& f) {
  return std::any_of(f.begin(), f.end(), [](const std::string& x) { return x.empty(); });
}

// An integer field; `where` prefixes the message, `what` names the field.
index_t parse_field(const std::string& text, const std::string& where, const std::string& what,
                    index_t minimum) {
  index_t v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end)
    throw config_error(where + ": " + what + ": '" + printable(text) + "' is not an integer");
  if (v < minimum)
    throw config_error(where + ": " + what + ": must be " +
                       (minimum == 0 ? std::string("non-negative") : std::string("positive")) +
                       ", got " + text);
  if (v > kMaxSize) throw config_error(where + ": " + what + ": too large, got " + text);
  return v;
}

// One spatial field in its forms: "V" (both axes) or "HxW" (minimum: 0 or 1; `forms`
// names them in the message, e.g. "S or SHxSW").
std::array<index_t, 2> parse_axes(const std::string& text, const std::string& where,
                                  const std::string& what, index_t minimum, const char* forms) {
  const auto parts = split(text, 'x');
  if (parts.size() > 2 || any_empty(parts))
    throw config_error(where + ": " + what + ": '" + printable(text) + "' is not of the form " +
                       forms);
  const index_t h = parse_field(parts[0], where, what, minimum);
  return {h, parts.size() == 2 ? parse_field(parts[1], where, what, minimum) : h};
}

void read_stride(ConvLayer& l, const std::string& text, const std::string& where,
                 const std::string& what) {
  const auto a = parse_axes(text, where, what, 1, "S or SHxSW");
  l.stride_h = a[0], l.stride_w = a[1];
}

void read_dilation(ConvLayer& l, const std::string& text, const std::string& where,
                   const std::string& what) {
  const auto a = parse_axes(text, where, what, 1, "D or DHxDW");
  l.dilation_h = a[0], l.dilation_w = a[1];
}

// P, PHxPW (symmetric per axis) or T:L:B:R (ONNX's pads order).
void read_pad(ConvLayer& l, const std::string& text, const std::string& where,
              const std::string& what) {
  const char* forms = "P, PHxPW or T:L:B:R";
  if (text.find(':') == std::string::npos) {
    const auto a = parse_axes(text, where, what, 0, forms);
    l.pad_top = l.pad_bottom = a[0], l.pad_left = l.pad_right = a[1];
    return;
  }
  const auto parts = split(text, ':');
  if (parts.size() != 4 || any_empty(parts))
    throw config_error(where + ": " + what + ": '" + printable(text) + "' is not of the form " +
                       forms);
  index_t v[4];
  for (size_t i = 0; i < 4; ++i) v[i] = parse_field(parts[i], where, what, 0);
  l.pad_top = v[0], l.pad_left = v[1], l.pad_bottom = v[2], l.pad_right = v[3];
}

// The columns of a network file, in order; the last two are optional. SCALE-Sim's
// convolution topologies have the first eight (kScaleSimConvColumns).
const char* const kColumns[] = {"Layer name",   "IFMAP Height", "IFMAP Width", "Filter Height",
                                "Filter Width", "Channels",     "Num Filter",  "Strides",
                                "Padding",      "Dilation",     "Groups"};
constexpr size_t kMinColumns = 9, kMaxColumns = 11, kScaleSimConvColumns = 8;
// SCALE-Sim's GEMM topologies: "Layer, M, N, K" (some write "Layer Name").
const char* const kGemmColumns[] = {"Layer", "M", "N", "K"};
constexpr size_t kGemmColumnCount = 4;

enum class NetworkFormat { ours, scalesim_conv, scalesim_gemm };

struct NetworkHeader {
  NetworkFormat format = NetworkFormat::ours;
  size_t columns = 0;  // ours: every row's count; SCALE-Sim: the columns read (more ignored)
};

const char* format_name(NetworkFormat f) {
  return f == NetworkFormat::scalesim_conv ? "SCALE-Sim convolution" : "SCALE-Sim GEMM";
}

void check_column(const std::vector<std::string>& f, size_t i, const char* want,
                  const std::string& where) {
  if (lower(f[i]) != lower(want))
    throw config_error(where + ": header: column " + std::to_string(i + 1) + " must be '" + want +
                       "', got '" + printable(f[i]) + "'");
}

NetworkHeader gemm_header(const std::vector<std::string>& f, const std::string& where) {
  if (f.size() < kGemmColumnCount)
    throw config_error(where +
                       ": header: SCALE-Sim's GEMM format needs the columns 'Layer, M, "
                       "N, K', got " +
                       std::to_string(f.size()) + " columns");
  if (lower(f[0]) != "layer" && lower(f[0]) != "layer name")
    throw config_error(where + ": header: column 1 must be 'Layer' or 'Layer name', got '" +
                       printable(f[0]) + "'");
  for (size_t i = 1; i < kGemmColumnCount; ++i) check_column(f, i, kGemmColumns[i], where);
  return {NetworkFormat::scalesim_gemm, kGemmColumnCount};
}

// The format from the header row: M in the second column is SCALE-Sim's GEMM format;
// Padding in the ninth is ours; the first eight convolution columns alone are SCALE-Sim's.
NetworkHeader parse_header(const std::vector<std::string>& f, const std::string& where) {
  if (f.size() >= 2 && lower(f[1]) == "m") return gemm_header(f, where);
  const bool ours = f.size() >= kMinColumns && lower(f[kMinColumns - 1]) == "padding";
  if (f.size() < kScaleSimConvColumns || (ours && f.size() > kMaxColumns))
    throw config_error(where + ": header: unknown format (" + std::to_string(f.size()) +
                       " columns): expected 'Layer name,IFMAP Height,IFMAP Width,Filter Height,"
                       "Filter Width,Channels,Num Filter,Strides' (SCALE-Sim's convolution "
                       "format; ours adds Padding[,Dilation[,Groups]]) or 'Layer,M,N,K' "
                       "(SCALE-Sim's GEMM format)");
  const size_t n = ours ? f.size() : kScaleSimConvColumns;
  for (size_t i = 0; i < n; ++i) check_column(f, i, kColumns[i], where);
  return {ours ? NetworkFormat::ours : NetworkFormat::scalesim_conv, n};
}

// A row of a convolution format (ours, or SCALE-Sim's with pad 0: its IFMAP is padded).
ConvLayer conv_row(const std::vector<std::string>& f, size_t columns, const std::string& where) {
  const auto column = [](size_t i) { return std::string("column '") + kColumns[i] + "'"; };
  index_t v[7] = {};
  for (size_t i = 1; i < 7; ++i) v[i] = parse_field(f[i], where, column(i), 1);
  ConvLayer l;
  l.name = f[0];
  l.H_I = v[1], l.W_I = v[2], l.H_F = v[3], l.W_F = v[4], l.C_I = v[5], l.C_O = v[6];
  read_stride(l, f[7], where, column(7));
  if (columns > 8) read_pad(l, f[8], where, column(8));
  if (columns > 9) read_dilation(l, f[9], where, column(9));
  if (columns > 10) l.groups = parse_field(f[10], where, column(10), 1);
  return l;
}

// A GEMM row: M x K by K x N as the 1x1 convolution of an M x 1 IFMap of K channels by N
// filters; its lowered matrix is the M x K operand itself.
ConvLayer gemm_row(const std::vector<std::string>& f, const std::string& where) {
  index_t v[kGemmColumnCount] = {};
  for (size_t i = 1; i < kGemmColumnCount; ++i)
    v[i] = parse_field(f[i], where, std::string("column '") + kGemmColumns[i] + "'", 1);
  ConvLayer l;
  l.name = f[0];
  l.gemm = GemmShape{v[1], v[2], v[3]};
  l.H_I = v[1], l.W_I = 1, l.C_I = v[3], l.C_O = v[2];
  return l;
}

ConvLayer parse_row(const std::vector<std::string>& f, const NetworkHeader& h,
                    const std::string& where) {
  const bool ours = h.format == NetworkFormat::ours;
  if (ours ? f.size() != h.columns : f.size() < h.columns)
    throw config_error(
        where + ": expected " + (ours ? "" : "at least ") + std::to_string(h.columns) +
        " columns (" +
        (ours ? std::string("as the header") : format_name(h.format) + std::string(" format")) +
        "), got " + std::to_string(f.size()));
  if (f[0].empty()) throw config_error(where + ": empty layer name");
  ConvLayer l =
      h.format == NetworkFormat::scalesim_gemm ? gemm_row(f, where) : conv_row(f, h.columns, where);
  l.N = 1;
  validate_layer(l, where + " (" + printable(l.name) + ")");
  return l;
}

bool all_empty(const std::vector<std::string>& f) {
  return std::all_of(f.begin(), f.end(), [](const std::string& x) { return x.empty(); });
}

}  // namespace

// Checked products of the layer's sizes (validate_layer bounds them well below 2^64; a
// layer that skipped it still never wraps).
static u64 product(std::initializer_list<index_t> sizes, const std::string& what) {
  u64 p = 1;
  for (index_t v : sizes) p = checked_mul(p, u(v), what);
  return p;
}

u64 ConvLayer::macs() const {
  return product({N, H_O(), W_O(), C_O, H_F, W_F, C_I_group()}, name + ": MACs");
}
u64 ConvLayer::ifmap_elements() const {
  return product({N, C_I, H_I, W_I}, name + ": IFMap");
}
u64 ConvLayer::ofmap_elements() const {
  return product({N, C_O, H_O(), W_O()}, name + ": OFMap");
}
u64 ConvLayer::weight_elements() const {
  return product({C_O, C_I_group(), H_F, W_F}, name + ": weights");
}
u64 ConvLayer::lowered_bytes() const {
  return product({N, H_O(), W_O(), H_F, W_F, C_I, 8}, name + ": lowered matrix");
}

u64 ConvLayer::memory_bytes(index_t side) const {
  const std::string what = name + ": memory";
  const index_t Mp = std::max(M(), side);
  const index_t Kgp = (K_group() + side - 1) / side * side,
                COgp = (C_O_group() + side - 1) / side * side;
  u64 elems = checked_mul(ifmap_elements(), u64{2}, what);
  elems = checked_add(elems, weight_elements(), what);
  elems = checked_add(elems, checked_mul(ofmap_elements(), u64{2}, what), what);
  elems = checked_add(elems, product({Mp, groups, Kgp}, what), what);
  elems = checked_add(elems, product({groups, Kgp, COgp}, what), what);
  elems = checked_add(elems, product({Mp, groups, COgp}, what), what);
  return checked_mul(elems, u64{8}, what);
}

namespace {
// "2" or "2x1": a per-axis pair as the spec writes it.
std::string axes_string(index_t h, index_t w) {
  return h == w ? std::to_string(h) : std::to_string(h) + "x" + std::to_string(w);
}
std::string pads_string(const ConvLayer& l) {
  if (l.pad_top == l.pad_bottom && l.pad_left == l.pad_right)
    return axes_string(l.pad_top, l.pad_left);
  return std::to_string(l.pad_top) + ":" + std::to_string(l.pad_left) + ":" +
         std::to_string(l.pad_bottom) + ":" + std::to_string(l.pad_right);
}
std::optional<index_t> same(index_t a, index_t b) {
  return a == b ? std::optional<index_t>(a) : std::nullopt;
}
}  // namespace

std::optional<index_t> ConvLayer::uniform_stride() const {
  return same(stride_h, stride_w);
}
std::optional<index_t> ConvLayer::uniform_dilation() const {
  return same(dilation_h, dilation_w);
}
std::optional<index_t> ConvLayer::uniform_pad() const {
  return pad_top == pad_left && pad_top == pad_bottom && pad_top == pad_right
             ? std::optional<index_t>(pad_top)
             : std::nullopt;
}

std::string ConvLayer::shape_string() const {
  std::ostringstream os;
  os << N << "x" << C_I << "x" << H_I << "x" << W_I << " -> " << C_O << " " << H_F << "x" << W_F
     << " s" << axes_string(stride_h, stride_w) << " p" << pads_string(*this);
  if (dilation_h != 1 || dilation_w != 1) os << " d" << axes_string(dilation_h, dilation_w);
  if (groups != 1) os << " g" << groups;
  return os.str();
}

void validate_layer(const ConvLayer& l, const std::string& where) {
  const struct {
    const char* what;
    index_t v, minimum;
  } fields[] = {{"batch N", l.N, 1},
                {"channels C_I", l.C_I, 1},
                {"IFMAP height", l.H_I, 1},
                {"IFMAP width", l.W_I, 1},
                {"filters C_O", l.C_O, 1},
                {"filter height", l.H_F, 1},
                {"filter width", l.W_F, 1},
                {"stride height", l.stride_h, 1},
                {"stride width", l.stride_w, 1},
                {"padding top", l.pad_top, 0},
                {"padding left", l.pad_left, 0},
                {"padding bottom", l.pad_bottom, 0},
                {"padding right", l.pad_right, 0},
                {"dilation height", l.dilation_h, 1},
                {"dilation width", l.dilation_w, 1},
                {"groups", l.groups, 1}};
  for (const auto& f : fields) {
    if (f.v < f.minimum)
      throw config_error(where + ": " + f.what + " must be " +
                         (f.minimum == 0 ? "non-negative" : "positive") + ", got " +
                         std::to_string(f.v));
    if (f.v > kMaxSize)
      throw config_error(where + ": " + f.what + " too large, got " + std::to_string(f.v));
  }
  if (l.C_I % l.groups != 0 || l.C_O % l.groups != 0)
    throw config_error(where + ": groups " + std::to_string(l.groups) +
                       " must divide both the channels (" + std::to_string(l.C_I) +
                       ") and the filters (" + std::to_string(l.C_O) + ")");
  const index_t eh = l.dilation_h * (l.H_F - 1) + 1, ew = l.dilation_w * (l.W_F - 1) + 1;
  const index_t ph = l.H_I + l.pad_top + l.pad_bottom, pw = l.W_I + l.pad_left + l.pad_right;
  if (eh > ph || ew > pw)
    throw config_error(where + ": filter " + std::to_string(l.H_F) + "x" + std::to_string(l.W_F) +
                       (l.dilation_h != 1 || l.dilation_w != 1
                            ? " (dilation " + axes_string(l.dilation_h, l.dilation_w) +
                                  ", extent " + std::to_string(eh) + "x" + std::to_string(ew) + ")"
                            : std::string()) +
                       " is larger than the padded input " + std::to_string(ph) + "x" +
                       std::to_string(pw));
  // Every count of the layer (and of its lowered matrix) must fit in 64 bits comfortably.
  const long double lowered = static_cast<long double>(l.N) * l.H_O() * l.W_O() * l.H_F * l.W_F *
                              static_cast<long double>(l.C_I) * 8;
  const long double macs = static_cast<long double>(l.N) * l.H_O() * l.W_O() * l.C_O * l.H_F *
                           static_cast<long double>(l.W_F) * l.C_I_group();
  if (lowered > 1e18L || macs > 1e18L) throw config_error(where + ": layer too large");
}

ConvLayer parse_layer_spec(const std::string& spec, const std::string& where) {
  const auto f = list_items(where, spec);
  if (f.size() < 9 || f.size() > 11)
    throw config_error(where +
                       ": expected N,CI,HI,WI,CO,HF,WF,stride,pad[,dil[,groups]] (9 to 11 "
                       "fields), got " +
                       std::to_string(f.size()) + " fields in '" + printable(spec) + "'");
  const char* names[] = {"N", "CI", "HI", "WI", "CO", "HF", "WF"};
  index_t v[7] = {};
  for (size_t i = 0; i < 7; ++i) v[i] = parse_field(f[i], where, names[i], 1);
  ConvLayer l;
  l.name = "layer";
  l.N = v[0], l.C_I = v[1], l.H_I = v[2], l.W_I = v[3], l.C_O = v[4], l.H_F = v[5], l.W_F = v[6];
  read_stride(l, f[7], where, "stride");
  read_pad(l, f[8], where, "pad");
  if (f.size() > 9) read_dilation(l, f[9], where, "dil");
  if (f.size() > 10) l.groups = parse_field(f[10], where, "groups", 1);
  validate_layer(l, where + " " + spec);
  return l;
}

std::vector<ConvLayer> parse_network_csv(std::istream& in, const std::string& source_name) {
  const std::string source = printable(source_name, 200);
  std::vector<ConvLayer> layers;
  std::string line;
  std::optional<NetworkHeader> header;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (lineno == 1) line = without_bom(line);  // a spreadsheet's export starts with one
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    auto f = split(t, ',');
    if (all_empty(f)) continue;  // SCALE-Sim's files have rows of commas only
    if (f.size() > 1 && f.back().empty()) f.pop_back();  // SCALE-Sim's trailing comma
    const std::string where = source + ":" + std::to_string(lineno);
    if (!header)
      header = parse_header(f, where);
    else
      layers.push_back(parse_row(f, *header, where));
  }
  if (!header) throw config_error(source + ": no header line (and no layers)");
  if (layers.empty()) throw config_error(source + ": no layers after the header");
  return layers;
}

std::vector<ConvLayer> read_network_csv(const std::string& path) {
  // Before opening: a FIFO would block in open, a device never end.
  if (const std::string kind = non_regular_kind(path); !kind.empty())
    throw config_error(printable(path, 200) + ": the network file is not a regular file (" + kind +
                       ")");
  std::ifstream in(path);
  if (!in) throw config_error(printable(path, 200) + ": cannot open the network file");
  return parse_network_csv(in, path);
}

}  // namespace triada
