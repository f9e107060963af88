#include "jobs/conv_csv.hpp"

#include <cmath>
#include <sstream>

namespace triada {

namespace {

// Keys of each method object, in column order. The memory side's (sram_reads ..
// stall_cycles) are empty fields in a report without them.
const char* const kMethodColumns[] = {"useful_macs",
                                      "macs",
                                      "calls",
                                      "rows",
                                      "cell_steps",
                                      "cycles",
                                      "model_time",
                                      "utilisation",
                                      "effective_utilisation",
                                      "sram_reads",
                                      "sram_writes",
                                      "dram_read_bytes",
                                      "dram_write_bytes",
                                      "stall_cycles",
                                      "energy_pj",
                                      "lowered_bytes",
                                      "peak_extra_bytes",
                                      "max_rel_error",
                                      "verified",
                                      "wall_seconds"};

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string quoted(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

// A JSON value as one field: null empty, integers exact, reals round-trip (nlohmann's
// shortest form), non-finite reals inf/-inf/nan (the JSON report has null there).
std::string field(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return quoted(v.get<std::string>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  }
  return v.dump();  // integers, finite reals, booleans
}

std::string key_field(const nlohmann::json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) ? field(obj[key]) : std::string();
}

void write_row(std::ostream& out, const nlohmann::json& L, const char* method) {
  const nlohmann::json& m = L[method];
  const nlohmann::json gemm = L.contains("gemm") ? L["gemm"] : nlohmann::json();
  out << key_field(L, "index") << ',' << key_field(L, "name") << ',' << key_field(L, "kind") << ','
      << key_field(L, "shape") << ',' << key_field(gemm, "M") << ',' << key_field(gemm, "N") << ','
      << key_field(gemm, "K") << ',' << method;
  for (const char* key : kMethodColumns) out << ',' << key_field(m, key);
  out << "\n";
}

}  // namespace

std::string conv_csv(const nlohmann::json& layers) {
  std::ostringstream out;
  out << "index,layer,kind,shape,gemm_m,gemm_n,gemm_k,method";
  for (const char* key : kMethodColumns) out << ',' << key;
  out << "\n";
  for (const auto& L : layers)
    for (const char* method : {"explicit", "implicit"})
      if (L.contains(method)) write_row(out, L, method);
  return out.str();
}

}  // namespace triada
