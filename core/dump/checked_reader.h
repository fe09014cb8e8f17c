// The checked reader of the JSON files ncclwatch reads back (dumps, resolution notes): it
// builds their structs straight from the text's events (json_stream.h), with no document in
// memory, and checks every field on the way: its type, its range, and that required ones are
// there. They are input, so the first bad field rejects the whole document with one line
// naming it by its path ("field 'comms[3].records[0].seq' must be a non-negative integer").
//
// "First" is the order of the schema, not of the text: a document with several problems is
// rejected for the one a reader that checks field after field, in the order the schema lists
// them, meets first (which is what the DOM reader before this one did, and its messages are
// the schema's: README.md). Each object keeps the first problem of each of its fields until
// it ends; a key given twice counts once, with its last value (as nlohmann::json reads it).
// An array of objects reports an element that is not an object before any problem inside
// one. The text is JSON first: a syntax error anywhere wins over every field's problem.
//
// The schema code (dump_json.cc, resolution.cc) says which fields exist, in which order,
// which are required and where each goes: an ObjectSpec per kind of object, made of the
// field makers below.
#ifndef NCCLWATCH_CORE_DUMP_CHECKED_READER_H_
#define NCCLWATCH_CORE_DUMP_CHECKED_READER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/format/hex.h"
#include "core/status/status.h"

namespace ncclwatch::dump {

struct ObjectSpec;

enum class FieldKind : uint8_t {
  kString,         // "must be a string"
  kLenientString,  // taken when it is a string, ignored otherwise (shown only, never fatal)
  kBool,           // "must be true or false"
  kU64,            // "must be a non-negative integer"
  kInt,            // int32: "must be an integer", "is out of range"
  kIntInRange,     // "must be an integer in [min, max]"
  kHex,            // "0x" and 1 to 16 hex digits; "" keeps the default unless required
  kIntArray,       // "must be an array of integers", then each element as kInt
  kStringArray,    // "must be an array of strings", then each element as kString
  kStringMap,      // an object of strings ("field 'a.b.KEY' must be a string", keys in byte order)
  kObject,         // "must be an object", then its own fields
  kObjectArray,    // "must be an array", "field 'x[i]' must be an object", then each element's fields
  kCheck,          // no key: a check of the object's values once it ends (CheckFn)
};

// The values of an object's fields made with `keep` (KeptStringField, KeptBoolField): read
// and type-checked like the others, then left to the object's checks to store (several fields
// make one value, or a value is checked further).
class KeptValues {
 public:
  const std::string* Text(std::string_view key) const;
  std::optional<bool> Flag(std::string_view key) const;

  // The reader's side.
  void Keep(const char* key, const std::string* text, bool flag);
  void Forget(const char* key);
  void Clear() { values_.clear(); }

 private:
  struct Value {
    const char* key;
    std::string text;
    bool flag = false;
  };
  std::vector<Value> values_;
};

// A check of an object once it ended, made where its field list has it (kCheck): nullopt when
// it holds, else the problem: the field it names (nullptr: the object itself) and what is
// wrong ("is out of range"). It may also store what the kept values make.
struct CheckFailure {
  const char* field;
  const char* what;
};
using CheckFn = std::optional<CheckFailure> (*)(void* target, const KeptValues& kept);

// One field of an object. `target` is the struct the object fills (ObjectSpec::Target).
struct FieldSpec {
  const char* key = nullptr;
  FieldKind kind = FieldKind::kString;
  bool required = false;
  int64_t min = 0, max = 0;  // kIntInRange
  const ObjectSpec* object = nullptr;  // kObject, kObjectArray: the spec of the object(s)
  // Scalars and array elements: store one value.
  void (*set_string)(void* target, const std::string& value) = nullptr;
  void (*set_bool)(void* target, bool value) = nullptr;
  void (*set_u64)(void* target, uint64_t value) = nullptr;  // kU64, kHex
  void (*set_int)(void* target, int value) = nullptr;       // kInt, kIntInRange, kIntArray elements
  // kObject: the struct inside `target` its fields fill; kObjectArray: a new element's.
  void* (*enter)(void* target) = nullptr;
  // kObjectArray: the element `enter` gave is complete (may move it elsewhere); optional.
  void (*leave)(void* target) = nullptr;
  // The field's value as if it were absent (its key is given again: the last one counts), and
  // before an array is filled.
  void (*reset)(void* target) = nullptr;
  // kStringMap: stores the whole map once every value was found a string.
  void (*set_map)(void* target, std::map<std::string, std::string>&& value) = nullptr;
  CheckFn check = nullptr;  // kCheck
  bool keep = false;        // the value goes to KeptValues, for a check, not to a setter
};

class ObjectSpec {
 public:
  // `fields` in the order a field-by-field reader checks them: the first problem in this
  // order is the one reported.
  explicit ObjectSpec(std::vector<FieldSpec> fields);

