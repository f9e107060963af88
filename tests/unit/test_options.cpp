// Options and mesh configs: one declaration, INI and command line, command line wins.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "apps/transform/options.hpp"
#include "config/options.hpp"
#include "core/error.hpp"
#include "support/catch.hpp"

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
  CHECK(file.energy.mac_pj() == builtin.energy.mac_pj());
  CHECK(file.energy[Counter::x_bus_sends] == builtin.energy[Counter::x_bus_sends]);
  CHECK(file.energy[Counter::y_bus_sends] == builtin.energy[Counter::y_bus_sends]);
  CHECK(file.energy[Counter::y_bus_receives] == builtin.energy[Counter::y_bus_receives]);
  CHECK(file.energy[Counter::waits] == builtin.energy[Counter::waits]);
  CHECK(file.energy.static_pj_per_cell_step == builtin.energy.static_pj_per_cell_step);
  CHECK(file.mxu == builtin.mxu);
  // Every mode's sub-step energy is in the file with the built-in value, and a mode's MAC
  // energy is that times its sub-steps (real: substeps_real; complex: substeps_complex).
  CHECK(file.mode_mac_pj == builtin.mode_mac_pj);
  std::ifstream in(TRIADA_SOURCE_DIR "/meshcfg/default.ini");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const CellModeInfo& m : kCellModeTable) {
    CAPTURE(m.name);
    CHECK_THAT(text,
               Catch::Contains(std::string("\n") + m.energy_key + " = " + m.energy_default + "\n"));
    const std::string ini = "/tmp/triada_unit_mode.ini";
    std::ofstream(ini) << "[cell]\nmode = " << m.name << "\n";
    const MeshConfig c = parse_mesh_file(ini);
    const double pj = std::stod(m.energy_default);
    CHECK(c.energy.mac_pj() == pj * m.substeps_real);
    CHECK(c.energy_for(false).mac_pj() == pj * m.substeps_real);
    CHECK(c.energy_for(true).mac_pj() == pj * m.substeps_complex);
  }
}

TEST_CASE("the command line wins over the mesh config file", "[options]") {
  const std::string ini =
      write_ini("wins", "[esop]\nenabled = off\n[energy]\nmac_pj = 3\n[mesh]\ncells = 9,9,9\n");
  auto c = parse({"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--mesh", ini});
  REQUIRE(c);
  CHECK(c->mesh.mode == Mode::dense);
  CHECK(c->mesh.energy.mac_pj() == 3.0);
  CHECK(c->mesh.cells == ext3{9, 9, 9});
  c = parse({"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--mesh", ini, "--esop", "on",
             "--energy.mac_pj", "7", "--mesh.cells", "auto"});
  REQUIRE(c);
  CHECK(c->mesh.mode == Mode::esop);
  CHECK(c->mesh.energy.mac_pj() == 7.0);
  CHECK_FALSE(c->mesh.cells);
}

TEST_CASE("transform lists give one transform per axis", "[options]") {
  auto c = parse({"-i", "a.h5:/x", "-o", "b.h5", "-t", "dft,dct,wht", "--norm", "backward",
                  "--inverse", "--stage-order", "123"});
  REQUIRE(c);
  CHECK(c->kinds ==
        std::array<TransformKind, 3>{TransformKind::dft, TransformKind::dct, TransformKind::wht});
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

TEST_CASE("bad options and config values are config errors with one clear line",
          "[options][errors]") {
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
        write_ini("badkey", "[mesh]\ncelz = 4,4,4\n")},
       "celz"},
      {{"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--mesh",
        write_ini("badval", "[ranks]\nactuators = sometimes\n")},
       "sometimes"},
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

namespace {
// The config_error message of parsing `args` after "-i a.h5 -o b.h5"; fails if none.
std::string error_of(std::vector<std::string> args) {
  args.insert(args.begin(), {"-i", "a.h5", "-o", "b.h5"});
  try {
    parse(args);
  } catch (const config_error& e) {
    return e.what();
  }
  FAIL("no config_error for a bad option");
  return "";
}
}  // namespace

TEST_CASE("words that are not options or their values are refused by name", "[options][errors]") {
  CHECK_THAT(error_of({"-t", "dct", "dft"}), Catch::Contains("unexpected argument 'dft'"));
  CHECK_THAT(error_of({"-t", "dct", "--force", "yes"}),
             Catch::Contains("unexpected argument 'yes'"));
  CHECK_THAT(error_of({"-t", "dct", "--", "x"}), Catch::Contains("unexpected argument 'x'"));
}

