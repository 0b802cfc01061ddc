#include "io/h5_file.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>

#include "core/input_error.hpp"
#include "core/limits.hpp"
#include "io/hdf5_version.hpp"

namespace coinfer::h5 {
namespace {
struct SilenceHdf5 {
  SilenceHdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }
};
const SilenceHdf5 kSilence;

Handle no_times_gcpl() {
  Handle p(H5Pcreate(H5P_GROUP_CREATE), H5Pclose);
  H5Pset_obj_track_times(p.get(), false);
  return p;
}
Handle no_times_dcpl() {
  Handle p(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_obj_track_times(p.get(), false);
  return p;
}
hid_t file_type_of(hid_t native) {
  return native == H5T_NATIVE_DOUBLE  ? H5T_IEEE_F64LE
         : native == H5T_NATIVE_INT64 ? H5T_STD_I64LE
         : native == H5T_NATIVE_INT32 ? H5T_STD_I32LE
                                      : H5T_STD_I8LE;
}
Handle utf8_text_type() {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}
std::string parent_of(const std::string& name) {
  auto slash = name.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : name.substr(0, slash);
}
}  // namespace

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = -1;
  }
  return *this;
}

Handle::~Handle() {
  if (id_ >= 0 && closer_) closer_(id_);
}

void File::fail(const std::string& object, const std::string& what) const { throw InputError(SourceLocation{path_, 0, 0}, object, what); }

File File::create(const std::string& path) {
  File f;
  f.path_ = path;
  Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
  H5Pset_obj_track_times(fcpl.get(), false);
  hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), H5P_DEFAULT);
  if (id < 0) f.fail("", "cannot create HDF5 file (is the folder writable?)");
  f.file_ = Handle(id, H5Fclose);
  return f;
}

File File::open_read(const std::string& path) {
  File f;
  f.path_ = path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) f.fail("", ec ? "cannot read (" + ec.message() + ")" : std::string("file not found"));
  if (H5Fis_hdf5(path.c_str()) <= 0) f.fail("", "not an HDF5 file (corrupt or wrong format)");
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) f.fail("", "cannot open HDF5 file (corrupt?)");
  f.file_ = Handle(id, H5Fclose);
  return f;
}

bool File::exists(const std::string& name) const {
  // H5Lexists must be walked component by component.
  std::string cur;
  size_t start = 1;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    cur = name.substr(0, slash);
    if (H5Lexists(file_.get(), cur.c_str(), H5P_DEFAULT) <= 0) return false;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return true;
}

void File::make_group(const std::string& name) {
  if (name == "/" || exists(name)) return;
  make_group(parent_of(name));
  Handle gcpl = no_times_gcpl();
  hid_t g = H5Gcreate2(file_.get(), name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT);
  if (g < 0) fail(name, "cannot create group");
  H5Gclose(g);
}

std::vector<std::string> File::children(const std::string& group) const {
  std::vector<std::string> out;
  hid_t g = H5Gopen2(file_.get(), group.c_str(), H5P_DEFAULT);
  if (g < 0) fail(group, "missing group");
  H5G_info_t info;
  if (H5Gget_info(g, &info) < 0) {
    H5Gclose(g);
    fail(group, "cannot read the group (corrupt?)");
  }
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (len < 0 || len > 65535) {
      H5Gclose(g);
      fail(group, "cannot read the names of its members (corrupt?)");
    }
    std::string name(static_cast<size_t>(len), '\0');
    H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), len + 1, H5P_DEFAULT);
    out.push_back(name);
  }
  H5Gclose(g);
  return out;
}

hid_t File::object(const std::string& name) const {
  if (!exists(name)) fail(name, "missing object");
  hid_t o = H5Oopen(file_.get(), name.c_str(), H5P_DEFAULT);
  if (o < 0) fail(name, "cannot open object");
  return o;
}

