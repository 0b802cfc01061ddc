#pragma once
// A record table (core/record_field.hpp) as one HDF5 dataset per field, GROUP/COLUMN, one row per
// record: results.h5's /requests, /devices, /servers, /events, /decisions and /bandwidth. Blocks
// (file I/O); throws InputError naming the file and dataset on a malformed file.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/input_error.hpp"
#include "core/record_field.hpp"
#include "io/h5_file.hpp"

namespace coinfer {

// One field's column over `rows` in its stored type, handed to `put(values)`: int64, int32, int8
// (status, flag), double (NaN where `present` says the row has none) or text.
template <class R, class Put>
void field_column(const RecordField<R>& fd, const std::vector<R>& rows, Put put) {
  const size_t n = rows.size();
  switch (fd.kind) {
    case FieldKind::int64: {
      std::vector<std::int64_t> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = fd.get_int(rows[i]);
      return put(v);
    }
    case FieldKind::int32: {
      std::vector<std::int32_t> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::int32_t>(fd.get_int(rows[i]));
      return put(v);
    }
    case FieldKind::status:
    case FieldKind::flag: {
      std::vector<std::int8_t> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::int8_t>(fd.get_int(rows[i]));
      return put(v);
    }
    case FieldKind::real:
    case FieldKind::time: {
      std::vector<double> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = !fd.present || fd.present(rows[i]) ? fd.get_real(rows[i]) : std::nan("");
      return put(v);
    }
    case FieldKind::text:
    case FieldKind::json_object: {
      std::vector<std::string> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = fd.get_text(rows[i]);
      return put(v);
    }
  }
}

// Writes every field stored in results.h5 (in table order); a field with `present` only where some
// row has it (the others NaN).
template <class R>
void write_columns(h5::File& f, const std::string& group, const std::vector<R>& rows, const std::vector<RecordField<R>>& fields) {
  const hsize_t n = rows.size();
  for (const RecordField<R>& fd : fields) {
    if (!fd.in_results_h5) continue;
    const std::string name = group + "/" + fd.dataset();
    bool any = !fd.present;
    for (hsize_t i = 0; i < n && !any; ++i) any = fd.present(rows[i]);
    if (!any) continue;
    field_column(fd, rows, [&](const auto& v) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::vector<std::string>>)
        f.write(name, v);
      else
        f.write(name, v, {n}, fd.unit);
    });
  }
}

// The same table written in parts: each call appends `rows` to every column (created on the first call,
// stored in chunks of `chunk_rows` rows: File::append). Every field stored in results.h5 is written
// whatever the rows hold (a table whose fields have `present` is written whole, by write_columns).
template <class R>
void append_columns(h5::File& f, const std::string& group, const std::vector<R>& rows, const std::vector<RecordField<R>>& fields,
                    hsize_t chunk_rows) {
  for (const RecordField<R>& fd : fields) {
    if (!fd.in_results_h5) continue;
    const std::string name = group + "/" + fd.dataset();
    field_column(fd, rows, [&](const auto& v) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::vector<std::string>>)
        f.append(name, v, chunk_rows);
      else
        f.append(name, v, chunk_rows, fd.unit);
    });
  }
}

// The rows back, as many as the table's first column holds; every column must have that length, a
// flag be 0 or 1 and an integer with a range lie in it (InputError naming the dataset and row). A
// column with `present` that is missing leaves its field as default-constructed. `file` names the
// file in errors.
template <class R>
std::vector<R> read_columns(const h5::Reader& f, const std::string& file, const std::string& group, const std::vector<RecordField<R>>& fields) {
  const RecordField<R>* first = nullptr;
  for (const RecordField<R>& fd : fields)
    if (fd.in_results_h5 && !fd.present) {
      first = &fd;
      break;
    }
  if (first == nullptr) return {};
  const std::string first_name = group + "/" + first->dataset();
  const size_t n = first->is_text()     ? f.read_strings(first_name).size()
                   : first->is_number() ? f.read_double(first_name).size()
                                        : f.read_int64(first_name).size();
  std::vector<R> out(n);
  for (const RecordField<R>& fd : fields) {
    if (!fd.in_results_h5) continue;
    const std::string name = group + "/" + fd.dataset();
    if (fd.present && !f.exists(name)) continue;
    auto same_length = [&](size_t got) {
      if (got != n) throw InputError(SourceLocation{file, 0, 0}, name, std::to_string(got) + " values for " + std::to_string(n) + " rows");
    };
    if (fd.is_text()) {
      std::vector<std::string> v = f.read_strings(name);
      same_length(v.size());
      for (size_t i = 0; i < n; ++i) fd.set_text(out[i], std::move(v[i]));
    } else if (fd.is_number()) {
      const std::vector<double> v = f.read_double(name);
      same_length(v.size());
      for (size_t i = 0; i < n; ++i) fd.set_real(out[i], v[i]);
    } else {
      const std::vector<std::int64_t> v = f.read_int64(name);
      same_length(v.size());
      // A flag is 0 or 1; an integer with a range (RecordField::accepts) lies in it.
      const std::int64_t lo = fd.kind == FieldKind::flag ? 0 : fd.lo, hi = fd.kind == FieldKind::flag ? 1 : fd.hi;
      for (size_t i = 0; i < n; ++i) {
        if (hi > lo && (v[i] < lo || v[i] > hi))
          throw InputError(
              SourceLocation{file, 0, 0}, name,
              "row " + std::to_string(i) + " holds " + std::to_string(v[i]) + ", outside " + std::to_string(lo) + " .. " + std::to_string(hi));
        fd.set_int(out[i], v[i]);
      }
    }
  }
  return out;
}

}  // namespace coinfer
