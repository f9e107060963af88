#include "report/provenance.hpp"

#include <unistd.h>

#include <ctime>

#include "core/version.hpp"

namespace triada {

nlohmann::json to_json(const Provenance& p) {
  return {{"program", p.program},
          {"version", p.version},
          {"commit", p.commit},
          {"command_line", p.command_line},
          {"host", p.host},
          {"date", p.date},
          {"ranks", p.ranks},
          {"mpi_library", p.mpi_library},
          {"hdf5_library", p.hdf5_library},
          {"kernels", p.kernels}};
}

Provenance provenance_from_json(const nlohmann::json& j) {
  Provenance p;
  p.program = j.at("program").get<std::string>();
  p.version = j.at("version").get<std::string>();
  p.commit = j.at("commit").get<std::string>();
  p.command_line = j.at("command_line").get<std::string>();
  p.host = j.at("host").get<std::string>();
  p.date = j.at("date").get<std::string>();
  p.ranks = j.at("ranks").get<int>();
  p.mpi_library = j.at("mpi_library").get<std::string>();
  p.hdf5_library = j.at("hdf5_library").get<std::string>();
  p.kernels = j.at("kernels").get<std::string>();
  return p;
}

std::string shell_quote(const std::string& word) {
  const auto safe = [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("@%+=:,./_-").find(static_cast<char>(c)) != std::string_view::npos;
  };
  bool plain = !word.empty();
  for (const unsigned char c : word) plain = plain && safe(c);
  if (plain) return word;
  std::string q = "'";
  for (const char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shell_words(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) line += (line.empty() ? "" : " ") + shell_quote(w);
  return line;
}

std::string shell_words(int argc, const char* const* argv) {
  std::vector<std::string> words;
  for (int i = 0; i < argc && argv[i]; ++i) words.emplace_back(argv[i]);
  return shell_words(words);
}

std::string iso8601_utc(long long t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string iso8601_utc_now() {
  return iso8601_utc(static_cast<long long>(std::time(nullptr)));
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown";
  return buf;
}

Provenance build_provenance(const std::string& program, const std::string& command_line,
                            int ranks) {
  Provenance p;
  p.program = program;
  p.version = version_string();
  p.commit = git_commit();
  p.command_line = command_line;
  p.host = host_name();
  p.date = iso8601_utc_now();
  p.ranks = ranks;
  return p;
}

}  // namespace triada
