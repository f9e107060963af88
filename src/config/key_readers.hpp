#pragma once
// What the [technology]/[timing]/[energy]/[area] and [mxu] key tables share: a key's
// spelling, built-in default and help, its registration, and the checked readers of its
// text. Errors name where the value came from (`source`: the file and line, or the option).
#include <boost/program_options.hpp>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace triada {

struct KeySpec {
  const char* name;   // section.key
  const char* value;  // the built-in default, as meshcfg/default.ini writes it
  const char* help;
};

using KeySource = std::function<std::string(const std::string&)>;

void add_keys(boost::program_options::options_description& d, std::span<const KeySpec> keys);

const std::string& key_text(const boost::program_options::variables_map& vm,
                            const std::string& key);

// A physical constant's range in its key's unit: a normal double in [lo, hi] (never a
// subnormal, an infinity or a NaN), or exactly 0 where `zero` (a term the model may leave
// out, such as an ideal wire's delay).
struct Quantity {
  const char* unit;
  double lo = 1e-6;
  double hi = 1e9;
  bool zero = false;
};
// The key's value in q's range; the error names the range and the unit.
double key_quantity(const boost::program_options::variables_map& vm, const KeySource& source,
                    const std::string& key, const Quantity& q);

// An integer in [lo, hi]; the error shows the range as "[lo, hi_text]" (hi's digits when
// hi_text is empty).
std::uint64_t key_integer(const boost::program_options::variables_map& vm, const KeySource& source,
                          const std::string& key, std::uint64_t lo, std::uint64_t hi,
                          const std::string& hi_text = "");

}  // namespace triada
