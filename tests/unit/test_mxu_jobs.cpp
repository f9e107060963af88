// TcuJob and ConvJob made from a config struct (not from a command line): a config the
// program would refuse is refused with the program's message (the oracle: the program's
// own parser given the same values as words), whatever fills the struct.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "apps/conv/options.hpp"
#include "core/error.hpp"
#include "jobs/conv_job.hpp"
#include "jobs/tcu_job.hpp"
#include "support/catch.hpp"
#include "support/tcu_options.hpp"

using namespace triada;

namespace {

std::optional<ConvConfig> parse_conv_words(std::vector<std::string> args) {
  args.insert(args.begin(), "triada-conv");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream help;
  return parse_conv_options(static_cast<int>(argv.size()), argv.data(), help);
}

// The config_error message of `f` ("" if it throws none).
std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

TcuConfig tcu_base() {  // --algo matmul --size 8 --m 16 --latency 1
  TcuConfig c;
  c.algo = "matmul";
  c.size = 8;
  c.m = 16;
  c.latency = 1;
  return c;
}

ConvConfig conv_base() {  // --layer 1,2,5,5,2,3,3,1,0 --mxu 4
  ConvConfig c;
  c.layer_spec = "1,2,5,5,2,3,3,1,0";
  c.mxu = 4;
  return c;
}

}  // namespace

TEST_CASE("TcuJob refuses a bad config struct with triada-tcu's message", "[tcu][jobs][errors]") {
  const std::vector<std::string> base{"--algo", "matmul", "--size",    "8",
                                      "--m",    "16",     "--latency", "1"};
  const auto words = [&](std::vector<std::string> changed) {
    std::vector<std::string> a = base;
    for (size_t i = 0; i + 1 < changed.size(); i += 2) {
      bool replaced = false;
      for (size_t j = 0; j + 1 < a.size(); j += 2)
        if (a[j] == changed[i]) a[j + 1] = changed[i + 1], replaced = true;
      if (!replaced) a.insert(a.end(), {changed[i], changed[i + 1]});
    }
    for (size_t i = 0; i + 1 < a.size();)  // "" removes an option
      if (a[i + 1].empty())
        a.erase(a.begin() + static_cast<long>(i), a.begin() + static_cast<long>(i) + 2);
      else
        i += 2;
    return a;
  };
  struct Case {
    std::function<void(TcuConfig&)> change;
    std::vector<std::string> words;  // the same change on the command line
  };
  const std::vector<Case> cases = {
      {[](TcuConfig& c) { c.algo = "matmull"; }, {"--algo", "matmull"}},
      {[](TcuConfig& c) { c.m = 15; }, {"--m", "15"}},
      {[](TcuConfig& c) { c.m = 0; }, {"--m", ""}},
      {[](TcuConfig& c) { c.size = 0; }, {"--size", ""}},
      {[](TcuConfig& c) { c.product = TcuProduct::classical; }, {"--product", "classical"}},
      {[](TcuConfig& c) { c.sweeps = 2; }, {"--k", "2"}},
      {[](TcuConfig& c) { c.points = 3; }, {"--points", "3"}},
      {[](TcuConfig& c) {
         c.sizes = {4, 8};
       },
       {"--sizes", "4,8"}},
      {[](TcuConfig& c) { c.sweep = true; }, {"--sweep", "on"}},
      {[](TcuConfig& c) {
         c.algo = "stencil", c.kernel = {1, 2, 3};
       },
       {"--algo", "stencil", "--kernel", "1,2,3"}},
      {[](TcuConfig& c) { c.algo = "polyeval", c.points = 3, c.input = "p.h5"; },
       {"--algo", "polyeval", "--points", "3", "--input", "p.h5"}},
  };
  for (const Case& k : cases) {
    std::vector<std::string> w = words(k.words);
    if (w.back() == "on") w.pop_back();  // --sweep is a switch
    INFO(Catch::Detail::stringify(w));
    TcuConfig c = tcu_base();
    k.change(c);
    const std::string program = refusal([&] { parse_tcu_words(w); });
    REQUIRE_FALSE(program.empty());
    CHECK(refusal([&] { TcuJob job(c); }) == program);
  }
  // Values the command line cannot spell past its parser: each refused as its word would be.
  TcuConfig c = tcu_base();
  c.latency = -2;
  CHECK(refusal([&] { TcuJob job(c); }) == refusal([&] {
          parse_tcu_words(words({"--latency", "-2"}));
        }));
  c = tcu_base();
  c.seed = std::uint64_t{1} << 63;
  CHECK(refusal([&] { TcuJob job(c); }) == refusal([&] {
          parse_tcu_words(words({"--seed", "9223372036854775808"}));
        }));
  c = tcu_base();
  c.sweep = true, c.size = 0, c.m = 0, c.ms = {16, -4};
  CHECK(refusal([&] { TcuJob job(c); }) ==
        "--ms: expected a comma-separated list of positive integers, got '16,-4'");
  c = tcu_base();
  c.algo = "stencil", c.kernel = {1, 1, 1, 1, std::numeric_limits<double>::infinity(), 1, 1, 1, 1};
  CHECK_THAT(refusal([&] { TcuJob job(c); }),
             Catch::StartsWith("--kernel: expected 9 comma-separated finite numbers") &&
                 Catch::EndsWith("got '1,1,1,1,inf,1,1,1,1'"));
  c = tcu_base();
  c.algo = "";
  CHECK(refusal([&] { TcuJob job(c); }) == "missing --algo (see --help)");
  CHECK(refusal([&] { TcuJob job(tcu_base()); }).empty());
}

