#include "config/options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "config/key_readers.hpp"
#include "config/machine_keys.hpp"
#include "config/mxu_keys.hpp"
#include "config/physical_keys.hpp"
#include "core/error.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace triada {

std::string printable(const std::string& s, std::size_t max) {
  std::string out;
  for (const char ch : s) {
    if (out.size() >= max) return out + "...";
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {  // control bytes and non-ASCII would reach the terminal raw
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string without_bom(const std::string& first_line) {
  const std::string bom = "\xef\xbb\xbf";
  return first_line.rfind(bom, 0) == 0 ? first_line.substr(bom.size()) : first_line;
}

namespace {

template <class T>
bool whole(const std::string& s, T& out) {
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && !s.empty();
}

std::string in_quotes(const std::string& s) {
  return "'" + printable(s) + "'";
}

}  // namespace

std::vector<std::string> list_items(const std::string& option, const std::string& s) {
  if (s.find_first_of(" \t\n\r\v\f") != std::string::npos)
    throw config_error(option +
                       ": a list takes no spaces (items separated by single commas), got " +
                       in_quotes(s));
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t pos; (pos = s.find(',', start)) != std::string::npos; start = pos + 1)
    items.push_back(s.substr(start, pos - start));
  items.push_back(s.substr(start));
  for (const std::string& item : items)
    if (item.empty())
      throw config_error(option + ": an empty item in the list " + in_quotes(s) +
                         " (items separated by single commas)");
  return items;
}

void refuse_empty_paths(const po::variables_map& vm, std::initializer_list<const char*> names,
                        const OptionSpellings& spelled) {
  for (const char* name : names)
    if (vm.count(name) && vm[name].as<std::string>().empty())
      throw config_error(spelled(name) + ": empty file name");
}

bool parse_int(const std::string& s, std::int64_t& out) {
  return whole(s, out);
}
bool parse_uint64(const std::string& s, std::uint64_t& out) {
  return whole(s, out);
}

bool parse_double(const std::string& s, double& out) {
  return whole(s, out) && std::isfinite(out);
}

std::int64_t parse_positive(const std::string& option, const std::string& s) {
  std::int64_t v = 0;
  if (!parse_int(s, v) || v < 1)
    throw config_error(option + ": expected a positive integer, got " + in_quotes(s));
  return v;
}

std::uint64_t parse_unsigned(const std::string& option, const std::string& s) {
  std::uint64_t v = 0;
  if (!parse_uint64(s, v))
    throw config_error(option + ": expected an integer in [0, 2^64), got " + in_quotes(s));
  return v;
}

ext3 parse_ext3(const std::string& s, const std::string& what, std::int64_t max) {
  const std::vector<std::string> items = list_items(what, s);
  ext3 e{};
  bool ok = items.size() == 3;
  for (size_t i = 0; ok && i < 3; ++i) ok = parse_int(items[i], e[i]) && e[i] >= 1 && e[i] <= max;
  if (!ok)
    throw config_error(what + ": expected three integers A,B,C in [1, " + std::to_string(max) +
                       "], got " + in_quotes(s));
  return e;
}

namespace {

// [energy] keys: each cell mode's MAC energy, then each counter's other per-event
// energy, then the static term (kCellModeTable, kCounterTable, kStaticEnergy).
void add_energy_options(po::options_description& d) {
  const auto add = [&](const char* key, const char* default_pj, const char* help) {
    d.add_options()((std::string("energy.") + key).c_str(),
                    po::value<std::string>()->default_value(default_pj), help);
  };
  for (const CellModeInfo& m : kCellModeTable) add(m.energy_key, m.energy_default, m.energy_help);
  for (const CounterInfo& c : kCounterTable)
    if (c.energy.default_pj) add(c.energy.key, c.energy.default_pj, c.energy.help);
  add(kStaticEnergy.key, kStaticEnergy.default_pj, kStaticEnergy.help);
}

// [mesh] ... [energy] keys, declared once; defaults equal meshcfg/default.ini.
po::options_description mesh_options() {
  po::options_description d("Mesh configuration (INI sections of --mesh FILE; also --section.key)");
  const std::string cell_modes = "cell arithmetic: " + cell_mode_names();
  // clang-format off
  d.add_options()
    ("mesh.cells", po::value<std::string>()->default_value("auto"),
     "cells P1,P2,P3 of the 3D mesh; auto = max(N, K) per axis")
    ("ranks.grid", po::value<std::string>()->default_value("auto"),
     "brick ranks p1,p2,p3 along the axes; auto = MPI_Dims_create")
    ("ranks.actuators", po::value<std::string>()->default_value("auto"),
     "auto: 3 dedicated actuator ranks when there are >= 4 ranks; colocated: always inside "
     "brick ranks")
    ("cell.mode", po::value<std::string>()->default_value("fp64"), cell_modes.c_str())
    ("esop.enabled", po::value<std::string>()->default_value("on"),
     "on: elastic sparse outer-product (skip zero operands); off: dense");
  // clang-format on
  add_energy_options(d);
  add_physical_options(d);
  add_mxu_options(d);
  add_machine_options(d);
  return d;
}

// Where a mesh key's value came from, for error messages: the INI file and key for keys
// the file set (and the command line did not), otherwise the option.
struct KeySources {
  std::string file;
  std::set<std::string> from_file;

  std::string operator()(const std::string& key) const {
    if (!from_file.count(key)) return "--" + key;
    const size_t dot = key.find('.');
    const std::string name = printable(file, 200) + ": ";
    if (dot == std::string::npos) return name + printable(key);  // a key before any [section]
    return name + "[" + printable(key.substr(0, dot)) + "] " + printable(key.substr(dot + 1));
  }
};

bool on_off(const std::string& v, const std::string& source) {
  if (v == "on" || v == "true" || v == "1" || v == "yes") return true;
  if (v == "off" || v == "false" || v == "0" || v == "no") return false;
  throw config_error(source + ": expected on or off, got " + in_quotes(v));
}

const std::string& text(const po::variables_map& vm, const std::string& key) {
  return vm[key].as<std::string>();
}

// A per-event energy: 0 (the term left out) or within [1e-6, 1e9] pJ.
double energy_value(const po::variables_map& vm, const KeySources& src, const std::string& key) {
  return key_quantity(
      vm, [&](const std::string& k) { return src(k); }, key, Quantity{"pJ", 1e-6, 1e9, true});
}

// The MAC energy of a cell mode: [energy] mac_pj (fp64) or mac_pj_<mode>.
double mac_energy(const po::variables_map& vm, const KeySources& src, CellMode mode) {
  return energy_value(vm, src, std::string("energy.") + cell_mode_info(mode).energy_key);
}

std::optional<std::array<int, 3>> parse_grid(const std::string& v, const std::string& source) {
  if (v == "auto") return std::nullopt;
  const ext3 g = parse_ext3(v, source, std::int64_t{1} << 20);
  return std::array<int, 3>{int(g[0]), int(g[1]), int(g[2])};
}

ActuatorPlacement parse_actuators(const std::string& v, const std::string& source) {
  if (v == "auto") return ActuatorPlacement::automatic;
  if (v == "colocated") return ActuatorPlacement::colocated;
  throw config_error(source + ": expected auto or colocated, got " + in_quotes(v));
}

MeshConfig mesh_from(const po::variables_map& vm, const KeySources& src) {
  MeshConfig m;
  const std::string& cells = text(vm, "mesh.cells");
  if (cells != "auto") m.cells = parse_ext3(cells, src("mesh.cells"));
  m.grid = parse_grid(text(vm, "ranks.grid"), src("ranks.grid"));
  m.actuators = parse_actuators(text(vm, "ranks.actuators"), src("ranks.actuators"));
  const CellMode cell_mode =
      named(src("cell.mode"), [&] { return parse_cell_mode(text(vm, "cell.mode")); });
  m.mode = on_off(text(vm, "esop.enabled"), src("esop.enabled")) ? Mode::esop : Mode::dense;
  // Every key is validated (in declaration order), whichever mode is used.
  for (const CellModeInfo& i : kCellModeTable)
    m.mode_mac_pj[static_cast<size_t>(i.mode)] = mac_energy(vm, src, i.mode);
  m.use_cell_mode(cell_mode);
  for (const CounterInfo& c : kCounterTable)
    if (c.energy.default_pj)
      m.energy[c.counter] = energy_value(vm, src, std::string("energy.") + c.energy.key);
  m.energy.static_pj_per_cell_step =
      energy_value(vm, src, std::string("energy.") + kStaticEnergy.key);
  m.physical = physical_from(vm, [&](const std::string& key) { return src(key); });
  if (m.cells && (m.physical.chip.mesh || m.physical.chip.area_mm2))
    throw config_error(src("mesh.cells") + ": the mesh is given by [chip] " +
                       (m.physical.chip.mesh ? "mesh" : "area_mm2") +
                       " already: set one of them, not both");
  m.mxu = mxu_memory_from(vm, [&](const std::string& key) { return src(key); });
  m.machine = machine_from(vm, [&](const std::string& key) { return src(key); });
  return m;
}

// A mesh config must be a readable regular file of sane size: a directory or a device
// would otherwise read as an empty config and be silently ignored.
std::string read_mesh_text(const std::string& path) {
  const std::string name = printable(path, 200);
  if (path.empty()) throw config_error("mesh config: empty file name");
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (!fs::exists(st)) throw config_error(name + ": mesh config: no such file");
  if (fs::is_directory(st)) throw config_error(name + ": mesh config: is a directory, not a file");
  if (!fs::is_regular_file(st)) throw config_error(name + ": mesh config: not a regular file");
  if (fs::file_size(path, ec) > (1u << 20))
    throw config_error(name + ": mesh config: larger than 1 MiB, not an INI file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error(name + ": mesh config: cannot open (" + std::strerror(errno) + ")");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw config_error(name + ": mesh config: cannot read");
  const std::string text = without_bom(buf.str());
  const auto binary = std::find_if(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return (c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f;
  });
  if (binary != text.end())
    throw config_error(name + ": mesh config: not a text file (byte " +
                       printable(std::string(1, *binary)) + " on line " +
                       std::to_string(1 + std::count(text.begin(), binary, '\n')) + ")");
  return text;
}

// Boost's message for an INI error, as "FILE: [section] key: reason" where it names a key.
config_error ini_error(const std::string& path, const po::error& e) {
  const auto* unknown = dynamic_cast<const po::unknown_option*>(&e);
  if (unknown) {
    const KeySources src{path, {unknown->get_option_name()}};
    return config_error(src(unknown->get_option_name()) + ": unknown key");
  }
  return config_error(printable(path, 200) + ": " + printable(e.what(), 200));
}

// Stores the INI file's keys into vm (keys already set on the command line win) and
// records in `src` which keys came from the file.
void store_mesh_file(const std::string& path, const po::options_description& desc,
                     po::variables_map& vm, KeySources& src) {
  std::istringstream in(read_mesh_text(path));
  src.file = path;
  try {
    const po::parsed_options parsed = po::parse_config_file(in, desc, false);
    for (const po::option& o : parsed.options)
      if (!vm.count(o.string_key) || vm[o.string_key].defaulted())
        src.from_file.insert(o.string_key);
    po::store(parsed, vm);
  } catch (const po::error& e) {
    throw ini_error(path, e);
  }
}

// Boost names an option by its long name even where the user typed its short alias: the
// error's original token says which, and the short style names it "-t".
void name_as_typed(po::error_with_option_name& e) {
  po::error_with_option_name token = e;
  token.set_option_name("");  // an error without an option name gives its original token
  const std::string typed = token.get_option_name();
  if (typed.size() >= 2 && typed[0] == '-' && typed[1] != '-')
    e.set_prefix(po::command_line_style::allow_dash_for_short);
}

// Boost's messages name the option as typed; the user's text in them is escaped.
template <class F>
void translate(F&& f) {
  try {
    f();
  } catch (po::error_with_option_name& e) {
    name_as_typed(e);
    throw config_error(printable(e.what(), 200));
  } catch (const po::error& e) {
    throw config_error(printable(e.what(), 200));
  }
}

// No abbreviations: with Boost's default style `--for` would be taken as `--force`.
constexpr int kStrictStyle =
    po::command_line_style::default_style & ~po::command_line_style::allow_guessing;

// Parses argv (no notify); a word that is neither an option nor an option's value is
// refused by name instead of silently dropped.
po::parsed_options parse_argv(int argc, char** argv, const po::options_description& desc) {
  po::parsed_options parsed(&desc);
  translate([&] {
    parsed = po::command_line_parser(argc, argv).options(desc).style(kStrictStyle).run();
  });
  for (const po::option& o : parsed.options)
    if (o.string_key.empty())  // positional: we declare none
      throw config_error("unexpected argument " +
                         in_quotes(o.original_tokens.empty() ? "" : o.original_tokens[0]) +
                         " (an option takes at most one value; a switch takes none)");
  return parsed;
}

// The mesh keys of `path` ("" = none) over the declared defaults.
void load_mesh_file(const std::string& path, po::variables_map& vm, KeySources& src) {
  const po::options_description desc = mesh_options();
  if (!path.empty()) store_mesh_file(path, desc, vm, src);
  // An empty parse still stores the declared defaults.
  translate([&] {
    po::store(po::command_line_parser(std::vector<std::string>{}).options(desc).run(), vm);
    po::notify(vm);
  });
}

}  // namespace

void OptionSpellings::learn(const std::string& key, const std::string& typed) {
  typed_.emplace(key, typed);  // the first spelling stays
}

OptionSpellings spellings_of(const po::parsed_options& parsed) {
  OptionSpellings s;
  for (const po::option& o : parsed.options) {
    if (o.original_tokens.empty()) continue;
    const std::string& t = o.original_tokens[0];  // --name, --name=value, -n or -nvalue
    s.learn(o.string_key, t.rfind("--", 0) == 0 ? t.substr(0, t.find('=')) : t.substr(0, 2));
  }
  return s;
}

std::string OptionSpellings::operator()(const std::string& key) const {
  const auto it = typed_.find(key);
  return it == typed_.end() ? "--" + key : it->second;
}

po::variables_map parse_command_line_strict(int argc, char** argv,
                                            const po::options_description& desc,
                                            OptionSpellings* spelled) {
  po::variables_map vm;
  const po::parsed_options parsed = parse_argv(argc, argv, desc);
  if (spelled) *spelled = spellings_of(parsed);
  translate([&] {
    po::store(parsed, vm);
    po::notify(vm);
  });
  return vm;
}

const MeshConfig& builtin_mesh_config() {
  static const MeshConfig m = parse_mesh_file("");
  return m;
}

namespace {
// A number as a command line would spell it, for the parser's own check: "nan", "-1", ...
std::string spelled(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
}  // namespace

void validate_mesh(const MeshConfig& m) {
  const int mode = static_cast<int>(m.cell_mode);
  if (mode < 0 || mode >= kCellModes)
    throw config_error("--cell.mode: " + std::to_string(mode) + " is not a cell mode (expected " +
                       cell_mode_names(" or ") + ")");
  if (m.mode != Mode::esop && m.mode != Mode::dense)
    throw config_error("--esop.enabled: " + std::to_string(static_cast<int>(m.mode)) +
                       " is not on or off");
  // The energies through the parser that reads them, so the refusal is its words.
  std::vector<std::pair<std::string, std::string>> keys;
  for (const CounterInfo& c : kCounterTable)
    if (c.energy.default_pj)
      keys.emplace_back(std::string("energy.") + c.energy.key, spelled(m.energy[c.counter]));
  keys.emplace_back(std::string("energy.") + kStaticEnergy.key,
                    spelled(m.energy.static_pj_per_cell_step));
  for (const CellModeInfo& c : kCellModeTable)
    keys.emplace_back(std::string("energy.") + c.energy_key,
                      spelled(m.mode_mac_pj[static_cast<size_t>(c.mode)]));
  mesh_config("", keys);
}

MeshConfig parse_mesh_file(const std::string& path) {
  po::variables_map vm;
  KeySources src;
  load_mesh_file(path, vm, src);
  MeshConfig m = mesh_from(vm, src);
  m.file = path;
  return m;
}

MeshConfig mesh_config(const std::string& ini_file,
                       const std::vector<std::pair<std::string, std::string>>& keys) {
  const po::options_description desc = mesh_options();
  // As words of a command line: Boost's messages name them --section.key.
  po::parsed_options given(&desc, po::command_line_style::allow_long);
  for (const auto& [key, value] : keys) {
    po::option o(key, {value});
    o.original_tokens = {"--" + key, value};
    given.options.push_back(std::move(o));
  }
  po::variables_map vm;
  translate([&] { po::store(given, vm); });  // the keys first: they win over the file's
  KeySources src;
  if (!ini_file.empty()) store_mesh_file(ini_file, desc, vm, src);
  translate([&] { po::notify(vm); });
  MeshConfig m = mesh_from(vm, src);
  m.file = ini_file;
  return m;
}

MeshConfig parse_mesh_file(const std::string& path, CellMode mode) {
  MeshConfig m = parse_mesh_file(path);
  m.use_cell_mode(mode);
  return m;
}

std::optional<MeshCommandLine> MeshCommandLine::parse(int argc, char** argv,
                                                      const po::options_description& app,
                                                      const std::string& mesh_option,
                                                      std::ostream& help) {
  po::options_description mesh = mesh_options();
  po::options_description all;
  all.add(app).add(mesh);
  MeshCommandLine c;
  const po::parsed_options parsed = parse_argv(argc, argv, all);
  c.spelled_ = spellings_of(parsed);
  translate([&] { po::store(parsed, c.vm_); });
  if (c.vm_.count("help")) {
    help << all << "\n";
    return std::nullopt;
  }
  // The command line was stored first, so its values win over the INI file's.
  KeySources src;
  if (c.vm_.count(mesh_option)) {
    const std::string& path = text(c.vm_, mesh_option);
    if (path.empty()) throw config_error("--" + mesh_option + ": empty file name");
    store_mesh_file(path, mesh, c.vm_, src);
  }
  translate([&] { po::notify(c.vm_); });
  c.file_ = src.file;
  c.from_file_.assign(src.from_file.begin(), src.from_file.end());
  return c;
}

MeshConfig MeshCommandLine::mesh() const {
  return mesh_from(vm_, KeySources{file_, {from_file_.begin(), from_file_.end()}});
}

bool parse_on_off(const std::string& value, const std::string& source) {
  return on_off(value, source);
}

}  // namespace triada