TEST_CASE("abbreviated option names are refused, never guessed", "[options][errors]") {
  CHECK_THAT(error_of({"-t", "dct", "--for"}), Catch::Contains("'--for'"));
  CHECK_THAT(error_of({"-t", "dct", "--mesh.cell", "4,4,4"}), Catch::Contains("'--mesh.cell'"));
  CHECK_THAT(error_of({"--trans", "dct"}), Catch::Contains("'--trans'"));
  // The shared parser of the other apps, too.
  boost::program_options::options_description d;
  d.add_options()("force", "overwrite");
  std::vector<std::string> args{"app", "--for"};
  std::vector<char*> argv{args[0].data(), args[1].data()};
  CHECK_THROWS_AS(parse_command_line_strict(2, argv.data(), d), config_error);
  // An INI key is matched whole as well.
  const std::string ini = write_ini("abbrev", "[mesh]\ncell = 4,4,4\n");
  CHECK_THAT(error_of({"-t", "dct", "--mesh", ini}), Catch::Contains("[mesh] cell: unknown key"));
}

TEST_CASE("transform lists (--transform) have one or three non-empty items", "[options][errors]") {
  for (const char* spec : {"dct,", ",dct", "dct,,dft", "dct,dct,dct,dct", ",", "dct,dct,"})
    for (const std::string option : {"-t", "--transform"}) {  // named as typed
      CAPTURE(spec, option);
      const std::string e = error_of({option, spec});
      CHECK_THAT(e, Catch::StartsWith(option + ": "));
      CHECK_THAT(e, Catch::Contains(std::string("'") + spec + "'"));
    }
}

TEST_CASE("numbers are whole tokens in range, never truncated or wrapped", "[options][errors]") {
  for (const char* v : {"4 4,5,3", "4,5,3x", "+4,5,3", "4,5", "4,5,6,7", "4,,5", "0x4,5,3",
                        "99999999999999999999,1,1", "1073741825,1,1", "-4,5,3"}) {
    CAPTURE(v);
    CHECK_THAT(error_of({"-t", "dct", "--mesh.cells", v}), Catch::Contains("--mesh.cells"));
    CHECK_THROWS_AS(parse_ext3(v, "x"), config_error);
  }
  // Lists take no spaces at all, as every list of every program (list_items).
  for (const char* v : {" 4,5,6", "4, 5,6", "4,5 ,6", "4,5,6 ", "4,\t5,6"})
    CHECK_THROWS_WITH(parse_ext3(v, "x"), Catch::Contains("x: a list takes no spaces"));
  CHECK_THROWS_WITH(parse_ext3("4,,6", "x"), Catch::Contains("x: an empty item in the list"));
  CHECK(parse_ext3("4,5,6", "x") == ext3{4, 5, 6});
  CHECK_THAT(error_of({"-t", "dct", "--ranks.grid", "2,2,2000000"}),
             Catch::Contains("--ranks.grid"));
  for (const char* v : {"-1", "1x", "", " 1", "18446744073709551616", "1e3"}) {
    CAPTURE(v);
    CHECK_THAT(error_of({"-t", "dct", "--shuffle-seed", v}), Catch::Contains("--shuffle-seed"));
  }
  auto c = parse({"-i", "a", "-o", "b", "-t", "dct", "--shuffle-seed", "18446744073709551615"});
  REQUIRE(c);
  CHECK(c->shuffle_seed == 18446744073709551615ull);
  for (const char* v : {"nan", "inf", "1e400", " 3", "3pJ", "0x1p3"}) {
    CAPTURE(v);
    CHECK_THAT(error_of({"-t", "dct", "--energy.mac_pj", v}), Catch::Contains("--energy.mac_pj"));
  }
  double d = 0;
  CHECK(parse_double("2.5e-3", d));
  CHECK(d == 2.5e-3);
  std::uint64_t u = 0;
  CHECK_FALSE(parse_uint64("-1", u));
  CHECK_THROWS_AS(parse_unsigned("--x", "-1"), config_error);
}

TEST_CASE("a mesh config (--mesh) must be a readable regular file", "[options][errors]") {
  const std::string dir = "/tmp/triada_unit_mesh_dir";
  std::filesystem::create_directories(dir);
  std::string e = error_of({"-t", "dct", "--mesh", dir});
  CHECK_THAT(e, Catch::Contains(dir) && Catch::Contains("directory"));
  e = error_of({"-t", "dct", "--mesh", "/dev/null"});
  CHECK_THAT(e, Catch::Contains("/dev/null") && Catch::Contains("regular file"));
  e = error_of({"-t", "dct", "--mesh", "/nonexistent/m.ini"});
  CHECK_THAT(e, Catch::Contains("/nonexistent/m.ini") && Catch::Contains("no such file"));
  CHECK_THROWS_AS(parse_mesh_file(dir), config_error);
}

