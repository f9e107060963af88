#pragma once
// Technology nodes: how gate delay, switching energy, power and area scale from the 45 nm
// baseline every constant of the physical model is given at (doc/physical.md §5).
// Source: A. Stillmaker and B. Baas, "Scaling equations for the accurate prediction of CMOS
// device performance from 180 nm to 7 nm", Integration, the VLSI Journal 58 (2017) 74-81:
// the fitted polynomials of delay (cubic in VDD), energy and power (quadratic in VDD) for
// the high-performance (HP) devices, and the area scaling table. Their nodes below 45 nm
// are 32, 20, 16, 14, 10 and 7 nm (there is no 22 nm node in their tables).
#include <string>
#include <vector>

namespace triada {

// Factors of one node at one supply voltage, relative to 45 nm at its nominal 1.0 V.
struct NodeScaling {
  int node_nm = 45;
  double vdd = 1.0;
  double delay = 1;   // gate delays (MAC, drivers, registers)
  double energy = 1;  // switching energy per operation
  double power = 1;   // power at fixed activity (used for leakage)
  double area = 1;    // layout area of logic and registers
};

// The nodes of the tables, largest first: 45, 32, 20, 16, 14, 10, 7.
const std::vector<int>& technology_nodes();
std::string technology_node_names();  // "45, 32, 20, 16, 14, 10, 7"
bool is_technology_node(int node_nm);
// Nominal VDD of the node's PTM HP model, which the fits are evaluated at by default.
double nominal_vdd(int node_nm);
// Throws config_error for a node not in the tables or a VDD outside (0, 2] V.
NodeScaling scaling_from_45nm(int node_nm, double vdd);

}  // namespace triada
