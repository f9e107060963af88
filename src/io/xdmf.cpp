#include "io/xdmf.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace triada {

namespace {

// Text safe inside an XML attribute value or element.
std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string dims(const ext3& e, index_t add = 0) {
  return std::to_string(e[0] + add) + " " + std::to_string(e[1] + add) + " " +
         std::to_string(e[2] + add);
}

// NumberType and Precision of a real element type.
std::string number_type(ElementType t) {
  switch (t) {
    case ElementType::float64:
    case ElementType::complex128:
      return R"(NumberType="Float" Precision="8")";
    case ElementType::uint32:
      return R"(NumberType="UInt" Precision="4")";
    default:
      throw internal_error("xdmf_document: no XDMF view of " + to_string(t));
  }
}

// One cell-centred attribute: "Scalar", or "Matrix" (components along the last extent).
std::string attribute(const std::string& name, const char* type, const std::string& item) {
  return "      <Attribute Name=\"" + escaped(name) + "\" AttributeType=\"" + type +
         "\" Center=\"Cell\">\n        " + item + "\n      </Attribute>\n";
}

// A real dataset, read through HDF5.
std::string hdf_attribute(const XdmfArray& a, const std::string& file, const ext3& cells) {
  return attribute(a.name, "Scalar",
                   "<DataItem Dimensions=\"" + dims(cells) + "\" " + number_type(a.type) +
                       " Format=\"HDF\">" + escaped(file + ":" + a.dataset) + "</DataItem>");
}

// A complex dataset: its raw {r, i} pairs as a two-component array.
std::string complex_attribute(const XdmfArray& a, const std::string& file, const ext3& cells) {
  return attribute(a.name, "Matrix",
                   "<DataItem Dimensions=\"" + dims(cells) + " 2\" " + number_type(a.type) +
                       " Format=\"Binary\" Endian=\"Little\" Seek=\"" + std::to_string(a.offset) +
                       "\">" + escaped(file) + "</DataItem>");
}

}  // namespace

std::string xdmf_path(const std::string& h5_file) {
  const std::filesystem::path p(h5_file);
  const std::string ext = p.extension().string();
  if (ext == ".h5" || ext == ".hdf5" || ext == ".hdf" || ext == ".he5")
    return h5_file.substr(0, h5_file.size() - ext.size()) + ".xmf";
  return h5_file + ".xmf";
}

std::string xdmf_document(const std::string& grid_name, const std::string& h5_file,
                          const ext3& cells, const std::vector<XdmfArray>& arrays) {
  const std::string file = std::filesystem::path(h5_file).filename().string();
  std::string x =
      "<?xml version=\"1.0\" ?>\n"
      "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
      "<Xdmf Version=\"2.0\">\n"
      "  <Domain>\n"
      "    <Grid Name=\"" +
      escaped(grid_name) +
      "\" GridType=\"Uniform\">\n"
      "      <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" +
      dims(cells, 1) +
      "\"/>\n"
      "      <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
      "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
      "Format=\"XML\">0 0 0</DataItem>\n"
      "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
      "Format=\"XML\">1 1 1</DataItem>\n"
      "      </Geometry>\n";
  for (const XdmfArray& a : arrays) {
    x += a.type == ElementType::complex128 ? complex_attribute(a, file, cells)
                                           : hdf_attribute(a, file, cells);
  }
  return x + "    </Grid>\n  </Domain>\n</Xdmf>\n";
}

}  // namespace triada
