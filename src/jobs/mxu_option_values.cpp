#include "jobs/mxu_option_values.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <type_traits>

#include "config/options.hpp"
#include "core/error.hpp"
#include "mxu/tcu_algorithms.hpp"

namespace triada {

std::int64_t parse_latency(const std::string& word) {
  std::int64_t v = 0;
  if (!parse_int(word, v) || v < 0)
    throw config_error("--latency: expected an integer >= 0, got '" + printable(word) + "'");
  return v;
}

std::uint64_t parse_seed(const std::string& word) {
  std::int64_t v = 0;
  if (!parse_int(word, v) || v < 0)
    throw config_error("--seed: expected an integer in [0, 2^63), got '" + printable(word) + "'");
  return static_cast<std::uint64_t>(v);
}

std::vector<std::int64_t> parse_positive_list(const std::string& option, const std::string& word) {
  std::vector<std::int64_t> out;
  for (const std::string& item : list_items(option, word)) {
    std::int64_t v = 0;
    if (!parse_int(item, v) || v < 1)
      throw config_error(option + ": expected a comma-separated list of positive integers, got '" +
                         printable(word) + "'");
    out.push_back(v);
  }
  return out;
}

std::vector<double> parse_tcu_kernel(const std::string& word) {
  const std::vector<std::string> items = list_items("--kernel", word);
  std::vector<double> w(items.size());
  bool ok = items.size() == 9;
  for (size_t i = 0; ok && i < items.size(); ++i) ok = parse_double(items[i], w[i]);
  if (!ok)
    throw config_error(
        "--kernel: expected 9 comma-separated finite numbers (the weights of "
        "offsets -1, 0, 1 in i, each with offsets -1, 0, 1 in j), got '" +
        printable(word) + "'");
  return w;
}

void only_for(bool given, const std::string& option, const std::string& algo,
              std::initializer_list<const char*> takers) {
  if (!given) return;
  std::string list;
  for (const char* t : takers) {
    if (algo == t) return;
    list += (list.empty() ? "" : " and ") + std::string(t);
  }
  throw config_error(option + ": applies to " + list + " only, not " + algo);
}

void set_tcu_product(TcuConfig& c, const std::string& word) {
  const auto& known = tcu_algorithms();
  only_for(std::any_of(known.begin(), known.end(), [&](const auto& a) { return c.algo == a.name; }),
           "--product", c.algo, {"spmm", "apsd"});
  c.both_products = word == "both";
  c.product = c.both_products ? TcuProduct::fast
                              : named("--product", [&] { return parse_tcu_product(word); });
}

void set_conv_method(ConvConfig& c, const std::string& word) {
  if (word != "explicit" && word != "implicit" && word != "both")
    throw config_error("--method: expected explicit, implicit or both, got '" + printable(word) +
                       "'");
  c.run_explicit = word != "implicit";
  c.run_implicit = word != "explicit";
}

index_t parse_conv_mxu(const std::string& word) {
  const std::int64_t side = parse_positive("--mxu", word);
  if (side > 4096) throw config_error("--mxu: at most 4096, got " + printable(word));
  return side;
}

double parse_verify_budget(const std::string& word) {
  double v = 0;
  if (!parse_double(word, v) || v < 0)  // whole token, finite
    throw config_error("--verify-budget: expected a number of MACs >= 0, got '" + printable(word) +
                       "'");
  return v;
}

std::string spelled(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

namespace {
template <class T>
std::string joined(const std::vector<T>& v) {
  std::string out;
  for (const T& x : v) {
    if (!out.empty()) out += ",";
    if constexpr (std::is_floating_point_v<T>)
      out += spelled(x);
    else
      out += std::to_string(x);
  }
  return out;
}
}  // namespace

std::string spelled(const std::vector<double>& v) {
  return joined(v);
}
std::string spelled(const std::vector<std::int64_t>& v) {
  return joined(v);
}

}  // namespace triada
