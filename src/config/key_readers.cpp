#include "config/key_readers.hpp"

#include <algorithm>
#include <cstdio>

#include "config/options.hpp"
#include "core/error.hpp"

namespace po = boost::program_options;

namespace triada {

void add_keys(po::options_description& d, std::span<const KeySpec> keys) {
  for (const KeySpec& k : keys)
    d.add_options()(k.name, po::value<std::string>()->default_value(k.value), k.help);
}

const std::string& key_text(const po::variables_map& vm, const std::string& key) {
  return vm[key].as<std::string>();
}

namespace {

// 1e-06 as "1e-6", 1e+09 as "1e9", 0.1 as "0.1".
std::string bound(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  std::string s = buf;
  const size_t e = s.find('e');
  if (e == std::string::npos) return s;
  std::string exp = s.substr(e + 1);
  const bool negative = exp[0] == '-';
  exp = exp.substr(1);
  exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
  return s.substr(0, e + 1) + (negative ? "-" : "") + exp;
}

}  // namespace

double key_quantity(const po::variables_map& vm, const KeySource& source, const std::string& key,
                    const Quantity& q) {
  double v = 0;
  const std::string& s = key_text(vm, key);
  const bool ok = parse_double(s, v) && ((q.zero && v == 0) || (v >= q.lo && v <= q.hi));
  if (!ok)
    throw config_error(source(key) + ": expected " + (q.zero ? "0 or " : "") + "a number in [" +
                       bound(q.lo) + ", " + bound(q.hi) + "] (" + q.unit + "), got '" +
                       printable(s) + "'");
  return v;
}

std::uint64_t key_integer(const po::variables_map& vm, const KeySource& source,
                          const std::string& key, std::uint64_t lo, std::uint64_t hi,
                          const std::string& hi_text) {
  std::uint64_t v = 0;
  const std::string& s = key_text(vm, key);
  if (!parse_uint64(s, v) || v < lo || v > hi)
    throw config_error(source(key) + ": expected an integer in [" + std::to_string(lo) + ", " +
                       (hi_text.empty() ? std::to_string(hi) : hi_text) + "], got '" +
                       printable(s) + "'");
  return v;
}

}  // namespace triada
