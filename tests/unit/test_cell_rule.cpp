// The cell rule on hand-computed cases (paper Fig. 5): what a cell does with what
// reaches it on its X-bus and Y line, and nothing else.
#include "cell/cell_rule.hpp"
#include "support/catch.hpp"

using namespace triada;

TEST_CASE("a tagged cell drives its Y line, under ESOP only with a non-zero value", "[cell]") {
  Cell<double> c{true, 2.5, true, 0.0};
  XElement<double> pivot{0.0, true}, plain{3.0, false};
  CHECK(pivot_output(c, &pivot, Mode::esop) == 2.5);
  CHECK_FALSE(pivot_output(c, &plain, Mode::esop));
  CHECK_FALSE(pivot_output<double>(c, nullptr, Mode::esop));
  c.v = 0.0;
  CHECK_FALSE(pivot_output(c, &pivot, Mode::esop));
  CHECK(pivot_output(c, &pivot, Mode::dense) == 0.0);
}

TEST_CASE("an orange cell multiplies what it receives by its coefficient", "[cell]") {
  Cell<double> c{true, 9.0, true, 1.0};
  XElement<double> x{3.0, false};
  const double y = 2.0;
  CHECK(cell_update(c, &x, &y, Mode::esop) == Outcome::update_received);
  CHECK(c.w == 7.0);  // 1 + 2 * 3
  CHECK(c.v == 9.0);  // V is read-only during a stage
}

TEST_CASE("a cell with a coefficient but no value on its line waits", "[cell]") {
  Cell<double> c{true, 1.0, true, 4.0};
  XElement<double> x{3.0, false};
  CHECK(cell_update<double>(c, &x, nullptr, Mode::esop) == Outcome::wait);
  CHECK(c.w == 4.0);
}

TEST_CASE("the pivot updates with its own value, and not at all with a zero coefficient",
          "[cell]") {
  Cell<double> c{true, 5.0, true, 0.0};
  XElement<double> x{2.0, true};
  const double y = 5.0;
  CHECK(cell_update(c, &x, &y, Mode::esop) == Outcome::update_own);
  CHECK(c.w == 10.0);
  XElement<double> zero{0.0, true};
  CHECK(cell_update(c, &zero, &y, Mode::esop) == Outcome::none);
  CHECK(c.w == 10.0);
  CHECK(cell_update(c, &zero, &y, Mode::dense) == Outcome::update_own);  // dense does every update
  CHECK(c.w == 10.0);
}

TEST_CASE("a cell without a W register or without an X element does nothing", "[cell]") {
  Cell<double> c{true, 5.0, false, 0.0};
  XElement<double> x{2.0, false};
  const double y = 1.0;
  CHECK(cell_update(c, &x, &y, Mode::dense) == Outcome::none);
  Cell<double> d{true, 5.0, true, 0.0};
  CHECK(cell_update<double>(d, nullptr, &y, Mode::dense) == Outcome::none);
  CHECK(d.w == 0.0);
}

TEST_CASE("complex cells multiply as complex numbers", "[cell]") {
  Cell<cplx> c{true, {}, true, {1.0, 1.0}};
  XElement<cplx> x{{0.0, 1.0}, false};
  const cplx y{2.0, 3.0};
  CHECK(cell_update(c, &x, &y, Mode::esop) == Outcome::update_received);
  CHECK(c.w == cplx(1.0 - 3.0, 1.0 + 2.0));  // (2+3i) * i = -3 + 2i
}

TEST_CASE("a one-line, three-cell 'mesh' run by hand gives the matrix-vector product", "[cell]") {
  // y = x * C along one line: x = (1, 0, 2), C 3x3; step t streams row t with tag at t.
  const double C[3][3] = {{1, 2, 0}, {0, 1, 1}, {3, 0, 1}};
  std::array<Cell<double>, 3> line{{{true, 1, true, 0}, {true, 0, true, 0}, {true, 2, true, 0}}};
  int waits = 0, macs = 0;
  for (int t = 0; t < 3; ++t) {
    std::array<std::optional<XElement<double>>, 3> x;
    for (int k = 0; k < 3; ++k)
      if (C[t][k] != 0 || k == t) x[k] = XElement<double>{C[t][k], k == t};
    const auto y = pivot_output(line[t], &*x[t], Mode::esop);
    for (int k = 0; k < 3; ++k) {
      const auto o = cell_update(line[k], x[k] ? &*x[k] : nullptr, y ? &*y : nullptr, Mode::esop);
      waits += o == Outcome::wait;
      macs += o == Outcome::update_own || o == Outcome::update_received;
    }
  }
  CHECK(line[0].w == 1 * 1 + 2 * 3);
  CHECK(line[1].w == 1 * 2);
  CHECK(line[2].w == 2 * 1);
  CHECK(macs == 2 + 2);  // rows 0 and 2 had a non-zero pivot value, 2 non-zeros each
  CHECK(waits == 1);     // row 1: pivot value 0; the cell holding C[1][2] = 1 waits
}
