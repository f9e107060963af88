// TransformJob from a config struct (no command line): every field the struct can hold
// wrongly, and every rule between fields, is refused by its constructor with the message
// triada-transform gives for the same run on its command line (the oracle: its parser).
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/transform/options.hpp"
#include "config/options.hpp"
#include "core/error.hpp"
#include "jobs/transform_job.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

// A good config, as "-i x.h5 -o y.h5 -t dct" gives it.
TransformConfig good_config() {
  TransformConfig c;
  c.input = {"x.h5", ""};
  c.output = {"y.h5", "/y"};
  c.transform_spec = "dct";
  c.kinds = {TransformKind::dct, TransformKind::dct, TransformKind::dct};
  c.mesh = parse_mesh_file("");
  return c;
}

// The program's message for these words (after "triada-transform").
std::string cli_error(const std::vector<std::string>& words) {
  std::vector<std::string> all = {"triada-transform"};
  all.insert(all.end(), words.begin(), words.end());
  std::vector<char*> argv;
  for (std::string& w : all) argv.push_back(w.data());
  std::ostringstream help;
  try {
    parse_transform_options(static_cast<int>(argv.size()), argv.data(), help);
  } catch (const config_error& e) {
    return e.what();
  }
  FAIL("the program took it");
  return "";
}

std::string job_error(const TransformConfig& c) {
  try {
    TransformJob job(c);
  } catch (const config_error& e) {
    return e.what();
  }
  FAIL("the job took it");
  return "";
}

}  // namespace

TEST_CASE("TransformJob takes a good config as the program does", "[transform_job]") {
  const TransformJob job(good_config());
  CHECK(job.config().transform_spec == "dct");
  TransformConfig model = good_config();
  model.input = model.output = {};
  model.model_shape = ext3{4, 5, 6};
  CHECK_NOTHROW(TransformJob(model));
}

TEST_CASE("TransformJob refuses a bad field with the program's message", "[transform_job]") {
  const std::vector<std::string> files = {"-i", "x.h5", "-o", "y.h5"};
  const auto with = [&](std::vector<std::string> words, bool data = true) {
    if (data) words.insert(words.begin(), files.begin(), files.end());
    return cli_error(words);
  };
  TransformConfig c = good_config();
  c.input = {};
  CHECK(job_error(c) == cli_error({"-o", "y.h5", "-t", "dct"}));
  c = good_config();
  c.output = {};
  CHECK(job_error(c) == cli_error({"-i", "x.h5", "-t", "dct"}));
  c = good_config();
  c.executor = "fast";
  CHECK(job_error(c) == with({"-t", "dct", "--executor", "fast"}));
  c = good_config();
  c.stage_order = {1, 1, 2};
  CHECK(job_error(c) == with({"-t", "dct", "--stage-order", "112"}));
  c = good_config();
  c.kinds[0] = c.kinds[1] = c.kinds[2] = TransformKind::gemt;
  c.transform_spec = "gemt";
  CHECK(job_error(c) == with({"--transform", "gemt"}));  // spelled as c.spelled says
  c = good_config();
  c.coeffs = "c.h5";
  CHECK(job_error(c) == with({"-t", "dct", "--coeffs", "c.h5"}));
  c = good_config();
  c.plan_world_size = 4;
  CHECK(job_error(c) == with({"-t", "dct", "--world-size", "4"}));
  c.dry_run = true;
  c.plan_world_size = 2000000;
  CHECK(job_error(c) == with({"-t", "dct", "--dry-run", "--world-size", "2000000"}));
}

TEST_CASE("A config's mesh starts at the built-in keys and is checked as the program's",
          "[transform_job]") {
  // Unset, it reported 0 pJ for every energy; a NaN or negative energy and an enum out of
  // range (set by a cast) ran. Now: the built-ins, and the program's refusal.
  const TransformConfig fresh;
  CHECK(fresh.mesh.energy.mac_pj() == parse_mesh_file("").energy.mac_pj());
  CHECK(fresh.mesh.energy[Counter::x_bus_sends] == 6.4);
  CHECK(fresh.mesh.physical == PhysicalParams());
  const std::vector<std::string> files = {"-i", "x.h5", "-o", "y.h5", "-t", "dct"};
  const auto with = [&](std::vector<std::string> words) {
    words.insert(words.begin(), files.begin(), files.end());
    return cli_error(words);
  };
  TransformConfig c = good_config();
  c.mesh.energy[Counter::x_bus_sends] = std::nan("");
  CHECK(job_error(c) == with({"--energy.x_bus_send_pj", "nan"}));
  c = good_config();
  c.mesh.mode_mac_pj[0] = -1;
  CHECK(job_error(c) == with({"--energy.mac_pj", "-1"}));
  c = good_config();
  c.mesh.energy.static_pj_per_cell_step = 1e300;
  CHECK(job_error(c) == with({"--energy.static_pj_per_cell_step", "1.0000000000000001e+300"}));
  c = good_config();
  c.mesh.cell_mode = static_cast<CellMode>(77);
  CHECK_THAT(job_error(c), Catch::StartsWith("--cell.mode: 77 is not a cell mode (expected fp64"));
  c = good_config();
  c.mesh.mode = static_cast<Mode>(9);
  CHECK(job_error(c) == "--esop.enabled: 9 is not on or off");
}

TEST_CASE("TransformJob refuses --model-only's data options by name", "[transform_job]") {
  TransformConfig c = good_config();
  c.model_shape = ext3{4, 4, 4};
  CHECK(job_error(c) ==
        cli_error({"--model-only", "4,4,4", "-t", "dct", "--input", "x.h5", "-o", "y.h5"}));
  c.input = c.output = {};
  c.check = true;
  CHECK(job_error(c) == cli_error({"--model-only", "4,4,4", "-t", "dct", "--check"}));
  c.check = false;
  c.model_shape = ext3{4, 0, 4};
  CHECK(job_error(c) == cli_error({"--model-only", "4,0,4", "-t", "dct"}));
}

TEST_CASE("TransformJob refuses transforms that are not the ones named", "[transform_job]") {
  TransformConfig c = good_config();
  c.kinds[1] = TransformKind::dft;  // "dct" names dct on every axis
  CHECK_THROWS_AS(TransformJob(c), config_error);
  c.transform_spec = "dct,dft,dct";
  CHECK_NOTHROW(TransformJob(c));
  c.transform_spec = "";
  CHECK(job_error(c) == cli_error({"-i", "x.h5", "-o", "y.h5"}));
}
