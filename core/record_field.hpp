#pragma once
// One field of a record type as a column. A record type declares its fields once,
// as a table of RecordField<R> (core/request_record.cpp, core/run_record_fields.cpp); results.h5's writer
// and reader (io/record_columns.hpp), the JSON-lines formats (io/record_json.hpp: the real runtime's
// records journal, decisions.jsonl) and `coinfer schema` (the Python loader's check) all walk the
// table, so a new field is one row there plus its member.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace coinfer {

// How a field is stored.
//   int64, int32: integers (results.h5 int64/int32; JSON numbers, read back within [lo, hi])
//   status:       a request's status (results.h5 int8 codes; JSON "ok" / "failed" / "dropped")
//   real:         a number (JSON: 0 when absent)
//   time:         seconds, NaN when it did not happen (JSON null)
//   text:         a string
//   flag:         true / false (results.h5 int8 1 / 0; JSON true / false)
//   json_object:  a string holding a JSON object's text, "" for none (JSON: the object itself, the
//                 key left out when ""; never in results.h5)
enum class FieldKind { int64, int32, status, flag, real, time, text, json_object };
const char* field_kind_name(FieldKind k);  // "int64", ..., "json_object" (coinfer schema)

template <class R>
struct RecordField {
  const char* name = "";  // the JSON key, and the results.h5 dataset GROUP/NAME unless `column` is set
  FieldKind kind = FieldKind::real;
  const char* unit = "";         // results.h5's unit attribute ("" none)
  const char* column = nullptr;  // the results.h5 dataset where it differs from `name` (schema 1's "t")
  bool in_results_h5 = true;     // false: JSON only (a decision's wall_s and detail)
  bool in_json = true;           // false: results.h5 only
  // Integers: the JSON reader's range, the value when absent, and whether the key must be there.
  std::int64_t lo = 0, hi = 0, fallback = 0;
  bool required = false;
  // Set for a column that only some records have (a device's radio states): written only where one
  // record has it, NaN for the others.
  std::function<bool(const R&)> present;
  std::function<std::int64_t(const R&)> get_int;  // int64, int32, status (its code), flag (1 / 0)
  std::function<void(R&, std::int64_t)> set_int;
  std::function<double(const R&)> get_real;  // real, time
  std::function<void(R&, double)> set_real;
  std::function<const std::string&(const R&)> get_text;  // text, json_object
  std::function<void(R&, std::string)> set_text;

  const char* dataset() const { return column != nullptr ? column : name; }
  bool is_integer() const { return kind == FieldKind::int64 || kind == FieldKind::int32 || kind == FieldKind::status || kind == FieldKind::flag; }
  bool is_number() const { return kind == FieldKind::real || kind == FieldKind::time; }
  bool is_text() const { return kind == FieldKind::text || kind == FieldKind::json_object; }

  // Builder steps, for tables that read as one line per field.
  RecordField accepts(std::int64_t lo_, std::int64_t hi_, std::int64_t fallback_, bool required_) const {
    RecordField f = *this;
    f.lo = lo_, f.hi = hi_, f.fallback = fallback_, f.required = required_;
    return f;
  }
  RecordField required_key() const {  // JSON readers refuse a record without it
    RecordField f = *this;
    f.required = true;
    return f;
  }
  RecordField stored_as(const char* column_) const {
    RecordField f = *this;
    f.column = column_;
    return f;
  }
  RecordField json_only() const {
    RecordField f = *this;
    f.in_results_h5 = false;
    return f;
  }
  RecordField results_h5_only() const {
    RecordField f = *this;
    f.in_json = false;
    return f;
  }
  RecordField only_where(std::function<bool(const R&)> p) const {
    RecordField f = *this;
    f.present = std::move(p);
    return f;
  }
};

// A field from a member: an integer (int64 / int32 kinds; a bool member as a flag), a number (real / time) or a string
// (text / json_object).
template <class R, class T>
RecordField<R> integer_field(const char* name, FieldKind kind, const char* unit, T R::*member) {
  RecordField<R> f;
  f.name = name, f.kind = kind, f.unit = unit;
  f.get_int = [member](const R& r) { return static_cast<std::int64_t>(r.*member); };
  f.set_int = [member](R& r, std::int64_t v) { r.*member = static_cast<T>(v); };
  return f;
}
template <class R>
RecordField<R> number_field(const char* name, FieldKind kind, const char* unit, double R::*member) {
  RecordField<R> f;
  f.name = name, f.kind = kind, f.unit = unit;
  f.get_real = [member](const R& r) { return r.*member; };
  f.set_real = [member](R& r, double v) { r.*member = v; };
  return f;
}
template <class R>
RecordField<R> number_field(const char* name, FieldKind kind, const char* unit, std::function<double(const R&)> get,
                            std::function<void(R&, double)> set) {
  RecordField<R> f;
  f.name = name, f.kind = kind, f.unit = unit;
  f.get_real = std::move(get);
  f.set_real = std::move(set);
  return f;
}
template <class R>
RecordField<R> text_field(const char* name, std::string R::*member, FieldKind kind = FieldKind::text) {
  RecordField<R> f;
  f.name = name, f.kind = kind;
  f.get_text = [member](const R& r) -> const std::string& { return r.*member; };
  f.set_text = [member](R& r, std::string v) { r.*member = std::move(v); };
  return f;
}

}  // namespace coinfer