void File::write_attr(const std::string& obj, const std::string& name, const std::string& value) {
  Handle o(object(obj), H5Oclose);
  // Variable-length UTF-8, as the string datasets: h5py and pandas read it as `str` without decoding
  // (files before results schema 2 / sweep schema 2 hold fixed-length bytes; readers take both).
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(o.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  const char* text = value.c_str();
  if (a.get() < 0 || H5Awrite(a.get(), type.get(), &text) < 0) fail(obj + "@" + name, "cannot write attribute");
}

void File::write_attr(const std::string& obj, const std::string& name, double value) {
  Handle o(object(obj), H5Oclose);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(o.get(), name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (a.get() < 0 || H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value) < 0) fail(obj + "@" + name, "cannot write attribute");
}

void File::write_attr(const std::string& obj, const std::string& name, std::int64_t value) {
  Handle o(object(obj), H5Oclose);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(o.get(), name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (a.get() < 0 || H5Awrite(a.get(), H5T_NATIVE_INT64, &value) < 0) fail(obj + "@" + name, "cannot write attribute");
}

bool File::has_attr(const std::string& obj, const std::string& name) const {
  if (!exists(obj) && obj != "/") return false;
  Handle o(object(obj), H5Oclose);
  return H5Aexists(o.get(), name.c_str()) > 0;
}

std::vector<std::string> File::attr_names(const std::string& obj) const {
  Handle o(object(obj), H5Oclose);
#if H5_VERSION_GE(1, 12, 0)  // Debian 13's HDF5 1.14: the object-info call and struct were versioned
  H5O_info2_t info;
  if (H5Oget_info3(o.get(), &info, H5O_INFO_NUM_ATTRS) < 0) fail(obj, "cannot read its attributes (corrupt?)");
#else
  H5O_info_t info;
  if (H5Oget_info2(o.get(), &info, H5O_INFO_NUM_ATTRS) < 0) fail(obj, "cannot read its attributes (corrupt?)");
#endif
  std::vector<std::string> out;
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    ssize_t len = H5Aget_name_by_idx(o.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (len < 0 || len > 65535) fail(obj, "cannot read its attribute names (corrupt?)");
    std::string n(static_cast<size_t>(len), '\0');
    H5Aget_name_by_idx(o.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, n.data(), len + 1, H5P_DEFAULT);
    out.push_back(n);
  }
  return out;
}

H5T_class_t File::attr_class(const std::string& obj, const std::string& name) const {
  Handle o(object(obj), H5Oclose);
  if (H5Aexists(o.get(), name.c_str()) <= 0) fail(obj + "@" + name, "missing attribute");
  Handle a(H5Aopen(o.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  return H5Tget_class(type.get());
}

std::string File::read_attr_string(const std::string& obj, const std::string& name) const {
  Handle o(object(obj), H5Oclose);
  if (H5Aexists(o.get(), name.c_str()) <= 0) fail(obj + "@" + name, "missing attribute");
  Handle a(H5Aopen(o.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING) fail(obj + "@" + name, "attribute is not text");
  if (H5Tis_variable_str(type.get()) > 0) {
    char* s = nullptr;
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));  // HDF5 does not convert between ASCII and UTF-8
    if (H5Aread(a.get(), mem.get(), &s) < 0) fail(obj + "@" + name, "cannot read attribute");
    std::string out = s ? s : "";
    H5free_memory(s);
    return out;
  }
  size_t size = H5Tget_size(type.get());
  if (size == 0 || size > (1u << 20)) fail(obj + "@" + name, "attribute text size is implausible (corrupt?)");
  std::string buf(size, '\0');
  if (H5Aread(a.get(), type.get(), buf.data()) < 0) fail(obj + "@" + name, "cannot read attribute");
  buf.resize(buf.find('\0') == std::string::npos ? buf.size() : buf.find('\0'));
  return buf;
}

double File::read_attr_double(const std::string& obj, const std::string& name) const {
  Handle o(object(obj), H5Oclose);
  if (H5Aexists(o.get(), name.c_str()) <= 0) fail(obj + "@" + name, "missing attribute");
  Handle a(H5Aopen(o.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  double v = 0;
  if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v) < 0) fail(obj + "@" + name, "attribute is not a number");
  return v;
}

std::int64_t File::read_attr_int(const std::string& obj, const std::string& name) const {
  Handle o(object(obj), H5Oclose);
  if (H5Aexists(o.get(), name.c_str()) <= 0) fail(obj + "@" + name, "missing attribute");
  Handle a(H5Aopen(o.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  std::int64_t v = 0;
  if (H5Aread(a.get(), H5T_NATIVE_INT64, &v) < 0) fail(obj + "@" + name, "attribute is not an integer");
  return v;
}

void File::write_raw(const std::string& dataset, hid_t type, const void* data, const std::vector<hsize_t>& dims, const std::string& unit) {
  make_group(parent_of(dataset));
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle dcpl = no_times_dcpl();
  hid_t file_type = file_type_of(type);
  Handle d(H5Dcreate2(file_.get(), dataset.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail(dataset, "cannot create dataset");
  hsize_t total = 1;
  for (auto x : dims) total *= x;
  if (total > 0 && H5Dwrite(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) fail(dataset, "cannot write dataset");
  if (!unit.empty()) write_attr(dataset, "unit", unit);
}

void File::write(const std::string& ds, const std::vector<double>& v, const std::vector<hsize_t>& dims, const std::string& unit) {
  write_raw(ds, H5T_NATIVE_DOUBLE, v.data(), dims, unit);
}
void File::write(const std::string& ds, const std::vector<std::int64_t>& v, const std::vector<hsize_t>& dims, const std::string& unit) {
  write_raw(ds, H5T_NATIVE_INT64, v.data(), dims, unit);
}
void File::write(const std::string& ds, const std::vector<std::int32_t>& v, const std::vector<hsize_t>& dims, const std::string& unit) {
  write_raw(ds, H5T_NATIVE_INT32, v.data(), dims, unit);
}
void File::write(const std::string& ds, const std::vector<std::int8_t>& v, const std::vector<hsize_t>& dims, const std::string& unit) {
  write_raw(ds, H5T_NATIVE_INT8, v.data(), dims, unit);
}

void File::write_float(const std::string& ds, const std::vector<float>& v, const std::vector<hsize_t>& dims) {
  make_group(parent_of(ds));
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle dcpl = no_times_dcpl();
  Handle d(H5Dcreate2(file_.get(), ds.c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail(ds, "cannot create dataset");
  if (!v.empty() && H5Dwrite(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) fail(ds, "cannot write dataset");
}

void File::append_raw(const std::string& ds, hid_t mem_type, hid_t file_type, const void* data, hsize_t n, hsize_t chunk_rows,
                      const std::string& unit) {
  if (!exists(ds)) {
    make_group(parent_of(ds));
    const hsize_t none = 0, unlimited = H5S_UNLIMITED, chunk = std::max<hsize_t>(1, chunk_rows);
    Handle space(H5Screate_simple(1, &none, &unlimited), H5Sclose);
    Handle dcpl = no_times_dcpl();
    if (H5Pset_chunk(dcpl.get(), 1, &chunk) < 0) fail(ds, "cannot set the dataset's chunks");
    Handle d(H5Dcreate2(file_.get(), ds.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose);
    if (d.get() < 0) fail(ds, "cannot create dataset");
    if (!unit.empty()) write_attr(ds, "unit", unit);
  }
  if (n == 0) return;
  Handle d(H5Dopen2(file_.get(), ds.c_str(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail(ds, "cannot open dataset");
  hsize_t at = 0;
  {
    Handle before(H5Dget_space(d.get()), H5Sclose);
    if (H5Sget_simple_extent_ndims(before.get()) != 1) fail(ds, "dataset is not one-dimensional");
    H5Sget_simple_extent_dims(before.get(), &at, nullptr);
  }
  const hsize_t total = at + n;
  if (H5Dset_extent(d.get(), &total) < 0) fail(ds, "cannot grow dataset");
  Handle space(H5Dget_space(d.get()), H5Sclose);
  if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &at, nullptr, &n, nullptr) < 0) fail(ds, "cannot select rows");
  Handle mem(H5Screate_simple(1, &n, nullptr), H5Sclose);
  if (H5Dwrite(d.get(), mem_type, mem.get(), space.get(), H5P_DEFAULT, data) < 0) fail(ds, "cannot write dataset");
}

void File::append(const std::string& ds, const std::vector<double>& v, hsize_t chunk_rows, const std::string& unit) {
  append_raw(ds, H5T_NATIVE_DOUBLE, file_type_of(H5T_NATIVE_DOUBLE), v.data(), v.size(), chunk_rows, unit);
}
void File::append(const std::string& ds, const std::vector<std::int64_t>& v, hsize_t chunk_rows, const std::string& unit) {
  append_raw(ds, H5T_NATIVE_INT64, file_type_of(H5T_NATIVE_INT64), v.data(), v.size(), chunk_rows, unit);
}
void File::append(const std::string& ds, const std::vector<std::int32_t>& v, hsize_t chunk_rows, const std::string& unit) {
  append_raw(ds, H5T_NATIVE_INT32, file_type_of(H5T_NATIVE_INT32), v.data(), v.size(), chunk_rows, unit);
}
void File::append(const std::string& ds, const std::vector<std::int8_t>& v, hsize_t chunk_rows, const std::string& unit) {
  append_raw(ds, H5T_NATIVE_INT8, file_type_of(H5T_NATIVE_INT8), v.data(), v.size(), chunk_rows, unit);
}
void File::append(const std::string& ds, const std::vector<std::string>& v, hsize_t chunk_rows) {
  const Handle type = utf8_text_type();
  std::vector<const char*> ptrs;
  ptrs.reserve(v.size());
  for (const auto& x : v) ptrs.push_back(x.c_str());
  append_raw(ds, type.get(), type.get(), ptrs.data(), v.size(), chunk_rows, "");
}

void File::write(const std::string& ds, const std::vector<std::string>& v) {
  make_group(parent_of(ds));
  hsize_t n = v.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  const Handle type = utf8_text_type();
  Handle dcpl = no_times_dcpl();
  Handle d(H5Dcreate2(file_.get(), ds.c_str(), type.get(), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail(ds, "cannot create dataset");
  std::vector<const char*> ptrs;
  for (const auto& s : v) ptrs.push_back(s.c_str());
  if (n > 0 && H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0) fail(ds, "cannot write dataset");
}

namespace {
template <typename T>
std::vector<T> read_any(const File& f, hid_t h5file, const std::string& ds, hid_t mem_type, std::vector<hsize_t>* dims,
                        const std::function<void(const std::string&, const std::string&)>& fail) {
  if (!f.exists(ds)) fail(ds, "missing dataset");
  Handle d(H5Dopen2(h5file, ds.c_str(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail(ds, "cannot open dataset");
  Handle type(H5Dget_type(d.get()), H5Tclose);
  H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) fail(ds, "dataset is not numeric");
  Handle space(H5Dget_space(d.get()), H5Sclose);
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > 32) fail(ds, "dataset has an implausible rank (corrupt?)");
  std::vector<hsize_t> dd(static_cast<size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dd.data(), nullptr) < 0) fail(ds, "cannot read the dataset's shape (corrupt?)");
  // Refuse datasets beyond 2^28 elements (2 GiB of doubles) before allocating for them.
  constexpr hsize_t kMaxElements = hsize_t{1} << 28;
  hsize_t total = 1;
  for (auto x : dd) {
    if (x != 0 && total > kMaxElements / x) fail(ds, "dataset is too large to read (more than 2^28 elements)");
    total *= x;
  }
  std::vector<T> out(total);
  if (total > 0 && H5Dread(d.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) fail(ds, "cannot read dataset (corrupt?)");
  if (dims) *dims = dd;
  return out;
}
}  // namespace

std::vector<double> File::read_double(const std::string& ds, std::vector<hsize_t>* dims) const {
  return read_any<double>(*this, file_.get(), ds, H5T_NATIVE_DOUBLE, dims, [this](const std::string& o, const std::string& w) { fail(o, w); });
}

std::vector<std::string> File::read_strings(const std::string& ds) const {
  if (!exists(ds)) fail(ds, "missing dataset");
  Handle d(H5Dopen2(file_.get(), ds.c_str(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail(ds, "cannot open dataset");
  Handle type(H5Dget_type(d.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) <= 0) fail(ds, "dataset is not variable-length text");
  Handle space(H5Dget_space(d.get()), H5Sclose);
  hsize_t n = 0;
  if (H5Sget_simple_extent_ndims(space.get()) != 1 || H5Sget_simple_extent_dims(space.get(), &n, nullptr) < 0) fail(ds, "must be one-dimensional");
  // A run's failure texts are one a request: as many as a run may make (a bound, so that a corrupt
  // extent cannot ask for more than 128 MiB of pointers).
  constexpr hsize_t kMaxStrings = hsize_t{1} << 24;
  static_assert(limits::kMaxRequests <= static_cast<long long>(kMaxStrings), "results.h5 must be readable back");
  if (n > kMaxStrings) fail(ds, "more than 2^24 strings (corrupt?)");
  Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mem.get(), H5T_VARIABLE);
  H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
  std::vector<char*> ptrs(n, nullptr);
  if (n > 0 && H5Dread(d.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0) fail(ds, "cannot read dataset (corrupt?)");
  std::vector<std::string> out;
  for (char* p : ptrs) {
    out.emplace_back(p ? p : "");
    H5free_memory(p);
  }
  return out;
}

File::DatasetInfo File::info(const std::string& ds) const {
  if (!exists(ds)) fail(ds, "missing dataset");
  Handle d(H5Dopen2(file_.get(), ds.c_str(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail(ds, "not a dataset");
  Handle type(H5Dget_type(d.get()), H5Tclose);
  Handle space(H5Dget_space(d.get()), H5Sclose);
  DatasetInfo i;
  i.type_class = H5Tget_class(type.get());
  i.element_bytes = H5Tget_size(type.get());
  const int rank = H5Sget_simple_extent_ndims(space.get());
  i.dims.resize(static_cast<size_t>(rank > 0 ? rank : 0));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), i.dims.data(), nullptr);
  return i;
}

std::vector<float> File::read_float(const std::string& ds) const {
  return read_any<float>(*this, file_.get(), ds, H5T_NATIVE_FLOAT, nullptr, [this](const std::string& o, const std::string& w) { fail(o, w); });
}

std::vector<std::int64_t> File::read_int64(const std::string& ds, std::vector<hsize_t>* dims) const {
  return read_any<std::int64_t>(*this, file_.get(), ds, H5T_NATIVE_INT64, dims, [this](const std::string& o, const std::string& w) { fail(o, w); });
}

std::string library_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

}  // namespace coinfer::h5
