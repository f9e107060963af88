#include "physical/technology.hpp"

#include <algorithm>
#include <array>

#include "core/error.hpp"

namespace triada {

namespace {

// One row of Stillmaker and Baas's HP tables: delay = d3 V^3 + d2 V^2 + d1 V + d0,
// energy = e2 V^2 + e1 V + e0, power = p2 V^2 + p1 V + p0 (arbitrary units: only ratios
// between nodes mean anything), the area factor from 45 nm, and the nominal VDD.
struct NodeRow {
  int node_nm;
  double vdd;
  std::array<double, 4> d;
  std::array<double, 3> e;
  std::array<double, 3> p;
  double area_from_45;
};
constexpr std::array<NodeRow, 7> kNodes{{
    {45, 1.00, {-501.6, 1567, -1619, 566.1}, {1.018, -0.3107, 0.1539}, {5462, -1760, 522.4}, 1.0},
    {32, 0.90, {-1047, 2982, -2797, 873.5}, {0.8367, -0.4341, 0.1701}, {4001, -1733, 533.6}, 0.46},
    {20, 0.90, {0, 34.63, -66.37, 41.15}, {0.373, -0.1582, 0.04104}, {2922, -1286, 299.9}, 0.21},
    {16, 0.85, {0, 24.8, -47.52, 28.87}, {0.2958, -0.1241, 0.03024}, {2133, -882.6, 197.7}, 0.19},
    {14,
     0.80,
     {-40.66, 109.2, -100.6, 35.92},
     {0.2363, -0.09675, 0.02239},
     {1675, -711, 159},
     0.17},
    {10,
     0.75,
     {-34.95, 93.65, -85.99, 30.4},
     {0.2068, -0.09311, 0.02375},
     {1456, -621.6, 143.8},
     0.10},
    {7,
     0.70,
     {-28.58, 76.6, -70.26, 24.69},
     {0.1776, -0.09097, 0.02447},
     {1179, -515.7, 123.4},
     0.059},
}};

const NodeRow& row(int node_nm) {
  const auto it = std::find_if(kNodes.begin(), kNodes.end(),
                               [&](const NodeRow& r) { return r.node_nm == node_nm; });
  if (it == kNodes.end())
    throw config_error("technology node " + std::to_string(node_nm) + " nm is not in the tables (" +
                       technology_node_names() + " nm)");
  return *it;
}

double delay_at(const NodeRow& r, double v) {
  return ((r.d[0] * v + r.d[1]) * v + r.d[2]) * v + r.d[3];
}
double quadratic(const std::array<double, 3>& c, double v) {
  return (c[0] * v + c[1]) * v + c[2];
}

}  // namespace

const std::vector<int>& technology_nodes() {
  static const std::vector<int> nodes = [] {
    std::vector<int> n;
    for (const NodeRow& r : kNodes) n.push_back(r.node_nm);
    return n;
  }();
  return nodes;
}

std::string technology_node_names() {
  std::string s;
  for (const NodeRow& r : kNodes) s += (s.empty() ? "" : ", ") + std::to_string(r.node_nm);
  return s;
}

bool is_technology_node(int node_nm) {
  const auto& n = technology_nodes();
  return std::find(n.begin(), n.end(), node_nm) != n.end();
}

double nominal_vdd(int node_nm) {
  return row(node_nm).vdd;
}

NodeScaling scaling_from_45nm(int node_nm, double vdd) {
  const NodeRow& r = row(node_nm);
  if (!(vdd > 0 && vdd <= 2))
    throw config_error("supply voltage " + std::to_string(vdd) + " V is outside (0, 2] V");
  const NodeRow& base = kNodes[0];
  NodeScaling s;
  s.node_nm = node_nm;
  s.vdd = vdd;
  s.delay = delay_at(r, vdd) / delay_at(base, base.vdd);
  s.energy = quadratic(r.e, vdd) / quadratic(base.e, base.vdd);
  s.power = quadratic(r.p, vdd) / quadratic(base.p, base.vdd);
  s.area = r.area_from_45;
  return s;
}

}  // namespace triada
