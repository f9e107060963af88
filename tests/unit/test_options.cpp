// Options and mesh configs: one declaration, INI and command line, command line wins.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "config/options.hpp"
#include "core/error.hpp"

using namespace triada;

namespace {
std::optional<TransformConfig> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "triada-transform");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out;
  return parse_transform_options(static_cast<int>(argv.size()), argv.data(), out);
}
std::string write_ini(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/triada_unit_" + name + ".ini";
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("meshcfg/default.ini equals the built-in defaults", "[options]") {
  const MeshConfig builtin = parse_mesh_file("");
  const MeshConfig file = parse_mesh_file(TRIADA_SOURCE_DIR "/meshcfg/default.ini");
  CHECK(file.cells == builtin.cells);
  CHECK(file.grid == builtin.grid);
  CHECK(file.actuators == builtin.actuators);
  CHECK(file.mode == builtin.mode);
  CHECK(file.energy.mac_pj == builtin.energy.mac_pj);
  CHECK(file.energy.x_bus_send_pj == builtin.energy.x_bus_send_pj);
  CHECK(file.energy.y_bus_send_pj == builtin.energy.y_bus_send_pj);
  CHECK(file.energy.y_bus_receive_pj == builtin.energy.y_bus_receive_pj);
  CHECK(file.energy.wait_pj == builtin.energy.wait_pj);
  CHECK(file.energy.static_pj_per_cell_step == builtin.energy.static_pj_per_cell_step);
  // Every mode's MAC energy is in the file with the built-in value.
  for (const char* mode : {"fp32", "tf32", "bf16", "fp16", "m3xu-fp32", "m3xu-fp32c", "3xtf32"}) {
    CAPTURE(mode);
    const std::string ini = "/tmp/triada_unit_mode.ini";
    std::ofstream(ini) << "[cell]\nmode = " << mode << "\n";
    CHECK(parse_mesh_file(ini).energy.mac_pj > 0);
  }
  std::ifstream in(TRIADA_SOURCE_DIR "/meshcfg/default.ini");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* key : {"mac_pj_fp32", "mac_pj_tf32", "mac_pj_bf16", "mac_pj_fp16",
                          "mac_pj_m3xu_fp32", "mac_pj_m3xu_fp32c", "mac_pj_3xtf32"})
    CHECK_THAT(text, Catch::Contains(key));
}

TEST_CASE("the command line wins over the mesh config file", "[options]") {
  const std::string ini = write_ini("wins", "[esop]\nenabled = off\n[energy]\nmac_pj = 3\n[mesh]\ncells = 9,9,9\n");
  auto c = parse({"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--mesh", ini});
  REQUIRE(c);
  CHECK(c->mesh.mode == Mode::dense);
  CHECK(c->mesh.energy.mac_pj == 3.0);
  CHECK(c->mesh.cells == ext3{9, 9, 9});
  c = parse({"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--mesh", ini, "--esop", "on",
             "--energy.mac_pj", "7", "--mesh.cells", "auto"});
  REQUIRE(c);
  CHECK(c->mesh.mode == Mode::esop);
  CHECK(c->mesh.energy.mac_pj == 7.0);
  CHECK_FALSE(c->mesh.cells);
}

TEST_CASE("transform lists give one transform per axis", "[options]") {
  auto c = parse({"-i", "a.h5:/x", "-o", "b.h5", "-t", "dft,dct,wht", "--norm", "backward",
                  "--inverse", "--stage-order", "123"});
  REQUIRE(c);
  CHECK(c->kinds == std::array<TransformKind, 3>{TransformKind::dft, TransformKind::dct,
                                                 TransformKind::wht});
  CHECK(c->input.dataset == "/x");
  CHECK(c->output.dataset == "/y");
  CHECK(c->norm == Norm::backward);
  CHECK(c->inverse);
  CHECK(c->stage_order == std::array<int, 3>{1, 2, 3});
}

TEST_CASE("--help prints every option and returns nothing to run", "[options]") {
  std::vector<std::string> args{"triada-transform", "--help"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out;
  CHECK_FALSE(parse_transform_options(2, argv.data(), out));
  for (const char* opt : {"--input", "--output", "--transform", "--inverse", "--norm", "--coeffs",
                          "--stage-order", "--esop", "--mesh", "--report", "--trace", "--force",
                          "--mesh.cells", "--ranks.grid", "--energy.mac_pj"})
    CHECK_THAT(out.str(), Catch::Contains(opt));
}

TEST_CASE("bad options and config values are config errors with one clear line", "[options][errors]") {
  using V = std::vector<std::string>;
  const std::vector<std::pair<V, std::string>> cases = {
      {{"-o", "b.h5", "-t", "dct"}, "missing --input"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "fft"}, "unknown transform 'fft'"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "dct,dct"}, "one per axis"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--norm", "unit"}, "unit"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--stage-order", "311"}, "permutation"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--esop", "maybe"}, "on or off"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "gemt"}, "--coeffs"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--bogus"}, "bogus"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--mesh.cells", "4,0,4"}, "mesh.cells"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--energy.mac_pj", "-1"}, "energy.mac_pj"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--mesh", "/nonexistent.ini"}, "/nonexistent.ini"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--mesh",
        write_ini("badkey", "[mesh]\ncelz = 4,4,4\n")}, "celz"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--mesh",
        write_ini("badval", "[ranks]\nactuators = sometimes\n")}, "sometimes"},
  };
  for (const auto& [args, needle] : cases) {
    CAPTURE(needle);
    try {
      parse(args);
      FAIL("no error");
    } catch (const config_error& e) {
      CHECK_THAT(e.what(), Catch::Contains(needle));
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
}
