#pragma once
// A record (core/record_field.hpp) as one JSON object, one key per field stored in JSON: the real
// runtime's records journal (hw/record_journal.cpp) and decisions.jsonl (io/decisions_jsonl.hpp).
// Reading checks what it reads (a journal is input): integers within their field's range, keys the
// table requires, a detail that is an object; std::invalid_argument names the key.
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/record_field.hpp"
#include "core/request_record.hpp"

namespace coinfer {

template <class R>
nlohmann::json record_to_json(const R& r, const std::vector<RecordField<R>>& fields) {
  using nlohmann::json;
  json j = json::object();
  for (const RecordField<R>& fd : fields) {
    if (!fd.in_json) continue;
    switch (fd.kind) {
      case FieldKind::int64:
      case FieldKind::int32:
        j[fd.name] = fd.get_int(r);
        break;
      case FieldKind::status:
        j[fd.name] = status_text(static_cast<RequestRecord::Status>(fd.get_int(r)));
        break;
      case FieldKind::flag:
        j[fd.name] = fd.get_int(r) != 0;
        break;
      case FieldKind::real:
        j[fd.name] = fd.get_real(r);
        break;
      case FieldKind::time: {
        const double v = fd.get_real(r);
        j[fd.name] = std::isnan(v) ? json(nullptr) : json(v);
        break;
      }
      case FieldKind::text:
        j[fd.name] = fd.get_text(r);
        break;
      case FieldKind::json_object:
        if (!fd.get_text(r).empty()) j[fd.name] = json::parse(fd.get_text(r));
        break;
    }
  }
  return j;
}

// An integer within [lo, hi]. nlohmann's get<int> would cast any number, 1e300 included (undefined
// behaviour): checked here.
inline std::int64_t json_integer_in(const nlohmann::json& v, const char* key, std::int64_t lo, std::int64_t hi) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi) : (v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi))
      throw std::invalid_argument(std::string("'") + key + "' out of range");
    return v.get<std::int64_t>();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || d != std::floor(d))
      throw std::invalid_argument(std::string("'") + key + "' is not an integer in range");
    return static_cast<std::int64_t>(d);
  }
  throw std::invalid_argument(std::string("'") + key + "' is not a number");
}

// The record from `j`. Absent keys: refused where the field is required, else the field's fallback
// (integers, flags), "ok" (status), 0 (real), NaN (time, also for null), "" (text, json_object).
template <class R>
R record_from_json(const nlohmann::json& j, const std::vector<RecordField<R>>& fields) {
  R r;
  for (const RecordField<R>& fd : fields) {
    if (!fd.in_json) continue;
    auto it = j.find(fd.name);
    if (it == j.end()) {
      if (fd.required) throw std::invalid_argument(std::string("no '") + fd.name + "'");
      if (fd.is_integer() && fd.kind != FieldKind::status) fd.set_int(r, fd.fallback);  // a flag: 0 unless stated
      if (fd.kind == FieldKind::real) fd.set_real(r, 0);
      if (fd.kind == FieldKind::time) fd.set_real(r, NAN);
      continue;
    }
    const nlohmann::json& v = *it;
    switch (fd.kind) {
      case FieldKind::int64:
      case FieldKind::int32:
        fd.set_int(r, json_integer_in(v, fd.name, fd.lo, fd.hi));
        break;
      case FieldKind::status:
        fd.set_int(r, static_cast<std::int64_t>(status_from_text(v.get<std::string>())));
        break;
      case FieldKind::flag:
        fd.set_int(r, v.get<bool>() ? 1 : 0);
        break;
      case FieldKind::real:
        fd.set_real(r, v.get<double>());
        break;
      case FieldKind::time:
        fd.set_real(r, v.is_null() ? NAN : v.get<double>());
        break;
      case FieldKind::text:
        fd.set_text(r, v.get<std::string>());
        break;
      case FieldKind::json_object:
        if (!v.is_object()) throw std::invalid_argument(std::string("'") + fd.name + "' is not an object");
        fd.set_text(r, v.dump());
        break;
    }
  }
  return r;
}

}  // namespace coinfer
