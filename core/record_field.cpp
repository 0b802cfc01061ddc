#include "core/record_field.hpp"

namespace coinfer {

const char* field_kind_name(FieldKind k) {
  switch (k) {
    case FieldKind::int64:
      return "int64";
    case FieldKind::int32:
      return "int32";
    case FieldKind::status:
      return "status";
    case FieldKind::flag:
      return "flag";
    case FieldKind::real:
      return "real";
    case FieldKind::time:
      return "time";
    case FieldKind::text:
      return "text";
    case FieldKind::json_object:
      return "json_object";
  }
  return "?";
}

}  // namespace coinfer
