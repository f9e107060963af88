// XDMF sidecars (io/xdmf.hpp): where the sidecar goes, and what its grid and arrays say.
#include "io/xdmf.hpp"
#include "support/catch.hpp"

using namespace triada;

TEST_CASE("a sidecar replaces the HDF5 extension by .xmf, else adds it", "[xdmf]") {
  CHECK(xdmf_path("out.h5") == "out.xmf");
  CHECK(xdmf_path("dir.v2/run.hdf5") == "dir.v2/run.xmf");
  CHECK(xdmf_path("a.hdf") == "a.xmf");
  CHECK(xdmf_path("results") == "results.xmf");
  CHECK(xdmf_path("y.h5.bak") == "y.h5.bak.xmf");
}

TEST_CASE("the grid has one cell per element and each array names its dataset", "[xdmf]") {
  const std::string x =
      xdmf_document("y", "dir/out.h5", {2, 3, 4},
                    {{"y", "/y", ElementType::float64, 0}, {"m", "/g/m", ElementType::uint32, 0}});
  CHECK(x.find(R"(TopologyType="3DCoRectMesh" Dimensions="3 4 5")") != std::string::npos);
  CHECK(x.find(R"(Dimensions="2 3 4" NumberType="Float" Precision="8" Format="HDF">out.h5:/y<)") !=
        std::string::npos);
  CHECK(x.find(R"(NumberType="UInt" Precision="4" Format="HDF">out.h5:/g/m<)") !=
        std::string::npos);
  CHECK(x.find(R"(Center="Cell")") != std::string::npos);
  CHECK(x.find(R"(Center="Node")") == std::string::npos);
}

TEST_CASE("a complex array is read raw as two components at its offset", "[xdmf]") {
  const std::string x =
      xdmf_document("y", "a&b.h5", {2, 3, 4}, {{"y", "/y", ElementType::complex128, 2048}});
  CHECK(x.find(R"(AttributeType="Matrix")") != std::string::npos);
  CHECK(x.find(R"(Dimensions="2 3 4 2" NumberType="Float" Precision="8" Format="Binary" )"
               R"(Endian="Little" Seek="2048">a&amp;b.h5<)") != std::string::npos);
}
