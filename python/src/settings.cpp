// A job's typed settings (bindings.hpp): each value kept as JSON, a bool as a bool, a dict
// as an object of words, anything else as its word, so that rank 0's travel as one text.
#include <set>

#include "bindings.hpp"

namespace triada::py {

namespace {

using Json = nlohmann::ordered_json;

std::string spelled(const pyb::handle& value) {
  if (pyb::isinstance<pyb::str>(value) || !pyb::isinstance<pyb::sequence>(value))
    return pyb::str(value);
  std::string out;
  for (const auto& item : value) out += (out.empty() ? "" : ",") + std::string(pyb::str(item));
  return out;
}

Json json_of(const pyb::handle& value) {
  if (pyb::isinstance<pyb::bool_>(value)) return value.cast<bool>();
  if (!pyb::isinstance<pyb::dict>(value)) return spelled(value);
  Json d = Json::object();
  for (const auto& [key, item] : value.cast<pyb::dict>())
    d[std::string(pyb::str(key))] = spelled(item);
  return d;
}

}  // namespace

Settings::Settings(const pyb::dict& given, std::initializer_list<const char*> known) {
  const std::set<std::string> names(known.begin(), known.end());
  for (const auto& [key, value] : given) {
    const std::string name = pyb::str(key);
    if (!names.count(name)) throw pyb::type_error("unknown setting '" + name + "'");
    if (!value.is_none()) values_[name] = json_of(value);
  }
}

void Settings::share(MPI_Comm comm) {
  values_ = Json::parse(mpi::bcast_string(comm, values_.dump(), 0));
}

bool Settings::flag(const std::string& key) const {
  return has(key) && values_[key].is_boolean() && values_[key].get<bool>();
}

std::string Settings::word(const std::string& key) const {
  if (!has(key)) return "";
  const Json& v = values_[key];
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return v.is_string() ? v.get<std::string>() : "";
}

std::string Settings::path(const std::string& key, const std::string& option) const {
  if (has(key) && word(key).empty()) throw config_error(option + ": empty file name");
  return word(key);
}

std::vector<std::pair<std::string, std::string>> Settings::pairs(const std::string& key) const {
  std::vector<std::pair<std::string, std::string>> out;
  if (has(key) && values_[key].is_object())
    for (const auto& [k, v] : values_[key].items()) out.emplace_back(k, v.get<std::string>());
  return out;
}

}  // namespace triada::py
