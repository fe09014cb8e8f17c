#include "core/dump/checked_json.h"

#include "core/format/hex.h"

namespace ncclwatch::dump {

using nlohmann::json;

int CheckSchemaHeader(const json& doc, const char* schema, int max_version, const char* what) {
  if (!doc.is_object()) throw JsonFormatError("foreign JSON: top level is not an object");
  auto name = doc.find("schema");
  if (name == doc.end() || !name->is_string()) {
    throw JsonFormatError(std::string("foreign JSON: no \"schema\" field (not an ncclwatch ") + what + ")");
  }
  if (*name != schema) {
    throw JsonFormatError("foreign JSON: schema is \"" + name->get<std::string>() + "\", expected \"" + schema + "\"");
  }
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer()) {
    throw JsonFormatError("field 'version' is missing or not an integer");
  }
  if (version->is_number_unsigned() ? version->get<uint64_t>() > static_cast<uint64_t>(max_version)
                                    : version->get<int64_t>() > max_version) {
    throw JsonFormatError(std::string(what) + " version " + version->dump() +
                          " is newer than this ncclwatch supports (" + std::to_string(max_version) +
                          "); upgrade ncclwatch");
  }
  const int64_t v = version->get<int64_t>();
  if (v < 1) throw JsonFormatError(std::string(what) + " version " + std::to_string(v) + " is invalid");
  return static_cast<int>(v);
}

std::string CheckedJson::FieldName::str() const {
  std::string base = node->path();
  std::string name = base.empty() ? key : base + "." + key;
  if (index) name += "[" + std::to_string(*index) + "]";
  return name;
}

std::string CheckedJson::path() const { return parent_ ? FieldName{parent_, key_, index_}.str() : std::string(); }

void CheckedJson::Fail(const std::string& path, const std::string& what) {
  throw JsonFormatError("field '" + path + "' " + what);
}

const json* CheckedJson::Find(const char* key, bool required) const {
  auto it = value_.find(key);
  if (it != value_.end()) return &*it;
  if (required) Fail(FieldName{this, key, {}}, "is missing");
  return nullptr;
}

CheckedJson CheckedJson::Child(const char* key) const {
  const json* v = Find(key, true);
  if (!v->is_object()) Fail(FieldName{this, key, {}}, "must be an object");
  return CheckedJson(*v, this, key);
}

void CheckedJson::Convert(const json& v, const FieldName& field, std::string* out) {
  if (!v.is_string()) Fail(field, "must be a string");
  *out = v.get_ref<const std::string&>();
}

void CheckedJson::Convert(const json& v, const FieldName& field, int* out) {
  if (!v.is_number_integer()) Fail(field, "must be an integer");
  const bool in_range = v.is_number_unsigned() ? v.get<uint64_t>() <= INT32_MAX
                                               : v.get<int64_t>() >= INT32_MIN && v.get<int64_t>() <= INT32_MAX;
  if (!in_range) Fail(field, "is out of range");
  *out = static_cast<int>(v.get<int64_t>());
}

void CheckedJson::Get(const char* key, std::string* out, bool required) const {
  if (const json* v = Find(key, required)) Convert(*v, FieldName{this, key, {}}, out);
}

void CheckedJson::Get(const char* key, bool* out, bool required) const {
  const json* v = Find(key, required);
  if (!v) return;
  if (!v->is_boolean()) Fail(FieldName{this, key, {}}, "must be true or false");
  *out = v->get<bool>();
}

void CheckedJson::Get(const char* key, uint64_t* out, bool required) const {
  const json* v = Find(key, required);
  if (!v) return;
  if (!v->is_number_unsigned()) Fail(FieldName{this, key, {}}, "must be a non-negative integer");
  *out = v->get<uint64_t>();
}

void CheckedJson::Get(const char* key, int* out, bool required) const {
  if (const json* v = Find(key, required)) Convert(*v, FieldName{this, key, {}}, out);
}

template <typename T>
void CheckedJson::GetArray(const char* key, std::vector<T>* out, bool required, const char* must_be) const {
  const json* v = Find(key, required);
  if (!v) return;
  if (!v->is_array()) Fail(FieldName{this, key, {}}, must_be);
  out->clear();
  out->reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) Convert((*v)[i], FieldName{this, key, i}, &out->emplace_back());
}

void CheckedJson::Get(const char* key, std::vector<int>* out, bool required) const {
  GetArray(key, out, required, "must be an array of integers");
}

void CheckedJson::Get(const char* key, std::vector<std::string>* out, bool required) const {
  GetArray(key, out, required, "must be an array of strings");
}

void CheckedJson::GetInRange(const char* key, int64_t min, int64_t max, int* out, bool required) const {
  const json* v = Find(key, required);
  if (!v) return;
  const bool in_range = v->is_number_integer() &&
                        !(v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(max)) &&
                        v->get<int64_t>() >= min && v->get<int64_t>() <= max;
  if (!in_range) {
    Fail(FieldName{this, key, {}}, "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  *out = static_cast<int>(v->get<int64_t>());
}

void CheckedJson::GetHex(const char* key, uint64_t* out, bool required) const {
  const json* v = Find(key, required);
  if (!v) return;
  if (!v->is_string()) Fail(FieldName{this, key, {}}, "must be a string");
  const std::string& text = v->get_ref<const std::string&>();
  if (text.empty() && !required) return;
  auto parsed = format::ParseHex(text);
  if (!parsed) Fail(FieldName{this, key, {}}, "must be a hex string like \"0x1f\"");
  *out = *parsed;
}

std::vector<CheckedJson> CheckedJson::Elements(const char* key) const {
  std::vector<CheckedJson> out;
  const json* v = Find(key, false);
  if (!v) return out;
  if (!v->is_array()) Fail(FieldName{this, key, {}}, "must be an array");
  out.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    const json& element = (*v)[i];
    if (!element.is_object()) Fail(FieldName{this, key, i}, "must be an object");
    out.emplace_back(element, this, key, i);
  }
  return out;
}

}  // namespace ncclwatch::dump
