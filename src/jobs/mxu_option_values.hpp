#pragma once
// The values of triada-tcu's and triada-conv's options from their words (a command line's,
// or the Python module's values spelled so), refused with the programs' messages. validate()
// refuses a config's value out of range through them too, so that every caller gets the
// program's message.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "jobs/conv_config.hpp"
#include "jobs/tcu_config.hpp"

namespace triada {

std::int64_t parse_latency(const std::string& word);  // --latency: an integer >= 0
std::uint64_t parse_seed(const std::string& word);    // --seed: an integer in [0, 2^63)
// --sizes, --ms: a comma-separated list of positive integers.
std::vector<std::int64_t> parse_positive_list(const std::string& option, const std::string& word);
// --kernel: exactly nine finite reals, the stencil's weights.
std::vector<double> parse_tcu_kernel(const std::string& word);
// --product fast|classical|both: c.product and c.both_products. Refused for a known
// algorithm (c.algo, filled first) other than spmm and apsd, even as the default product
// (validate() can only tell a product that is not the default).
void set_tcu_product(TcuConfig& c, const std::string& word);
// An algorithm's own parameter `option` given to another `algo` than `takers`.
void only_for(bool given, const std::string& option, const std::string& algo,
              std::initializer_list<const char*> takers);

// --method explicit|implicit|both: c.run_explicit and c.run_implicit.
void set_conv_method(ConvConfig& c, const std::string& word);
index_t parse_conv_mxu(const std::string& word);      // --mxu: a side in [1, 4096]
double parse_verify_budget(const std::string& word);  // --verify-budget: MACs >= 0

// A number as a word (the shortest that reads back: "0.5", "1e+20", "inf"), and numbers as
// a comma-separated list: the words of a config's values in messages.
std::string spelled(double v);
std::string spelled(const std::vector<double>& v);
std::string spelled(const std::vector<std::int64_t>& v);

}  // namespace triada