TEST_CASE("ConvJob refuses a bad config struct with triada-conv's message",
          "[conv][jobs][errors]") {
  // The program's refusal of --layer 1,2,5,5,2,3,3,1,0 --mxu 4 with `changed` options
  // replacing those ("" drops one) or added.
  const auto program = [](std::vector<std::pair<std::string, std::string>> changed) {
    std::vector<std::pair<std::string, std::string>> options{{"--layer", "1,2,5,5,2,3,3,1,0"},
                                                             {"--mxu", "4"}};
    for (const auto& [name, value] : changed) {
      bool replaced = false;
      for (auto& o : options)
        if (o.first == name) o.second = value, replaced = true;
      if (!replaced) options.emplace_back(name, value);
    }
    std::vector<std::string> w;
    for (const auto& [name, value] : options)
      if (!value.empty()) w.insert(w.end(), {name, value});
    return refusal([&] { parse_conv_words(w); });
  };
  const auto job = [](const std::function<void(ConvConfig&)>& change) {
    ConvConfig c = conv_base();
    change(c);
    return refusal([&] { ConvJob j(c); });
  };
  CHECK(job([](ConvConfig& c) { c.mxu = 5000; }) == program({{"--mxu", "5000"}}));
  CHECK(job([](ConvConfig& c) { c.mxu = 0; }) == program({{"--mxu", "0"}}));
  CHECK(job([](ConvConfig& c) { c.latency = -1; }) == program({{"--latency", "-1"}}));
  CHECK(job([](ConvConfig& c) { c.batch = 0; }) == program({{"--batch", "0"}}));
  CHECK(job([](ConvConfig& c) { c.verify_budget = -1; }) == program({{"--verify-budget", "-1"}}));
  CHECK(job([](ConvConfig& c) { c.max_layers = 0; }) == program({{"--max-layers", "0"}}));
  CHECK(job([](ConvConfig& c) { c.layer_spec = "1,2,3"; }) == program({{"--layer", "1,2,3"}}));
  CHECK(job([](ConvConfig& c) { c.layer_spec = ""; }) == program({{"--layer", ""}}));
  CHECK(job([](ConvConfig& c) { c.network = "net.csv"; }) == program({{"--network", "net.csv"}}));
  CHECK_THAT(job([](ConvConfig& c) { c.mxu = 8, c.memory.sram_kib = 1; }),
             Catch::StartsWith("--mxu 8: [mxu] sram_kib: 1 KiB holds"));
  CHECK(job([](ConvConfig& c) { c.run_explicit = c.run_implicit = false; }) ==
        "--method: neither explicit nor implicit runs");
  CHECK(job([](ConvConfig&) {}).empty());
}
