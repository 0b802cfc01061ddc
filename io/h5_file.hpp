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

// What the readers need of an HDF5 file, read-only: File below reads it through libhdf5;
// tests/fuzz/h5_tree.hpp holds an in-memory tree with the same contract, so that a fuzzer can hand a
// reader (read_lut_tables, read_predictor_samples_from, read_request_records_from) anything libhdf5
// could hand back, at memory speed. Every failure is an InputError naming the file and the object.
// Group and attribute names come back sorted by name.
class Reader {
 public:
  // Shape and element type of a dataset.
  struct DatasetInfo {
    H5T_class_t type_class = H5T_NO_CLASS;
    size_t element_bytes = 0;
    std::vector<hsize_t> dims;
  };
  virtual ~Reader() = default;
  virtual const std::string& path() const = 0;
  virtual bool exists(const std::string& name) const = 0;  // link exists (any depth, "/a/b")
  virtual std::vector<std::string> children(const std::string& group) const = 0;
  virtual std::string read_attr_string(const std::string& object, const std::string& name) const = 0;
  virtual double read_attr_double(const std::string& object, const std::string& name) const = 0;
  virtual std::int64_t read_attr_int(const std::string& object, const std::string& name) const = 0;
  virtual bool has_attr(const std::string& object, const std::string& name) const = 0;
  virtual std::vector<std::string> attr_names(const std::string& object) const = 0;
  // A numeric dataset's values in row-major order, converted; its shape into *dims where given.
  // At most 2^28 elements.
  virtual std::vector<double> read_double(const std::string& dataset, std::vector<hsize_t>* dims = nullptr) const = 0;
  virtual std::vector<std::int64_t> read_int64(const std::string& dataset, std::vector<hsize_t>* dims = nullptr) const = 0;
  virtual std::vector<float> read_float(const std::string& dataset) const = 0;
  // A one-dimensional dataset of variable-length strings (as File::write() makes them); at most 2^24
  // strings (a run's limits::kMaxRequests failure texts fit).
  virtual std::vector<std::string> read_strings(const std::string& dataset) const = 0;
  virtual DatasetInfo info(const std::string& dataset) const = 0;  // throws naming it if missing
};

class File final : public Reader {
 public:
  static File create(const std::string& path);     // truncates
  static File open_read(const std::string& path);  // InputError if missing or not HDF5
  const std::string& path() const override { return path_; }
  hid_t root() const { return file_.get(); }

  void make_group(const std::string& name);  // "/a/b", parents created as needed; no-op if it exists
  bool exists(const std::string& name) const override;
  std::vector<std::string> children(const std::string& group) const override;

  void write_attr(const std::string& object, const std::string& name, const std::string& value);
  void write_attr(const std::string& object, const std::string& name, double value);
  void write_attr(const std::string& object, const std::string& name, std::int64_t value);
  std::string read_attr_string(const std::string& object, const std::string& name) const override;
  double read_attr_double(const std::string& object, const std::string& name) const override;
  std::int64_t read_attr_int(const std::string& object, const std::string& name) const override;
  bool has_attr(const std::string& object, const std::string& name) const override;
  std::vector<std::string> attr_names(const std::string& object) const override;
  H5T_class_t attr_class(const std::string& object, const std::string& name) const;  // H5T_STRING, H5T_INTEGER, H5T_FLOAT, ...

  void write(const std::string& dataset, const std::vector<double>& data, const std::vector<hsize_t>& dims, const std::string& unit = "");
  void write(const std::string& dataset, const std::vector<std::int64_t>& data, const std::vector<hsize_t>& dims, const std::string& unit = "");
  void write(const std::string& dataset, const std::vector<std::int32_t>& data, const std::vector<hsize_t>& dims, const std::string& unit = "");
  void write(const std::string& dataset, const std::vector<std::int8_t>& data, const std::vector<hsize_t>& dims, const std::string& unit = "");
  void write(const std::string& dataset, const std::vector<std::string>& data);
  void write_float(const std::string& dataset, const std::vector<float>& data, const std::vector<hsize_t>& dims);
  // A one-dimensional dataset that grows: the first call creates it (stored in chunks of `chunk_rows`
  // rows, `unit` as write() gives it), each call adds `data` at its end. Readers see the same values as
  // a dataset write() made whole.
  void append(const std::string& dataset, const std::vector<double>& data, hsize_t chunk_rows, const std::string& unit = "");
  void append(const std::string& dataset, const std::vector<std::int64_t>& data, hsize_t chunk_rows, const std::string& unit = "");
  void append(const std::string& dataset, const std::vector<std::int32_t>& data, hsize_t chunk_rows, const std::string& unit = "");
  void append(const std::string& dataset, const std::vector<std::int8_t>& data, hsize_t chunk_rows, const std::string& unit = "");
  void append(const std::string& dataset, const std::vector<std::string>& data, hsize_t chunk_rows);
  std::vector<double> read_double(const std::string& dataset, std::vector<hsize_t>* dims = nullptr) const override;
  DatasetInfo info(const std::string& dataset) const override;
  std::vector<float> read_float(const std::string& dataset) const override;
  std::vector<std::string> read_strings(const std::string& dataset) const override;
  std::vector<std::int64_t> read_int64(const std::string& dataset, std::vector<hsize_t>* dims = nullptr) const override;

 private:
  [[noreturn]] void fail(const std::string& object, const std::string& what) const;
  hid_t object(const std::string& name) const;  // opens a group or dataset; caller closes with H5Oclose
  void write_raw(const std::string& dataset, hid_t type, const void* data, const std::vector<hsize_t>& dims, const std::string& unit);
  void append_raw(const std::string& dataset, hid_t mem_type, hid_t file_type, const void* data, hsize_t n, hsize_t chunk_rows,
                  const std::string& unit);
  std::string path_;
  Handle file_;
};

}  // namespace coinfer::h5
