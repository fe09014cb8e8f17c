// A checked reader of the JSON files ncclwatch reads back (dumps, resolution notes): they are
// input, so every field is type-checked and range-checked, and the first bad one fails the
// whole document with one JsonFormatError whose message names it by its path
// ("field 'comms[3].records[0].seq' must be a non-negative integer"). The schema code
// (dump_json.cc, resolution.cc) says which fields exist and which are required; this file
// says how one field is read.
#ifndef NCCLWATCH_CORE_DUMP_CHECKED_JSON_H_
#define NCCLWATCH_CORE_DUMP_CHECKED_JSON_H_

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclwatch::dump {

class JsonFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The "schema" and "version" fields every ncclwatch file starts with: `schema` exactly, and a
// version in [1, max_version]. Returns the version. `what` names the document in messages
// ("dump", "resolution").
int CheckSchemaHeader(const nlohmann::json& doc, const char* schema, int max_version, const char* what);

// A JSON object together with where it is in the document, so every error names the field.
// It refers to its value and its parent, which must outlive it.
class CheckedJson {
 public:
  explicit CheckedJson(const nlohmann::json& value) : value_(value) {}
  CheckedJson(const nlohmann::json& value, const CheckedJson* parent, const char* key,
              std::optional<size_t> index = std::nullopt)
      : value_(value), parent_(parent), key_(key), index_(index) {}

  const nlohmann::json& value() const { return value_; }

  // "comms[3].records[0]"; "" for the document itself.
  std::string path() const;

  bool Has(const char* key) const { return value_.contains(key); }

  // The object at `key`, which must be present and an object.
  CheckedJson Child(const char* key) const;

  // Optional fields keep the default when absent; a present field of the wrong type fails.
  void Get(const char* key, std::string* out, bool required = false) const;
  void Get(const char* key, bool* out, bool required = false) const;
  void Get(const char* key, uint64_t* out, bool required = false) const;
  void Get(const char* key, int* out, bool required = false) const;  // within int32
  void Get(const char* key, std::vector<int>* out, bool required = false) const;
  void Get(const char* key, std::vector<std::string>* out, bool required = false) const;
  // An integer in [min, max] ("must be an integer in [1, 2147483647]").
  void GetInRange(const char* key, int64_t min, int64_t max, int* out, bool required = false) const;
  // "0x" and 1 to 16 hex digits (format::ParseHex); an empty string keeps the default unless required.
  void GetHex(const char* key, uint64_t* out, bool required = false) const;

  // The elements of array `key` (absent: none), each an object; they refer to this node.
  std::vector<CheckedJson> Elements(const char* key) const;

  // Throws JsonFormatError("field '<path>' <what>").
  [[noreturn]] static void Fail(const std::string& path, const std::string& what);

 private:
  // Names a field for error messages: `key` of `node`, or element `index` of that key. The
  // dotted path is built only when a message needs it: building it for every field read
  // (millions in a big dump) used to cost a string allocation each.
  struct FieldName {
    const CheckedJson* node;
    const char* key;
    std::optional<size_t> index;

    std::string str() const;
  };

  // The field at `key`, or nullptr when absent (and not required).
  const nlohmann::json* Find(const char* key, bool required) const;
  [[noreturn]] static void Fail(const FieldName& field, const std::string& what) { Fail(field.str(), what); }

  template <typename T>
  void GetArray(const char* key, std::vector<T>* out, bool required, const char* must_be) const;
  static void Convert(const nlohmann::json& v, const FieldName& field, std::string* out);
  static void Convert(const nlohmann::json& v, const FieldName& field, int* out);

  const nlohmann::json& value_;
  const CheckedJson* parent_ = nullptr;
  const char* key_ = nullptr;
  std::optional<size_t> index_;
};

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_CHECKED_JSON_H_
