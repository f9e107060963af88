#pragma once
// The TriADA cell rule (doc/design.md §3; paper Sec. 5.2 and Fig. 5, ESOP in Sec. 6).
// It reads only what arrives on the cell's buses and its own registers: never its
// coordinates, never N or P (the paper's coordinate-free property).
#include <optional>

#include "core/types.hpp"

namespace triada {

// A cell's registers for one stage: V (stationary input) and W (the stage's result).
// A cell outside the tensor's extent simply holds no such register.
template <class T>
struct Cell {
  bool has_v = false;
  T v{};
  bool has_w = false;
  T w{};
};

// One element of a tagged coefficient vector as it arrives on the cell's X-bus.
template <class T>
struct XElement {
  T c{};
  bool tag = false;  // 1 on the pivot ("green") plane of this time step
};

enum class Mode { dense, esop };

// Phase 1 of a time step: a tagged ("green", pivot) cell drives its Y line with v;
// under ESOP only if v != 0. Returns the value put on the line, if any.
template <class T>
std::optional<T> pivot_output(const Cell<T>& cell, const XElement<T>* x, Mode mode) {
  if (x == nullptr || !x->tag || !cell.has_v) return std::nullopt;
  if (mode == Mode::esop && is_zero(cell.v)) return std::nullopt;
  return cell.v;
}

// What phase 2 did in a cell; the executors count these.
enum class Outcome {
  none,             // no X element, no W register, or a pivot with nothing to add
  wait,             // got a coefficient but the line's pivot sent nothing (ESOP): idle
  update_own,       // the pivot itself: W += v * c with its own value
  update_received,  // an "orange" cell: received y on its Y line, W += y * c
};

// The cell's multiply-add in its default arithmetic (binary64 FMA); multi-mode cells pass
// their own (precision/cell_mode.hpp).
struct Fp64Mac {
  template <class T>
  T operator()(const T& w, const T& y, const T& c) const {
    return mac(w, y, c);
  }
};

// Phase 2: every cell that holds a W register and got an X element (c, tag) updates
// W += y * c with the y on its Y line (the pivot's own v if it is the pivot). Under ESOP
// a zero c only arrives with tag = 1 and adds nothing, so it is skipped.
template <class T, class Mac = Fp64Mac>
Outcome cell_update(Cell<T>& cell, const XElement<T>* x, const T* y, Mode mode,
                    const Mac& multiply_add = {}) {
  if (x == nullptr || !cell.has_w) return Outcome::none;
  if (y == nullptr) return x->tag ? Outcome::none : Outcome::wait;
  if (mode == Mode::esop && is_zero(x->c)) return Outcome::none;
  cell.w = multiply_add(cell.w, *y, x->c);
  return x->tag ? Outcome::update_own : Outcome::update_received;
}

}  // namespace triada
