#pragma once
// An HDF5 file's content as the h5::Reader contract (io/h5_file.hpp) hands it to a reader, held in
// memory: the fuzz target h5_tree drives read_lut_tables, read_predictor_samples_from and
// read_request_records_from with it, so that what our readers do with anything libhdf5 could hand back
// (shapes, types, values, names, attributes) is searched at memory speed. The file-level fuzz targets
// (lut_file, predictor_samples) feed corrupt files to libhdf5 itself, a forked child per input.
//
// It follows io/h5_file.cpp's File: the same InputErrors for a missing object, attribute or dataset,
// an attribute or dataset of another class, text that is not one-dimensional;
// numbers convert between integer and floating point as HDF5 converts them (to an integer: rounded
// toward zero and clipped to the type's range; NaN, which HDF5 leaves to the C conversion, as 0).
// Datasets have 0 to 4 dimensions. One difference: a dataset of more than 2^20 elements is refused
// ("too large"), where File reads up to 2^28 numbers and 2^24 strings (the tree repeats its given
// values to fill a shape, so a few bytes could otherwise ask for gigabytes on every input).
//
// The byte form (decode; encode writes a real file in it, for the seeds): records, until the bytes end
// (a record cut short is dropped):
//   op u8, by op % 3:
//     0 attribute:  object str, name str, class u8 (% 3: 0 text str, 1 integer i64, 2 real f64)
//     1 dataset:    path str, class u8 (% 3 as above), rank u8 (% 5), rank x dim u32, count u32, then
//                   count values of the class (text: str); the shape's elements repeat them (none: 0 / "")
//     2 group:      path str
//   str: length u16 (little-endian), then the bytes; numbers little-endian.
// A path is absolute ("/a/b"); its parents are made groups as needed; a record whose path is taken, or
// whose parent is a dataset, is dropped.
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "io/h5_file.hpp"

namespace coinfer::fuzz {

class H5Tree final : public h5::Reader {
 public:
  static constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 20;

  struct Attr {
    H5T_class_t cls = H5T_STRING;
    std::string text;
    std::int64_t integer = 0;
    double real = 0;
  };
  struct Object {
    bool group = true;
    std::map<std::string, Attr> attrs;
    H5T_class_t cls = H5T_FLOAT;  // a dataset's class and shape
    std::vector<hsize_t> dims;
    std::uint64_t elements = 1;  // the shape's product (kMaxElements + 1: beyond)
    std::vector<std::string> texts;
    std::vector<std::int64_t> integers;
    std::vector<double> reals;
  };

  explicit H5Tree(std::string path) : path_(std::move(path)) { objects_["/"] = Object{}; }

  static H5Tree decode(const std::string& path, const std::uint8_t* data, std::size_t size) {
    H5Tree t(path);
    Bytes in{data, size};
    while (in.left() > 0) {
      const std::uint8_t op = in.u8();
      if (op % 3 == 0) {
        std::string obj, name;
        Attr a;
        if (!in.str(obj) || !in.str(name) || in.left() < 1) break;
        if (!read_scalar(in, in.u8(), a)) break;
        auto it = t.objects_.find(obj);
        if (it != t.objects_.end()) it->second.attrs.emplace(name, a);
      } else if (op % 3 == 1) {
        std::string path_of;
        Object o;
        o.group = false;
        if (!in.str(path_of) || in.left() < 2) break;
        const int cls = in.u8() % 3, rank = in.u8() % 5;
        o.cls = cls == 0 ? H5T_STRING : cls == 1 ? H5T_INTEGER : H5T_FLOAT;
        if (in.left() < 4u * rank + 4) break;
        for (int k = 0; k < rank; ++k) o.dims.push_back(in.u32());
        for (hsize_t d : o.dims) o.elements = d == 0 ? 0 : std::min<std::uint64_t>(o.elements * d, kMaxElements + 1);
        const std::uint32_t count = in.u32();
        bool whole = true;
        for (std::uint32_t i = 0; i < count && whole; ++i) {
          if (o.cls == H5T_STRING) {
            std::string s;
            whole = in.str(s);
            o.texts.push_back(std::move(s));
          } else if (in.left() < 8) {
            whole = false;
          } else if (o.cls == H5T_INTEGER) {
            o.integers.push_back(static_cast<std::int64_t>(in.u64()));
          } else {
            const std::uint64_t bits = in.u64();
            double x;
            std::memcpy(&x, &bits, sizeof x);
            o.reals.push_back(x);
          }
        }
        if (!whole) break;
        t.add(path_of, std::move(o));
      } else {
        std::string path_of;
        if (!in.str(path_of)) break;
        t.add(path_of, Object{});
      }
    }
    return t;
  }