  const std::vector<FieldSpec>& fields() const { return fields_; }
  // The position of the field named `key` in fields(), or -1: one length test and a compare
  // or two per key, for the millions of keys of a big job's dumps.
  int Find(std::string_view key) const;

 private:
  static constexpr size_t kMaxKeyLength = 32;
  std::vector<FieldSpec> fields_;
  // The keys of each length, with their positions in fields_.
  std::vector<std::pair<std::string_view, int>> by_length_[kMaxKeyLength + 1];
};

// The header every ncclwatch file starts with: "schema" exactly `name`, "version" in
// [1, max_version] ("dump version 9 is newer than this ncclwatch supports (2); upgrade
// ncclwatch"); `what` names the document in messages ("dump", "resolution").
struct SchemaHeader {
  const char* name;
  int max_version;
  const char* what;
  // The error of a text nlohmann rejects for a number a double cannot hold (1e400), not for
  // its syntax: nlohmann's own message follows when this ends in ": " ("unreadable dump: ").
  const char* unreadable;
};

// Reads `text` into `*target` (the struct the root spec fills, default-constructed) after
// checking `header`, and stores the version read in *version. Errors: "not valid JSON
// (truncated or corrupt) at byte N", "foreign JSON: ...", the header's, or the first bad
// field's. Never throws (out of memory is an error too).
template <typename T>
Status ReadCheckedJson(std::string_view text, const SchemaHeader& header, const ObjectSpec& root, T* target,
                       int* version) noexcept;

namespace checked_internal {
Status ReadCheckedJson(std::string_view text, const SchemaHeader& header, const ObjectSpec& root, void* target,
                       void (*clear)(void* target), int* version) noexcept;
}  // namespace checked_internal

template <typename T>
Status ReadCheckedJson(std::string_view text, const SchemaHeader& header, const ObjectSpec& root, T* target,
                       int* version) noexcept {
  // The fast parser may give up halfway through (json_stream.h): the target starts over.
  return checked_internal::ReadCheckedJson(
      text, header, root, target, [](void* t) { *static_cast<T*>(t) = T{}; }, version);
}

// ---- field makers: FieldSpec values for members of the target struct ----

namespace checked_internal {
template <typename M>
struct MemberOf;
template <typename C, typename V>
struct MemberOf<V C::*> {
  using Class = C;
  using Value = V;
};
template <auto M>
using ClassOf = typename MemberOf<decltype(M)>::Class;
template <auto M>
using ValueOf = typename MemberOf<decltype(M)>::Value;
}  // namespace checked_internal

inline constexpr bool kRequired = true;

// A scalar member's reset: the value a default-constructed C gives it (a repeated key whose
// last value stores nothing, an empty hex string, must leave the default, as if alone).
template <auto M>
void ResetToDefault(void* t) {
  using C = checked_internal::ClassOf<M>;
  static_cast<C*>(t)->*M = C{}.*M;
}

template <auto M>
FieldSpec StringField(const char* key, bool required = false) {
  using C = checked_internal::ClassOf<M>;
  FieldSpec f{key, FieldKind::kString, required};
  f.set_string = [](void* t, const std::string& v) { static_cast<C*>(t)->*M = v; };
  f.reset = &ResetToDefault<M>;
  return f;
}

template <auto M>
FieldSpec LenientStringField(const char* key) {
  FieldSpec f = StringField<M>(key);
  f.kind = FieldKind::kLenientString;
  return f;
}

template <auto M>
FieldSpec BoolField(const char* key, bool required = false) {
  using C = checked_internal::ClassOf<M>;
  FieldSpec f{key, FieldKind::kBool, required};
  f.set_bool = [](void* t, bool v) { static_cast<C*>(t)->*M = v; };
  f.reset = &ResetToDefault<M>;
  return f;
}

template <auto M>
FieldSpec U64Field(const char* key, bool required = false) {
  using C = checked_internal::ClassOf<M>;
  FieldSpec f{key, FieldKind::kU64, required};
  f.set_u64 = [](void* t, uint64_t v) { static_cast<C*>(t)->*M = v; };
  f.reset = &ResetToDefault<M>;
  return f;
}

template <auto M>
FieldSpec IntField(const char* key, bool required = false) {
  using C = checked_internal::ClassOf<M>;
  static_assert(std::is_same_v<checked_internal::ValueOf<M>, int>);
  FieldSpec f{key, FieldKind::kInt, required};
  f.set_int = [](void* t, int v) { static_cast<C*>(t)->*M = v; };
  f.reset = &ResetToDefault<M>;
  return f;
}

template <auto M>
FieldSpec IntInRangeField(const char* key, int64_t min, int64_t max, bool required = false) {
  FieldSpec f = IntField<M>(key, required);
  f.kind = FieldKind::kIntInRange;
  f.min = min;
  f.max = max;
  return f;
}

template <auto M>
FieldSpec HexField(const char* key, bool required = false) {
  FieldSpec f = U64Field<M>(key, required);
  f.kind = FieldKind::kHex;
  return f;
}

template <auto M>
FieldSpec IntArrayField(const char* key) {
  using C = checked_internal::ClassOf<M>;
  FieldSpec f{key, FieldKind::kIntArray};
  f.set_int = [](void* t, int v) { (static_cast<C*>(t)->*M).push_back(v); };
  f.reset = [](void* t) { (static_cast<C*>(t)->*M).clear(); };
  return f;
}

template <auto M>
FieldSpec StringArrayField(const char* key) {
  using C = checked_internal::ClassOf<M>;
  FieldSpec f{key, FieldKind::kStringArray};
  f.set_string = [](void* t, const std::string& v) { (static_cast<C*>(t)->*M).push_back(v); };
  f.reset = [](void* t) { (static_cast<C*>(t)->*M).clear(); };
  return f;
}

template <auto M>
FieldSpec StringMapField(const char* key) {
  using C = checked_internal::ClassOf<M>;
  FieldSpec f{key, FieldKind::kStringMap};
  f.set_map = [](void* t, std::map<std::string, std::string>&& v) { static_cast<C*>(t)->*M = std::move(v); };
  f.reset = [](void* t) { (static_cast<C*>(t)->*M).clear(); };
  return f;
}

// An object stored in member M.
template <auto M>
FieldSpec ObjectField(const char* key, const ObjectSpec* spec, bool required = false) {
  using C = checked_internal::ClassOf<M>;
  using V = checked_internal::ValueOf<M>;
  FieldSpec f{key, FieldKind::kObject, required};
  f.object = spec;
  f.enter = [](void* t) -> void* { return &(static_cast<C*>(t)->*M); };
  f.reset = [](void* t) { static_cast<C*>(t)->*M = V{}; };
  return f;
}

// An array of objects appended to the vector in member M.
template <auto M>
FieldSpec ObjectArrayField(const char* key, const ObjectSpec* spec) {
  using C = checked_internal::ClassOf<M>;
  FieldSpec f{key, FieldKind::kObjectArray};
  f.object = spec;
  f.enter = [](void* t) -> void* { return &(static_cast<C*>(t)->*M).emplace_back(); };
  f.reset = [](void* t) { (static_cast<C*>(t)->*M).clear(); };
  return f;
}

// A string or an integer the schema code stores itself (a kind by its name, a clamped number).
inline FieldSpec StringFieldTo(const char* key, void (*set)(void* target, const std::string& value),
                               bool required = false) {
  FieldSpec f{key, FieldKind::kString, required};
  f.set_string = set;
  return f;
}

inline FieldSpec U64FieldTo(const char* key, void (*set)(void* target, uint64_t value), bool required = false) {
  FieldSpec f{key, FieldKind::kU64, required};
  f.set_u64 = set;
  return f;
}

// An object whose fields are members of the target itself ("native_stacks" of a dump);
// `reset` gives those members their defaults.
inline FieldSpec InlineObjectField(const char* key, const ObjectSpec* spec, void (*reset)(void* target)) {
  FieldSpec f{key, FieldKind::kObject};
  f.object = spec;
  f.enter = [](void* t) { return t; };
  f.reset = reset;
  return f;
}

// A string or a bool kept for the object's checks (KeptValues) rather than stored.
inline FieldSpec KeptStringField(const char* key, bool required = false) {
  FieldSpec f{key, FieldKind::kString, required};
  f.keep = true;
  return f;
}

inline FieldSpec KeptBoolField(const char* key) {
  FieldSpec f{key, FieldKind::kBool};
  f.keep = true;
  return f;
}

inline FieldSpec CheckField(CheckFn check) {
  FieldSpec f{nullptr, FieldKind::kCheck};
  f.check = check;
  return f;
}

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_CHECKED_READER_H_
