#include "jobs/conv_config.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "config/options.hpp"
#include "conv/conv_layer.hpp"
#include "core/error.hpp"
#include "jobs/mxu_option_values.hpp"
#include "mxu/memory_side.hpp"
#include "mxu/tensor_unit.hpp"

namespace triada {

namespace {

// The unit S x S (its own checks, with the latency) and the [mxu] buffer, which must hold
// the staging and one right tile of that side.
void check_mxu(const ConvConfig& c) {
  if (c.mxu < 1) parse_positive("--mxu", std::to_string(c.mxu));
  if (c.mxu > 4096) parse_conv_mxu(std::to_string(c.mxu));
  if (c.batch && *c.batch < 1) parse_positive("--batch", std::to_string(*c.batch));
  if (c.latency < 0) parse_latency(std::to_string(c.latency));
  named("--mxu", [&] { TensorUnit probe(c.mxu * c.mxu, c.latency); });
  const std::string mxu = "--mxu " + std::to_string(c.mxu);
  named(c.mesh.empty() ? mxu : c.mesh + " with " + mxu, [&] { MemorySide probe(c.memory, c.mxu); });
}

}  // namespace

void validate(const ConvConfig& c) {
  if (c.network.empty() == c.layer_spec.empty())
    throw config_error(c.network.empty() ? "give --network FILE.csv or --layer N,CI,HI,WI,CO,HF,WF,"
                                           "stride,pad (see --help)"
                                         : "--network and --layer exclude each other");
  if (!c.run_explicit && !c.run_implicit)
    throw config_error("--method: neither explicit nor implicit runs");
  check_mxu(c);
  if (c.seed > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    parse_seed(std::to_string(c.seed));
  if (!(c.verify_budget >= 0) || !std::isfinite(c.verify_budget))
    parse_verify_budget(spelled(c.verify_budget));
  if (c.max_layers && *c.max_layers < 1)
    parse_positive("--max-layers", std::to_string(*c.max_layers));
  if (!c.network.empty() && (!c.input.empty() || !c.weights.empty()))
    throw config_error("--input and --weights go with --layer (network layers get random data)");
  // The layers (and the network file) now, so a bad file is a config error up front.
  if (!c.network.empty())
    read_network_csv(c.network);
  else
    parse_layer_spec(c.layer_spec, "--layer");
}

}  // namespace triada