TEST_CASE("a bad value from the mesh INI names the file, section and key", "[options][errors]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[mesh]\ncells = 4 4,5,3\n", "[mesh] cells: a list takes no spaces"},
      {"[mesh]\ncells = 4,5\n", "[mesh] cells: expected three integers"},
      {"[ranks]\ngrid = 1,1\n", "[ranks] grid"},
      {"[ranks]\nactuators = sometimes\n", "[ranks] actuators: expected auto or colocated"},
      {"[cell]\nmode = fp8\n", "[cell] mode"},
      {"[esop]\nenabled = maybe\n", "[esop] enabled: expected on or off"},
      {"[energy]\nmac_pj = abc\n", "[energy] mac_pj: expected 0 or a number in [1e-6, 1e9] (pJ)"},
      {"[energy]\nmac_pj_bf16 = -1\n", "[energy] mac_pj_bf16"},
  };
  int i = 0;
  for (const auto& [text, needle] : cases) {
    CAPTURE(text);
    const std::string ini = write_ini("value" + std::to_string(i++), text);
    const std::string e = error_of({"-t", "dct", "--mesh", ini});
    CHECK_THAT(e, Catch::StartsWith(ini + ": ") && Catch::Contains(needle));
    CHECK_THROWS_WITH(parse_mesh_file(ini), Catch::StartsWith(ini + ": "));
  }
  // A value given on the command line is named as the option, not the file.
  const std::string ini = write_ini("cli", "[mesh]\ncells = 4,4,4\n");
  CHECK_THAT(error_of({"-t", "dct", "--mesh", ini, "--mesh.cells", "4,0,4"}),
             Catch::StartsWith("--mesh.cells:"));
}

TEST_CASE("user text in an error is escaped and bounded", "[options][errors]") {
  CHECK(printable("ab\x01\x7f\xff"
                  "c") == "ab\\x01\\x7f\\xffc");
  CHECK(printable(std::string(1000, 'a')).size() < 100);
  const auto clean = [](const std::string& s) {
    for (const char ch : s)
      if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f)
        return false;
    return s.size() < 400;
  };
  const std::string bin = "/tmp/triada_unit_binary.ini";
  std::ofstream(bin, std::ios::binary) << std::string(
                                              "\x7f"
                                              "ELF\x02\x01\x00\x00\x1b[31m\xff\n",
                                              14)
                                       << std::string(5000, 'x') << "\n";
  std::string e = error_of({"-t", "dct", "--mesh", bin});
  CHECK_THAT(e, Catch::StartsWith(bin + ":") && Catch::Contains("\\x7f"));
  CHECK(clean(e));
  const std::string longline = write_ini("longline", "[mesh]\n" + std::string(5000, '\x1b') + "\n");
  CHECK(clean(error_of({"-t", "dct", "--mesh", longline})));
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"-t", "dct\x1b[2J"},
                                             {"-t", "dct", "--mesh.cells", "4,\x07,4"},
                                             {"-t", "dct", "--esop", std::string(3000, 'o')},
                                             {"-t", "dct", "--cell-mode", "\x1b[31m"},
                                             {"-t", "dct", "--\x1b[31m"},
                                             {"-t", "dct", "w\x1b[31m"}}) {
    e = error_of(args);
    CAPTURE(e);
    CHECK(clean(e));
  }
}

TEST_CASE("a mesh INI may start with a UTF-8 byte-order mark, as editors save one", "[options]") {
  const std::string ini = write_ini("bom", "\xef\xbb\xbf[esop]\nenabled = off\n");
  CHECK(parse_mesh_file(ini).mode == Mode::dense);
  CHECK(without_bom("\xef\xbb\xbfLayer") == "Layer");
  CHECK(without_bom("x\xef\xbb\xbf") == "x\xef\xbb\xbf");  // only at the start
  // Elsewhere it is a byte of a bad line, named escaped.
  const std::string mid = write_ini("midbom",
                                    "[esop]\n\xef\xbb\xbf"
                                    "enabled = off\n");
  CHECK_THROWS_WITH(parse_mesh_file(mid), Catch::Contains("\\xef\\xbb\\xbf"));
}

