#pragma once
// The mesh configuration (INI file and --section.key options, command line wins) and the
// strict option helpers every program's parser uses (doc/design.md §10.6). Each key is declared
// once with its description and default, so --help documents it. The programs' own
// options live with them in apps/.
#include <array>
#include <boost/program_options.hpp>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cell/cell_rule.hpp"
#include "config/mesh_config.hpp"
#include "core/error.hpp"
#include "counters/counters.hpp"
#include "geometry/plan.hpp"
#include "geometry/time_model.hpp"
#include "physical/mxu_memory.hpp"
#include "physical/physical_model.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

// How `parsed` spelled each option it holds (OptionSpellings, config/mesh_config.hpp).
OptionSpellings spellings_of(const boost::program_options::parsed_options& parsed);

// A command line that takes the mesh keys besides the program's own options: argv parsed
// against `app` plus the mesh keys (each also --section.key); the INI file named by the
// program's `mesh_option` (if given) fills the keys the command line left unset.
class MeshCommandLine {
 public:
  // Returns nothing after writing --help (the program's options and the mesh keys) to
  // `help`. Throws config_error with one line for a bad option, file, key or value.
  static std::optional<MeshCommandLine> parse(
      int argc, char** argv, const boost::program_options::options_description& app,
      const std::string& mesh_option, std::ostream& help);

  const boost::program_options::variables_map& values() const { return vm_; }
  const OptionSpellings& spelled() const { return spelled_; }
  // The mesh keys, validated; errors name the INI file and key, or the option.
  MeshConfig mesh() const;

 private:
  boost::program_options::variables_map vm_;
  OptionSpellings spelled_;
  std::string file_;                    // the INI file read ("" if none)
  std::vector<std::string> from_file_;  // keys whose value came from that file
};

// "on" / "off" (and true/false, 1/0, yes/no); throws config_error naming `source`.
bool parse_on_off(const std::string& value, const std::string& source);

// Refuses an empty value of any of the path options `names` (without "--") that vm holds:
// config_error "--NAME: empty file name" (the option as `spelled`).
void refuse_empty_paths(const boost::program_options::variables_map& vm,
                        std::initializer_list<const char*> names,
                        const OptionSpellings& spelled = {});

// Parses argv against `desc` and runs notify. Strict: no abbreviated option names and no
// positional words (each is refused by name); any Boost.Program_options error becomes one
// config_error line naming the option as typed, the user's text escaped. Every app's
// parser uses it; `spelled` (if given) learns how each option was typed.
boost::program_options::variables_map parse_command_line_strict(
    int argc, char** argv, const boost::program_options::options_description& desc,
    OptionSpellings* spelled = nullptr);

// User text fit for a one-line message: bytes outside printable ASCII as \xNN, and at most
// `max` characters (then "...").
std::string printable(const std::string& s, std::size_t max = 64);

// A text file's first line without its UTF-8 byte-order mark, which spreadsheet exports and
// some editors put first.
std::string without_bom(const std::string& first_line);

// Runs a value parser of another module (cell mode, transform, ...) for `source` (an
// option, or FILE: [section] key): its config_error gets the source in front (once) and
// the user's text in it escaped.
template <class F>
auto named(const std::string& source, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const config_error& e) {
    const std::string what = printable(e.what(), 300);
    throw config_error(what.rfind(source + ":", 0) == 0 ? what : source + ": " + what);
  }
}

// The items of a comma-separated option list ("4,5,6" -> {"4", "5", "6"}), by the one rule
// of every list of every program: no spaces and no empty item. Throws config_error naming
// `option` (an option, or FILE: [section] key) otherwise.
std::vector<std::string> list_items(const std::string& option, const std::string& s);

// Whole-string integer parsing for option values: false unless all of `s` is one integer
// (no spaces, no sign for unsigned types, no overflow).
bool parse_int(const std::string& s, std::int64_t& out);
bool parse_uint64(const std::string& s, std::uint64_t& out);
// Whole-string finite real number (decimal or exponent form; no spaces, no hex, no inf/nan).
bool parse_double(const std::string& s, double& out);
// A positive integer option value; throws config_error naming the option otherwise.
std::int64_t parse_positive(const std::string& option, const std::string& s);
// An unsigned 64-bit option value (digits only); throws config_error naming the option.
std::uint64_t parse_unsigned(const std::string& option, const std::string& s);

// "4,5,6" -> {4,5,6}; throws config_error naming `what` unless a list (list_items) of three
// integers in [1, max].
ext3 parse_ext3(const std::string& s, const std::string& what,
                std::int64_t max = std::int64_t{1} << 30);

}  // namespace triada