  // A real file in the byte form (its groups, datasets and attributes; datasets of text, integers or
  // floating point; a dataset whose values are all the same is written with one value).
  static std::string encode(const h5::File& f) {
    std::string out;
    encode_object(f, "/", out);
    return out;
  }

  const std::string& path() const override { return path_; }
  bool exists(const std::string& name) const override { return name != "/" && objects_.count(name) > 0; }
  std::vector<std::string> children(const std::string& group) const override {
    auto it = objects_.find(group);
    if (it == objects_.end() || !it->second.group) fail(group, "missing group");
    std::vector<std::string> out;
    const std::string prefix = group == "/" ? "/" : group + "/";
    for (auto c = objects_.lower_bound(prefix); c != objects_.end() && c->first.compare(0, prefix.size(), prefix) == 0; ++c)
      if (c->first.size() > prefix.size() && c->first.find('/', prefix.size()) == std::string::npos) out.push_back(c->first.substr(prefix.size()));
    return out;
  }
  std::string read_attr_string(const std::string& obj, const std::string& name) const override {
    const Attr& a = attr(obj, name);
    if (a.cls != H5T_STRING) fail(obj + "@" + name, "attribute is not text");
    return a.text;
  }
  double read_attr_double(const std::string& obj, const std::string& name) const override {
    const Attr& a = attr(obj, name);
    if (a.cls == H5T_STRING) fail(obj + "@" + name, "attribute is not a number");
    return a.cls == H5T_INTEGER ? static_cast<double>(a.integer) : a.real;
  }
  std::int64_t read_attr_int(const std::string& obj, const std::string& name) const override {
    const Attr& a = attr(obj, name);
    if (a.cls == H5T_STRING) fail(obj + "@" + name, "attribute is not an integer");
    return a.cls == H5T_INTEGER ? a.integer : to_int64(a.real);
  }
  bool has_attr(const std::string& obj, const std::string& name) const override {
    auto it = objects_.find(obj);
    return it != objects_.end() && it->second.attrs.count(name) > 0;
  }
  std::vector<std::string> attr_names(const std::string& obj) const override {
    std::vector<std::string> out;
    for (const auto& [n, a] : object(obj).attrs) out.push_back(n);
    return out;
  }
  std::vector<double> read_double(const std::string& ds, std::vector<hsize_t>* dims = nullptr) const override {
    const Object& o = numeric(ds);
    std::vector<double> out(o.elements);
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = o.cls == H5T_INTEGER ? (o.integers.empty() ? 0.0 : static_cast<double>(o.integers[i % o.integers.size()]))
                                    : (o.reals.empty() ? 0.0 : o.reals[i % o.reals.size()]);
    if (dims) *dims = o.dims;
    return out;
  }
  std::vector<std::int64_t> read_int64(const std::string& ds, std::vector<hsize_t>* dims = nullptr) const override {
    const Object& o = numeric(ds);
    std::vector<std::int64_t> out(o.elements);
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = o.cls == H5T_INTEGER ? (o.integers.empty() ? 0 : o.integers[i % o.integers.size()])
                                    : (o.reals.empty() ? 0 : to_int64(o.reals[i % o.reals.size()]));
    if (dims) *dims = o.dims;
    return out;
  }
  std::vector<float> read_float(const std::string& ds) const override {
    const std::vector<double> d = read_double(ds);
    return std::vector<float>(d.begin(), d.end());
  }
  std::vector<std::string> read_strings(const std::string& ds) const override {
    const Object& o = dataset(ds, "cannot open dataset");
    if (o.cls != H5T_STRING) fail(ds, "dataset is not variable-length text");
    if (o.dims.size() != 1) fail(ds, "must be one-dimensional");
    if (o.elements > kMaxElements) fail(ds, "more than 2^20 strings in the fuzzer's tree");
    std::vector<std::string> out(o.elements);
    for (std::size_t i = 0; i < out.size() && !o.texts.empty(); ++i) out[i] = o.texts[i % o.texts.size()];
    return out;
  }
  DatasetInfo info(const std::string& ds) const override {
    const Object& o = dataset(ds, "not a dataset");
    return DatasetInfo{o.cls, o.cls == H5T_STRING ? sizeof(char*) : 8, o.dims};
  }

