#include "core/proto_json.h"

#include <string>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"

namespace taso {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

bool Is64Bit(const FieldDescriptor& field) {
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT64:
      return true;
    default:
      return false;
  }
}

Json Number(const FieldDescriptor& field, const Json& value) {
  if (!value.is_string()) return value;
  const std::string& text = value.get_ref<const std::string&>();
  try {
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_UINT64) return Json(std::stoull(text));
    return Json(std::stoll(text));
  } catch (const std::exception&) {
    return value;  // not a number after all: leave what the printer wrote
  }
}

// Rewrites, in place, the 64-bit fields of `json`, which printed a `type`.
void Numbers(const Descriptor& type, Json& json) {
  if (!json.is_object()) return;
  for (int i = 0; i < type.field_count(); ++i) {
    const FieldDescriptor& field = *type.field(i);
    auto it = json.find(field.name());
    if (it == json.end()) continue;
    Json& value = *it;
    if (field.is_map()) {
      const FieldDescriptor& mapped = *field.message_type()->map_value();
      for (auto& [key, element] : value.items()) {
        if (Is64Bit(mapped)) element = Number(mapped, element);
        if (mapped.message_type() != nullptr) Numbers(*mapped.message_type(), element);
      }
    } else if (field.is_repeated() && value.is_array()) {
      for (Json& element : value) {
        if (Is64Bit(field)) element = Number(field, element);
        if (field.message_type() != nullptr) Numbers(*field.message_type(), element);
      }
    } else if (Is64Bit(field)) {
      value = Number(field, value);
    } else if (field.message_type() != nullptr) {
      Numbers(*field.message_type(), value);
    }
  }
}

}  // namespace

Json ProtoToJson(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Json::object();
  Numbers(*message.GetDescriptor(), json);
  return json;
}

}  // namespace taso