TEST_CASE("every physical key refuses a value outside its range, named in one line",
          "[options][errors]") {
  // Every key of the physical sections, as --help lists them.
  std::vector<std::string> keys;
  {
    std::vector<std::string> args{"triada-transform", "--help"};
    std::vector<char*> argv{args[0].data(), args[1].data()};
    std::ostringstream help;
    REQUIRE_FALSE(parse_transform_options(2, argv.data(), help));
    std::istringstream lines(help.str());
    std::string word;
    for (std::string line; std::getline(lines, line);) {
      std::istringstream(line) >> word;
      for (const char* s :
           {"--technology.", "--timing.", "--energy.", "--area.", "--machine.", "--mxu."})
        if (word.rfind(s, 0) == 0) keys.push_back(word.substr(2));
    }
  }
  CHECK(keys.size() >= 70);
  // The terms the model may leave out (doc/transform.md "Mesh configs"): 0 is their only value
  // below 1e-6 of the unit.
  const std::set<std::string> zero_ok = {"energy.x_bus_send_pj",
                                         "energy.y_bus_send_pj",
                                         "energy.y_bus_receive_pj",
                                         "energy.wait_pj",
                                         "energy.static_pj_per_cell_step",
                                         "timing.driver_ps",
                                         "timing.wire_ps_per_mm",
                                         "timing.wire_ohm_per_mm",
                                         "timing.wire_ff_per_mm",
                                         "timing.stage_ps",
                                         "timing.overhead_ps",
                                         "timing.mac_latency_ps_fp64",
                                         "timing.mac_latency_ps_fp32",
                                         "timing.control_cycles",
                                         "energy.driver_fj_per_bit",
                                         "energy.wire_fj_per_bit_mm",
                                         "energy.leakage_uw_per_cell",
                                         "area.bit_um2",
                                         "area.wire_pitch_um",
                                         "area.via_um2_per_bit"};
  for (const std::string& key : keys)
    for (const char* v : {"0", "-1", "-0.5", "1e-320", "4.9e-324", "1e-300", "1e-7", "inf", "-inf",
                          "nan", "1e300", "1e10"}) {
      CAPTURE(key, v);
      const bool mac = key.rfind("energy.mac_pj", 0) == 0;  // every MAC energy may be 0
      const std::vector<std::string> args{"-t", "dct", "--" + key, v};
      if (std::string(v) == "0" && (zero_ok.count(key) || mac))
        CHECK(parse({"-i", "a.h5", "-o", "b.h5", "-t", "dct", "--" + key, v}));
      else
        CHECK_THAT(error_of(args), Catch::StartsWith("--" + key + ": "));
    }
}

namespace {
// The mesh_config call of what `args` (a command line's --mesh FILE and --section.key VALUE
// words after "-t dct") asks for.
MeshConfig mesh_config_of(const std::vector<std::string>& args) {
  std::string ini;
  std::vector<std::pair<std::string, std::string>> keys;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--mesh")
      ini = args[i + 1];
    else
      keys.emplace_back(args[i].substr(2), args[i + 1]);
  }
  return mesh_config(ini, keys);
}
}  // namespace

TEST_CASE("mesh_config gives the command line's mesh keys without a command line", "[options]") {
  const std::string ini = write_ini("keys", "[mesh]\ncells = 4,4,4\n[ranks]\ngrid = 1,2,1\n");
  const std::vector<std::string> args = {"--mesh",          ini,  "--mesh.cells", "6,5,4",
                                         "--energy.mac_pj", "2.5"};
  std::vector<std::string> cli = {"-i", "a.h5", "-o", "b.h5", "-t", "dct"};
  cli.insert(cli.end(), args.begin(), args.end());
  const MeshConfig want = parse(cli)->mesh;
  const MeshConfig got = mesh_config_of(args);
  CHECK(got.file == ini);
  CHECK(got.cells == ext3{6, 5, 4});                   // the key wins over the file
  CHECK(got.grid == std::array<int, 3>{1, 2, 1});      // the file's where no key is given
  CHECK(got.energy.mac_pj() == want.energy.mac_pj());  // and as the command line has them
  CHECK(got.cells == want.cells);
  CHECK(got.grid == want.grid);
}

TEST_CASE("mesh_config's errors are the command line's, word for word", "[options][errors]") {
  const std::string bad_file = write_ini("keys_bad", "[esop]\nenabled = maybe\n");
  const std::string good_file = write_ini("keys_good", "[esop]\nenabled = off\n");
  const std::vector<std::vector<std::string>> cases = {
      {"--energy.nokey", "1"},
      {"--energy.mac_pj", "abc"},
      {"--energy.mac_pj", "1", "--energy.mac_pj", "2"},
      {"--mesh.cells", "4,0,4"},
      {"--ranks.actuators", "sometimes"},
      {"--mesh", "/nonexistent/m.ini"},
      {"--mesh", bad_file},
      {"--mesh", good_file, "--esop.enabled", "maybe"},
      {"--mesh", write_ini("keys_unknown", "[mesh]\ncelz = 4,4,4\n")},
  };
  for (const auto& args : cases) {
    CAPTURE(args);
    std::vector<std::string> cli = {"-t", "dct"};
    cli.insert(cli.end(), args.begin(), args.end());
    const std::string want = error_of(cli);
    CHECK_THROWS_AS(mesh_config_of(args), config_error);
    CHECK_THROWS_WITH(mesh_config_of(args), want);
  }
}