 private:
  struct Bytes {
    const std::uint8_t* p;
    std::size_t n;
    std::size_t left() const { return n; }
    std::uint8_t u8() { return n ? (--n, *p++) : 0; }
    std::uint64_t le(int bytes) {
      std::uint64_t v = 0;
      for (int i = 0; i < bytes; ++i) v |= std::uint64_t{u8()} << (8 * i);
      return v;
    }
    std::uint32_t u32() { return static_cast<std::uint32_t>(le(4)); }
    std::uint64_t u64() { return le(8); }
    bool str(std::string& s) {
      if (n < 2) return false;
      const std::size_t len = static_cast<std::size_t>(le(2));
      if (n < len) return false;
      s.assign(reinterpret_cast<const char*>(p), len);
      p += len;
      n -= len;
      return true;
    }
  };

  static bool read_scalar(Bytes& in, std::uint8_t cls, Attr& a) {
    if (cls % 3 == 0) {
      a.cls = H5T_STRING;
      return in.str(a.text);
    }
    if (in.left() < 8) return false;
    const std::uint64_t bits = in.u64();
    if (cls % 3 == 1) {
      a.cls = H5T_INTEGER;
      a.integer = static_cast<std::int64_t>(bits);
    } else {
      a.cls = H5T_FLOAT;
      std::memcpy(&a.real, &bits, sizeof a.real);
    }
    return true;
  }

  static std::int64_t to_int64(double x) {
    if (std::isnan(x)) return 0;
    if (x >= 9.2233720368547758e18) return std::numeric_limits<std::int64_t>::max();
    if (x <= -9.2233720368547758e18) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(x);
  }

  void add(const std::string& path, Object o) {
    if (path.size() < 2 || path[0] != '/' || path.back() == '/' || objects_.count(path)) return;
    // Parents: groups, made as needed; none may be a dataset.
    for (std::size_t s = path.find('/', 1); s != std::string::npos; s = path.find('/', s + 1)) {
      const std::string parent = path.substr(0, s);
      auto it = objects_.find(parent);
      if (it != objects_.end() && !it->second.group) return;
    }
    for (std::size_t s = path.find('/', 1); s != std::string::npos; s = path.find('/', s + 1)) objects_.emplace(path.substr(0, s), Object{});
    objects_.emplace(path, std::move(o));
  }

