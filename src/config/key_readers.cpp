#include "config/key_readers.hpp"

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
