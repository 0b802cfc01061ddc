#pragma once
// Thin RAII layer over the HDF5 C API for io/ only (do not include outside io/*.cpp).
// Every failure becomes an InputError naming the file and the object. Object time stamps are off so
// that the same content gives byte-identical files.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace coinfer::h5 {

class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*closer)(hid_t)) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  ~Handle();
  hid_t get() const { return id_; }

 private:
  hid_t id_ = -1;
  herr_t (*closer_)(hid_t) = nullptr;
};

class File {
 public:
  static File create(const std::string& path);   // truncates
  static File open_read(const std::string& path); // InputError if missing or not HDF5
  const std::string& path() const { return path_; }
  hid_t root() const { return file_.get(); }

  void make_group(const std::string& name);  // "/a/b", parents created as needed; no-op if it exists
  bool exists(const std::string& name) const;         // link exists (any depth, "/a/b")
  std::vector<std::string> children(const std::string& group) const;

  void write_attr(const std::string& object, const std::string& name, const std::string& value);
  void write_attr(const std::string& object, const std::string& name, double value);
  void write_attr(const std::string& object, const std::string& name, std::int64_t value);
  std::string read_attr_string(const std::string& object, const std::string& name) const;
  double read_attr_double(const std::string& object, const std::string& name) const;
  std::int64_t read_attr_int(const std::string& object, const std::string& name) const;
  bool has_attr(const std::string& object, const std::string& name) const;
  std::vector<std::string> attr_names(const std::string& object) const;

  void write(const std::string& dataset, const std::vector<double>& data, const std::vector<hsize_t>& dims, const std::string& unit = "");
  void write(const std::string& dataset, const std::vector<std::int64_t>& data, const std::vector<hsize_t>& dims, const std::string& unit = "");
  void write(const std::string& dataset, const std::vector<std::int32_t>& data, const std::vector<hsize_t>& dims, const std::string& unit = "");
  void write(const std::string& dataset, const std::vector<std::int8_t>& data, const std::vector<hsize_t>& dims, const std::string& unit = "");
  void write(const std::string& dataset, const std::vector<std::string>& data);
  void write_float(const std::string& dataset, const std::vector<float>& data, const std::vector<hsize_t>& dims);
  std::vector<double> read_double(const std::string& dataset, std::vector<hsize_t>* dims = nullptr) const;
  // Shape and element type of a dataset (throws InputError naming it if missing).
  struct DatasetInfo {
    H5T_class_t type_class = H5T_NO_CLASS;
    size_t element_bytes = 0;
    std::vector<hsize_t> dims;
  };
  DatasetInfo info(const std::string& dataset) const;
  std::vector<float> read_float(const std::string& dataset) const;
  // A one-dimensional dataset of variable-length strings (as write() makes them); at most 2^20 strings.
  std::vector<std::string> read_strings(const std::string& dataset) const;
  std::vector<std::int64_t> read_int64(const std::string& dataset, std::vector<hsize_t>* dims = nullptr) const;

 private:
  [[noreturn]] void fail(const std::string& object, const std::string& what) const;
  hid_t object(const std::string& name) const;  // opens a group or dataset; caller closes with H5Oclose
  void write_raw(const std::string& dataset, hid_t type, const void* data, const std::vector<hsize_t>& dims, const std::string& unit);
  std::string path_;
  Handle file_;
};

}  // namespace coinfer::h5