  [[noreturn]] void fail(const std::string& object, const std::string& what) const { throw InputError(SourceLocation{path_, 0, 0}, object, what); }
  const Object& object(const std::string& name) const {
    auto it = objects_.find(name);
    if (it == objects_.end()) fail(name, "missing object");
    return it->second;
  }
  const Attr& attr(const std::string& obj, const std::string& name) const {
    const Object& o = object(obj);
    auto it = o.attrs.find(name);
    if (it == o.attrs.end()) fail(obj + "@" + name, "missing attribute");
    return it->second;
  }
  const Object& dataset(const std::string& ds, const char* not_one) const {
    auto it = objects_.find(ds);
    if (it == objects_.end() || ds == "/") fail(ds, "missing dataset");
    if (it->second.group) fail(ds, not_one);
    return it->second;
  }
  const Object& numeric(const std::string& ds) const {
    const Object& o = dataset(ds, "cannot open dataset");
    if (o.cls != H5T_FLOAT && o.cls != H5T_INTEGER) fail(ds, "dataset is not numeric");
    if (o.elements > kMaxElements) fail(ds, "dataset is too large to read (more than 2^20 elements in the fuzzer's tree)");
    return o;
  }

  static void put_le(std::string& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  static void put_str(std::string& out, const std::string& s) {
    const std::size_t len = std::min<std::size_t>(s.size(), 65535);
    put_le(out, len, 2);
    out.append(s, 0, len);
  }
  static void put_real(std::string& out, double x) {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    put_le(out, bits, 8);
  }
  static void encode_object(const h5::File& f, const std::string& name, std::string& out) {
    bool is_group = true;
    h5::Reader::DatasetInfo i;
    if (name != "/") {
      try {
        i = f.info(name);
        is_group = false;
      } catch (const InputError&) {
      }
    }
    if (name != "/") {
      if (is_group) {
        out.push_back(2);
        put_str(out, name);
      } else {
        const int cls = i.type_class == H5T_STRING ? 0 : i.type_class == H5T_INTEGER ? 1 : 2;
        out.push_back(1);
        put_str(out, name);
        out.push_back(static_cast<char>(cls));
        out.push_back(static_cast<char>(i.dims.size()));
        for (hsize_t d : i.dims) put_le(out, d, 4);
        if (cls == 0) {
          const auto v = f.read_strings(name);
          const bool same = !v.empty() && std::all_of(v.begin(), v.end(), [&](const std::string& s) { return s == v[0]; });
          put_le(out, same ? 1 : v.size(), 4);
          for (std::size_t k = 0; k < (same ? 1 : v.size()); ++k) put_str(out, v[k]);
        } else if (cls == 1) {
          const auto v = f.read_int64(name);
          const bool same = !v.empty() && std::all_of(v.begin(), v.end(), [&](std::int64_t x) { return x == v[0]; });
          put_le(out, same ? 1 : v.size(), 4);
          for (std::size_t k = 0; k < (same ? 1 : v.size()); ++k) put_le(out, static_cast<std::uint64_t>(v[k]), 8);
        } else {
          const auto v = f.read_double(name);
          auto eq = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
          const bool same = !v.empty() && std::all_of(v.begin(), v.end(), [&](double x) { return eq(x, v[0]); });
          put_le(out, same ? 1 : v.size(), 4);
          for (std::size_t k = 0; k < (same ? 1 : v.size()); ++k) put_real(out, v[k]);
        }
      }
    }
    for (const std::string& a : f.attr_names(name)) {
      out.push_back(0);
      put_str(out, name);
      put_str(out, a);
      const H5T_class_t c = f.attr_class(name, a);
      if (c == H5T_STRING) {
        out.push_back(0);
        put_str(out, f.read_attr_string(name, a));
      } else if (c == H5T_INTEGER) {
        out.push_back(1);
        put_le(out, static_cast<std::uint64_t>(f.read_attr_int(name, a)), 8);
      } else {
        out.push_back(2);
        put_real(out, f.read_attr_double(name, a));
      }
    }
    if (is_group)
      for (const std::string& c : f.children(name)) encode_object(f, name == "/" ? "/" + c : name + "/" + c, out);
  }

  std::string path_;
  std::map<std::string, Object> objects_;
};

}  // namespace coinfer::fuzz
