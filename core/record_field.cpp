#include "core/record_field.hpp"
#include "core/enum_names.hpp"

namespace coinfer {

namespace {
constexpr auto kFieldKindNames = enum_names<FieldKind>({"int64", "int32", "status", "flag", "real", "time", "text", "json_object"});
static_assert(kFieldKindNames.names_each_of(FieldKind::int64, FieldKind::json_object));
}  // namespace

const char* field_kind_name(FieldKind k) { return kFieldKindNames.name(k); }

}  // namespace coinfer
