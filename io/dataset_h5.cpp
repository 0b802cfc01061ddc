#include "io/dataset_h5.hpp"

#include "core/input_error.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/h5_file.hpp"

namespace coinfer {

namespace {
[[noreturn]] void bad(const std::string& path, const std::string& field, const std::string& what) {
  throw InputError(SourceLocation{path, 0, 0}, field, what);
}
std::string shape(const std::vector<hsize_t>& d) {
  std::string s = "(";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + ")";
}
void require_float32(const std::string& path, const std::string& field, const h5::File::DatasetInfo& i) {
  if (i.type_class != H5T_FLOAT || i.element_bytes != 4) bad(path, field, "must be float32");
}
void require_integer(const std::string& path, const std::string& field, const h5::File::DatasetInfo& i) {
  if (i.type_class != H5T_INTEGER) bad(path, field, "must be an integer dataset");
}
}  // namespace

PointCloudFile load_pointnet_h5(const std::string& path) {
  h5::File f = h5::File::open_read(path);
  auto di = f.info("/data");
  require_float32(path, "data", di);
  if (di.dims.size() != 3 || di.dims[2] != 3) bad(path, "data", "must have shape (clouds, points, 3), not " + shape(di.dims));
  auto li = f.info("/label");
  require_integer(path, "label", li);
  if (!(li.dims.size() == 1 || (li.dims.size() == 2 && li.dims[1] == 1)) || li.dims[0] != di.dims[0])
    bad(path, "label", "must have shape (" + std::to_string(di.dims[0]) + ") or (" + std::to_string(di.dims[0]) + ", 1), not " + shape(li.dims));
  PointCloudFile out;
  out.clouds = static_cast<std::int64_t>(di.dims[0]);
  out.points = static_cast<std::int64_t>(di.dims[1]);
  out.data = f.read_float("/data");
  out.labels = f.read_int64("/label");
  return out;
}

GraphFile load_graph_h5(const std::string& path) {
  h5::File f = h5::File::open_read(path);
  auto xi = f.info("/x");
  require_float32(path, "x", xi);
  if (xi.dims.size() != 2) bad(path, "x", "must have shape (nodes, features), not " + shape(xi.dims));
  auto ei = f.info("/edge_index");
  require_integer(path, "edge_index", ei);
  if (ei.dims.size() != 2 || ei.dims[0] != 2) bad(path, "edge_index", "must have shape (2, edges), not " + shape(ei.dims));
  GraphFile out;
  out.nodes = static_cast<std::int64_t>(xi.dims[0]);
  out.features = static_cast<std::int64_t>(xi.dims[1]);
  out.edges = static_cast<std::int64_t>(ei.dims[1]);
  out.x = f.read_float("/x");
  out.edge_index = f.read_int64("/edge_index");
  for (std::int64_t v : out.edge_index)
    if (v < 0 || v >= out.nodes) bad(path, "edge_index", "holds node " + std::to_string(v) + ", outside 0.." + std::to_string(out.nodes - 1));
  if (f.exists("/y")) {
    auto yi = f.info("/y");
    require_integer(path, "y", yi);
    if (yi.dims.empty() || yi.dims[0] != xi.dims[0]) bad(path, "y", "must have one entry per node");
    out.y = f.read_int64("/y");
  }
  return out;
}

void write_pointnet_h5(const std::string& path, const PointCloudFile& p) {
  AtomicFile out(path);
  {
    h5::File f = h5::File::create(out.temp_path());
    f.write_float("/data", p.data, {static_cast<hsize_t>(p.clouds), static_cast<hsize_t>(p.points), 3});
    f.write("/label", p.labels, {static_cast<hsize_t>(p.clouds)});
  }
  out.commit();
}

void write_graph_h5(const std::string& path, const GraphFile& g) {
  AtomicFile out(path);
  {
    h5::File f = h5::File::create(out.temp_path());
    f.write_float("/x", g.x, {static_cast<hsize_t>(g.nodes), static_cast<hsize_t>(g.features)});
    f.write("/edge_index", g.edge_index, {2, static_cast<hsize_t>(g.edges)});
    if (!g.y.empty()) f.write("/y", g.y, {static_cast<hsize_t>(g.nodes)});
  }
  out.commit();
}

}  // namespace coinfer
