// The provenance record (report/provenance.hpp) and the progress modes
// (counters/progress.hpp): quoting a command line, the ISO 8601 date, the record's keys.
#include <cstdlib>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "counters/progress.hpp"
#include "report/provenance.hpp"
#include "support/catch.hpp"

using namespace triada;

TEST_CASE("shell_quote leaves safe words alone and single-quotes the rest", "[provenance]") {
  CHECK(shell_quote("--input") == "--input");
  CHECK(shell_quote("in.h5:/x") == "in.h5:/x");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("$HOME") == "'$HOME'");
  const std::vector<std::string> words{"triada-gen", "--output", "my file.h5", "--shape", "2,3,4"};
  CHECK(shell_words(words) == "triada-gen --output 'my file.h5' --shape 2,3,4");
  const char* argv[] = {"prog", "x y", nullptr};
  CHECK(shell_words(2, argv) == "prog 'x y'");
}

TEST_CASE("dates are ISO 8601 in UTC", "[provenance]") {
  CHECK(iso8601_utc(0) == "1970-01-01T00:00:00Z");
  CHECK(iso8601_utc(1700000000) == "2023-11-14T22:13:20Z");  // date -u -d @1700000000
  CHECK(std::regex_match(iso8601_utc_now(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

TEST_CASE("the record has the documented keys and reads back", "[provenance]") {
  Provenance p = build_provenance("triada-test", "triada-test --x 'a b'", 3);
  p.mpi_library = "MPI x";
  p.hdf5_library = "1.2.3";
  p.kernels = "avx2";
  CHECK(p.version == version_string());
  CHECK(p.commit == git_commit());
  CHECK(!p.host.empty());
  const nlohmann::json j = to_json(p);
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  CHECK(keys == std::set<std::string>{"program", "version", "commit", "command_line", "host",
                                      "date", "ranks", "mpi_library", "hdf5_library", "kernels"});
  CHECK(j["ranks"] == 3);
  const Provenance q = provenance_from_json(j);
  CHECK(to_json(q) == j);
}

TEST_CASE("the commit is a hash, a dirty hash or unknown", "[provenance]") {
  CHECK(std::regex_match(git_commit(), std::regex("[0-9a-f]{7,64}(-dirty)?|unknown")));
}

TEST_CASE("progress modes: auto, always and never", "[progress]") {
  CHECK(parse_progress_mode("auto") == ProgressMode::automatic);
  CHECK(parse_progress_mode("always") == ProgressMode::always);
  CHECK(parse_progress_mode("never") == ProgressMode::never);
  for (const char* m : {"auto", "always", "never"}) CHECK(to_string(parse_progress_mode(m)) == m);
  CHECK_THROWS_AS(parse_progress_mode("yes"), config_error);
}

TEST_CASE("a stage's progress is its share of the run", "[progress]") {
  CHECK(stage_fraction(0, 3, 0, 10) == 0.0);
  CHECK(stage_fraction(1, 4, 5, 10) == (1 + 0.5) / 4);
  CHECK(stage_fraction(2, 3, 7, 7) == 1.0);
  CHECK(stage_fraction(0, 2, 0, 0) == 0.5);  // a stage of no steps is done
}

TEST_CASE("TRIADA_PROGRESS_SECONDS sets the plain lines' interval", "[progress]") {
  ::setenv("TRIADA_PROGRESS_SECONDS", "0.25", 1);
  CHECK(plain_progress_seconds() == 0.25);
  ::setenv("TRIADA_PROGRESS_SECONDS", "soon", 1);
  CHECK(plain_progress_seconds() == 10.0);
  ::unsetenv("TRIADA_PROGRESS_SECONDS");
  CHECK(plain_progress_seconds() == 10.0);
}
