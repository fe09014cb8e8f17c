#include "core/dump/checked_reader.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <new>

#include "core/dump/json_stream.h"

namespace ncclwatch::dump {

ObjectSpec::ObjectSpec(std::vector<FieldSpec> fields) : fields_(std::move(fields)) {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].key == nullptr) continue;  // a check
    const std::string_view key = fields_[i].key;
    if (key.size() <= kMaxKeyLength) by_length_[key.size()].emplace_back(key, static_cast<int>(i));
  }
}

int ObjectSpec::Find(std::string_view key) const {
  if (key.size() > kMaxKeyLength) return -1;
  for (const auto& [name, position] : by_length_[key.size()]) {
    if (std::memcmp(name.data(), key.data(), key.size()) == 0) return position;
  }
  return -1;
}

const std::string* KeptValues::Text(std::string_view key) const {
  for (const Value& v : values_) {
    if (key == v.key) return &v.text;
  }
  return nullptr;
}

std::optional<bool> KeptValues::Flag(std::string_view key) const {
  for (const Value& v : values_) {
    if (key == v.key) return v.flag;
  }
  return std::nullopt;
}

void KeptValues::Keep(const char* key, const std::string* text, bool flag) {
  Forget(key);
  values_.push_back(Value{key, text ? *text : std::string(), flag});
}

void KeptValues::Forget(const char* key) {
  std::erase_if(values_, [key](const Value& v) { return std::string_view(key) == v.key; });
}

namespace checked_internal {
namespace {

constexpr size_t kNoIndex = static_cast<size_t>(-1);
// The schema header's two fields, ahead of every field of the root: a file that is not an
// ncclwatch file of a supported version is that, whatever else is wrong with it.
constexpr int kHeaderOrdinal = -1;

// One value of the text that is not a container.
struct Scalar {
  enum class Type { kNull, kBool, kSigned, kUnsigned, kFloat, kString } type;
  bool boolean = false;
  int64_t signed_value = 0;
  uint64_t unsigned_value = 0;
  const std::string* text = nullptr;

  bool IsInteger() const { return type == Type::kSigned || type == Type::kUnsigned; }
  // Whether an integer lies in [min, max] (as nlohmann's is_number_unsigned / get<int64_t>).
  bool InRange(int64_t min, int64_t max) const {
    if (type == Type::kUnsigned) return unsigned_value <= static_cast<uint64_t>(max) && (min <= 0 || unsigned_value >= static_cast<uint64_t>(min));
    return type == Type::kSigned && signed_value >= min && signed_value <= max;
  }
  int64_t AsInt64() const { return type == Type::kUnsigned ? static_cast<int64_t>(unsigned_value) : signed_value; }
};

// SchemaHeader::unreadable, with `detail` when it asks for it.
std::string UnreadableLine(const SchemaHeader& header, const std::string& detail) {
  const std::string_view line = header.unreadable;
  return std::string(line) + (line.ends_with(": ") ? detail : std::string());
}

// What a value of `kind` must be, in the messages of a wrong type.
const char* MustBe(FieldKind kind) {
  switch (kind) {
    case FieldKind::kString:
    case FieldKind::kHex: return "must be a string";
    case FieldKind::kBool: return "must be true or false";
    case FieldKind::kU64: return "must be a non-negative integer";
    case FieldKind::kInt: return "must be an integer";
    case FieldKind::kIntArray: return "must be an array of integers";
    case FieldKind::kStringArray: return "must be an array of strings";
    case FieldKind::kObjectArray: return "must be an array";
    case FieldKind::kObject:
    case FieldKind::kStringMap: return "must be an object";
    case FieldKind::kLenientString:
    case FieldKind::kIntInRange:
    case FieldKind::kCheck: break;
  }
  return "is invalid";
}

class CheckedReader {
 public:
  using json = nlohmann::json;

  CheckedReader(const SchemaHeader& header, const ObjectSpec& root, void* target, void (*clear)(void*))
      : header_(header), root_(root), target_(target), clear_(clear) {}

  // The outcome once the text was streamed; `parsed` is what the parser returned.
  Status Finish(bool parsed, int* version) const {
    if (syntax_error_byte_) {
      return Status::Error("not valid JSON (truncated or corrupt) at byte " + std::to_string(*syntax_error_byte_));
    }
    if (unreadable_) return Status::Error(UnreadableLine(header_, *unreadable_));
    if (!parsed) return Status::Error("not valid JSON (truncated or corrupt)");
    if (!top_is_object_) return Status::Error("foreign JSON: top level is not an object");
    if (error_) return Status::Error(*error_);
    *version = version_;
    return OkStatus();
  }

  // ---- the handler of json_stream.h ----

  void Reset() {
    clear_(target_);
    frames_.clear();
    depth_ = 0;
    skip_ = 0;
    started_ = false;
    top_is_object_ = false;
    schema_ = ValueSeen::kAbsent;
    schema_name_.clear();
    version_seen_ = ValueSeen::kAbsent;
    version_value_ = Scalar{Scalar::Type::kNull};
    root_current_header_ = 0;
    version_ = 0;
    error_.reset();
    syntax_error_byte_.reset();
    unreadable_.reset();
  }

  bool null() { return OnScalar(Scalar{Scalar::Type::kNull}); }
  bool boolean(bool value) {
    Scalar s{Scalar::Type::kBool};
    s.boolean = value;
    return OnScalar(s);
  }
  bool number_integer(json::number_integer_t value) {
    Scalar s{Scalar::Type::kSigned};
    s.signed_value = value;
    return OnScalar(s);
  }
  bool number_unsigned(json::number_unsigned_t value) {
    Scalar s{Scalar::Type::kUnsigned};
    s.unsigned_value = value;
    return OnScalar(s);
  }
  bool number_float(json::number_float_t, const std::string&) { return OnScalar(Scalar{Scalar::Type::kFloat}); }
  bool string(std::string& value) {
    Scalar s{Scalar::Type::kString};
    s.text = &value;
    return OnScalar(s);
  }
  bool binary(json::binary_t&) { return OnScalar(Scalar{Scalar::Type::kFloat}); }  // never in JSON text
  bool start_object(size_t) { return OnContainer(/*object=*/true); }
  bool start_array(size_t) { return OnContainer(/*object=*/false); }
  bool key(std::string& key);
  bool end_object() { return OnEnd(); }
  bool end_array() { return OnEnd(); }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& error) {
    if (dynamic_cast<const json::parse_error*>(&error) != nullptr) {
      syntax_error_byte_ = position;
    } else {
      unreadable_ = error.what();  // out_of_range 406: a number overflow
    }
    return false;
  }

 private:
  enum class FrameType : uint8_t { kObject, kObjectArray, kIntArray, kStringArray, kStringMap };
  enum class ValueSeen : uint8_t { kAbsent, kOfType, kOtherType };

  // An open container the schema knows. Frames are reused (frames_ only grows), so that a
  // dump's thousands of objects cost no allocation each.
  struct Frame {
    FrameType type = FrameType::kObject;
    const FieldSpec* field = nullptr;   // the field this container is the value of; nullptr: root
    const ObjectSpec* spec = nullptr;   // kObject: its fields
    void* target = nullptr;             // kObject: the struct it fills; else the one owning the member
    size_t index = kNoIndex;            // an element of an array of objects: its index
    uint64_t seen = 0;                  // kObject: fields given, by position
    int current = -1;                   // kObject: position of the field whose value is next; -1 none
    size_t count = 0;                   // arrays: elements so far
    // The first problem of each field (kObject, by position), or of the array's two passes
    // (0: an element of the wrong type, 1: a problem inside an element), until the frame ends.
    std::vector<std::pair<int, std::string>> errors;
    KeptValues kept;                                          // kObject: the values of `keep` fields
    std::string map_key;                                      // kStringMap: the key of the next value
    std::map<std::string, std::optional<std::string>> map;   // kStringMap: nullopt = not a string
  };

  Frame& Top() { return frames_[depth_ - 1]; }

  Frame& Push(FrameType type, const FieldSpec* field, const ObjectSpec* spec, void* target, size_t index) {
    if (frames_.size() == depth_) frames_.emplace_back();
    Frame& f = frames_[depth_++];
    f.type = type;
    f.field = field;
    f.spec = spec;
    f.target = target;
    f.index = index;
    f.seen = 0;
    f.current = -1;
    f.count = 0;
    f.errors.clear();
    f.kept.Clear();
    f.map.clear();
    return f;
  }

  static void AddError(Frame& f, int ordinal, std::string message) {
    for (const auto& e : f.errors) {
      if (e.first == ordinal) return;  // the first problem of a field is its problem
    }
    f.errors.emplace_back(ordinal, std::move(message));
  }

  static std::optional<std::string> FirstError(Frame& f) {
    if (f.errors.empty()) return std::nullopt;
    auto first = std::min_element(f.errors.begin(), f.errors.end(),
                                  [](const auto& a, const auto& b) { return a.first < b.first; });
    return std::move(first->second);
  }

  // "comms[3].records" for the frame at `level` (0: the root, "").
  std::string PathOf(size_t level) const {
    std::string path;
    for (size_t i = 1; i <= level; ++i) {
      const Frame& f = frames_[i];
      if (f.index != kNoIndex) {
        path += "[" + std::to_string(f.index) + "]";
      } else {
        if (!path.empty()) path += '.';
        path += f.field->key;
      }
    }
    return path;
  }

  std::string FieldPath(size_t level, const char* key) const {
    std::string path = PathOf(level);
    return path.empty() ? key : path + "." + key;
  }

  std::string ElementPath(size_t level, size_t index) const { return PathOf(level) + "[" + std::to_string(index) + "]"; }

  static std::string FieldError(const std::string& path, const char* what) { return "field '" + path + "' " + what; }

  // A problem with the value of the current field of the object on top.
  void FieldProblem(const char* what) {
    Frame& f = Top();
    AddError(f, f.current, FieldError(FieldPath(depth_ - 1, f.spec->fields()[f.current].key), what));
  }

  bool OnScalar(const Scalar& value);
  bool OnContainer(bool object);
  bool OnEnd();
  void ScalarField(const FieldSpec& field, const Scalar& value);
  void IntElement(const Scalar& value);
  void EndObject(Frame& f);
  void EndStringMap(Frame& f);
  // The object or array on top ended with `error` (or none): pops it and hands the error to
  // the container that holds it.
  void Close(std::optional<std::string> error);
  void CheckHeader();

  const SchemaHeader& header_;
  const ObjectSpec& root_;
  void* const target_;
  void (*const clear_)(void*);

  std::vector<Frame> frames_;
  size_t depth_ = 0;
  size_t skip_ = 0;  // depth inside a value no field takes (unknown key, wrong type)
  bool started_ = false;
  bool top_is_object_ = false;
  ValueSeen schema_ = ValueSeen::kAbsent;
  std::string schema_name_;
  ValueSeen version_seen_ = ValueSeen::kAbsent;
  Scalar version_value_{Scalar::Type::kNull};
  int root_current_header_ = 0;  // at the root, the key just read: 1 "schema", 2 "version", 0 other
  int version_ = 0;
  std::optional<std::string> error_;
  std::optional<size_t> syntax_error_byte_;
  std::optional<std::string> unreadable_;
};

bool CheckedReader::key(std::string& key) {
  if (skip_ > 0) return true;
  Frame& f = Top();
  if (f.type == FrameType::kStringMap) {
    f.map_key = key;
    return true;
  }
  root_current_header_ = 0;
  if (depth_ == 1) {
    if (key == "schema") root_current_header_ = 1;
    if (key == "version") root_current_header_ = 2;
    if (root_current_header_ != 0) {
      f.current = -1;
      return true;
    }
  }
  const int ordinal = f.spec->Find(key);
  f.current = ordinal;
  if (ordinal < 0) return true;
  const uint64_t bit = uint64_t{1} << ordinal;
  if (f.seen & bit) {  // given again: the last value counts, as if the first were not there
    std::erase_if(f.errors, [ordinal](const auto& e) { return e.first == ordinal; });
    const FieldSpec& field = f.spec->fields()[ordinal];
    if (field.reset) field.reset(f.target);
    if (field.keep) f.kept.Forget(field.key);
  }
  f.seen |= bit;
  return true;
}

bool CheckedReader::OnScalar(const Scalar& value) {
  if (skip_ > 0) return true;
  if (depth_ == 0) {  // the whole text is one scalar
    started_ = true;
    return true;
  }
  Frame& f = Top();
  switch (f.type) {
    case FrameType::kObject:
      if (depth_ == 1 && root_current_header_ == 1) {
        schema_ = value.type == Scalar::Type::kString ? ValueSeen::kOfType : ValueSeen::kOtherType;
        if (value.text) schema_name_ = *value.text;
      } else if (depth_ == 1 && root_current_header_ == 2) {
        version_seen_ = value.IsInteger() ? ValueSeen::kOfType : ValueSeen::kOtherType;
        version_value_ = value;
      } else if (f.current >= 0) {
        ScalarField(f.spec->fields()[f.current], value);
      }
      return true;
    case FrameType::kObjectArray:
      AddError(f, 0, FieldError(ElementPath(depth_ - 1, f.count++), "must be an object"));
      return true;
    case FrameType::kIntArray:
      IntElement(value);
      return true;
    case FrameType::kStringArray: {
      const size_t index = f.count++;
      if (value.type != Scalar::Type::kString) {
        AddError(f, 0, FieldError(ElementPath(depth_ - 1, index), "must be a string"));
      } else if (f.errors.empty()) {
        f.field->set_string(Top().target, *value.text);
      }
      return true;
    }
    case FrameType::kStringMap:
      f.map[f.map_key] = value.type == Scalar::Type::kString ? std::optional<std::string>(*value.text) : std::nullopt;
      return true;
  }
  return true;
}

void CheckedReader::ScalarField(const FieldSpec& field, const Scalar& value) {
  void* target = Top().target;
  switch (field.kind) {
    case FieldKind::kString:
      if (value.type != Scalar::Type::kString) return FieldProblem(MustBe(field.kind));
      if (field.keep) return Top().kept.Keep(field.key, value.text, false);
      return field.set_string(target, *value.text);
    case FieldKind::kLenientString:
      if (value.type == Scalar::Type::kString) field.set_string(target, *value.text);
      return;
    case FieldKind::kBool:
      if (value.type != Scalar::Type::kBool) return FieldProblem(MustBe(field.kind));
      if (field.keep) return Top().kept.Keep(field.key, nullptr, value.boolean);
      return field.set_bool(target, value.boolean);
    case FieldKind::kU64:
      if (value.type != Scalar::Type::kUnsigned) return FieldProblem(MustBe(field.kind));
      return field.set_u64(target, value.unsigned_value);
    case FieldKind::kInt:
      if (!value.IsInteger()) return FieldProblem(MustBe(field.kind));
      if (!value.InRange(INT32_MIN, INT32_MAX)) return FieldProblem("is out of range");
      return field.set_int(target, static_cast<int>(value.AsInt64()));
    case FieldKind::kIntInRange:
      if (!value.IsInteger() || !value.InRange(field.min, field.max)) {
        const std::string what =
            "must be an integer in [" + std::to_string(field.min) + ", " + std::to_string(field.max) + "]";
        return FieldProblem(what.c_str());
      }
      return field.set_int(target, static_cast<int>(value.AsInt64()));
    case FieldKind::kHex: {
      if (value.type != Scalar::Type::kString) return FieldProblem(MustBe(field.kind));
      if (value.text->empty() && !field.required) return;
      const std::optional<uint64_t> parsed = format::ParseHex(*value.text);
      if (!parsed) return FieldProblem("must be a hex string like \"0x1f\"");
      return field.set_u64(target, *parsed);
    }
    case FieldKind::kIntArray:
    case FieldKind::kStringArray:
    case FieldKind::kStringMap:
    case FieldKind::kObject:
    case FieldKind::kObjectArray:
      return FieldProblem(MustBe(field.kind));
    case FieldKind::kCheck:
      return;
  }
}

void CheckedReader::IntElement(const Scalar& value) {
  Frame& f = Top();
  const size_t index = f.count++;
  if (!value.IsInteger()) return AddError(f, 0, FieldError(ElementPath(depth_ - 1, index), "must be an integer"));
  if (!value.InRange(INT32_MIN, INT32_MAX)) {
    return AddError(f, 0, FieldError(ElementPath(depth_ - 1, index), "is out of range"));
  }
  if (f.errors.empty()) f.field->set_int(f.target, static_cast<int>(value.AsInt64()));
}

bool CheckedReader::OnContainer(bool object) {
  if (skip_ > 0) {
    ++skip_;
    return true;
  }
  if (depth_ == 0) {
    if (started_) return true;  // cannot happen: a document has one top-level value
    started_ = true;
    top_is_object_ = object;
    if (!object) {
      skip_ = 1;
      return true;
    }
    Push(FrameType::kObject, nullptr, &root_, target_, kNoIndex);
    return true;
  }
  Frame& f = Top();
  switch (f.type) {
    case FrameType::kObject: {
      if (depth_ == 1 && root_current_header_ != 0) {
        (root_current_header_ == 1 ? schema_ : version_seen_) = ValueSeen::kOtherType;
        skip_ = 1;
        return true;
      }
      if (f.current < 0) {
        skip_ = 1;
        return true;
      }
      const FieldSpec& field = f.spec->fields()[f.current];
      void* target = f.target;
      if (object && field.kind == FieldKind::kObject) {
        Push(FrameType::kObject, &field, field.object, field.enter(target), kNoIndex);
      } else if (object && field.kind == FieldKind::kStringMap) {
        Push(FrameType::kStringMap, &field, nullptr, target, kNoIndex);
      } else if (!object && field.kind == FieldKind::kObjectArray) {
        Push(FrameType::kObjectArray, &field, field.object, target, kNoIndex);
      } else if (!object && (field.kind == FieldKind::kIntArray || field.kind == FieldKind::kStringArray)) {
        if (field.reset) field.reset(target);
        Push(field.kind == FieldKind::kIntArray ? FrameType::kIntArray : FrameType::kStringArray, &field, nullptr,
             target, kNoIndex);
      } else {
        if (field.kind != FieldKind::kLenientString) {
          FieldProblem(field.kind == FieldKind::kIntInRange
                           ? ("must be an integer in [" + std::to_string(field.min) + ", " + std::to_string(field.max) + "]").c_str()
                           : MustBe(field.kind));
        }
        skip_ = 1;
      }
      return true;
    }
    case FrameType::kObjectArray: {
      const size_t index = f.count++;
      if (!object) {
        AddError(f, 0, FieldError(ElementPath(depth_ - 1, index), "must be an object"));
        skip_ = 1;
        return true;
      }
      const FieldSpec* field = f.field;
      Push(FrameType::kObject, field, field->object, field->enter(f.target), index);
      return true;
    }
    case FrameType::kIntArray:
    case FrameType::kStringArray: {
      const size_t index = f.count++;
      AddError(f, 0, FieldError(ElementPath(depth_ - 1, index),
                                f.type == FrameType::kIntArray ? "must be an integer" : "must be a string"));
      skip_ = 1;
      return true;
    }
    case FrameType::kStringMap:
      f.map[f.map_key] = std::nullopt;
      skip_ = 1;
      return true;
  }
  return true;
}

bool CheckedReader::OnEnd() {
  if (skip_ > 0) {
    --skip_;
    return true;
  }
  if (depth_ == 0) return true;
  Frame& f = Top();
  switch (f.type) {
    case FrameType::kObject:
      EndObject(f);
      return true;
    case FrameType::kStringMap:
      EndStringMap(f);
      return true;
    case FrameType::kObjectArray:
    case FrameType::kIntArray:
    case FrameType::kStringArray:
      Close(FirstError(f));
      return true;
  }
  return true;
}

void CheckedReader::EndObject(Frame& f) {
  const std::vector<FieldSpec>& fields = f.spec->fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldSpec& field = fields[i];
    const int ordinal = static_cast<int>(i);
    if (field.kind == FieldKind::kCheck) {
      if (const std::optional<CheckFailure> failed = field.check(f.target, f.kept)) {
        const std::string path = failed->field ? FieldPath(depth_ - 1, failed->field) : PathOf(depth_ - 1);
        AddError(f, ordinal, FieldError(path, failed->what));
      }
    } else if (field.required && !(f.seen & (uint64_t{1} << i))) {
      AddError(f, ordinal, FieldError(FieldPath(depth_ - 1, field.key), "is missing"));
    }
  }
  if (depth_ == 1) CheckHeader();
  Close(FirstError(f));
}

void CheckedReader::EndStringMap(Frame& f) {
  // nlohmann's object is a std::map: its keys in byte order, the last value of a repeated key.
  for (const auto& [key, value] : f.map) {
    if (!value) return Close(FieldError(PathOf(depth_ - 1) + "." + key, "must be a string"));
  }
  std::map<std::string, std::string> values;
  for (auto& [key, value] : f.map) values.emplace(key, std::move(*value));
  f.field->set_map(f.target, std::move(values));
  Close(std::nullopt);
}

void CheckedReader::Close(std::optional<std::string> error) {
  const Frame& closed = Top();
  const FieldSpec* field = closed.field;
  const bool element = closed.index != kNoIndex;
  --depth_;
  if (depth_ == 0) {
    error_ = std::move(error);
    return;
  }
  Frame& parent = Top();
  if (element) {
    if (field->leave) field->leave(parent.target);
    if (error) AddError(parent, 1, std::move(*error));
  } else if (error) {
    AddError(parent, parent.current, std::move(*error));
  }
}

void CheckedReader::CheckHeader() {
  Frame& root = Top();
  const std::string what = header_.what;
  std::optional<std::string> problem;
  if (schema_ != ValueSeen::kOfType) {
    problem = "foreign JSON: no \"schema\" field (not an ncclwatch " + what + ")";
  } else if (schema_name_ != header_.name) {
    problem = "foreign JSON: schema is \"" + schema_name_ + "\", expected \"" + header_.name + "\"";
  } else if (version_seen_ != ValueSeen::kOfType) {
    problem = "field 'version' is missing or not an integer";
  } else if (version_value_.type == Scalar::Type::kUnsigned
                 ? version_value_.unsigned_value > static_cast<uint64_t>(header_.max_version)
                 : version_value_.signed_value > header_.max_version) {
    const std::string number = version_value_.type == Scalar::Type::kUnsigned
                                   ? std::to_string(version_value_.unsigned_value)
                                   : std::to_string(version_value_.signed_value);
    problem = what + " version " + number + " is newer than this ncclwatch supports (" +
              std::to_string(header_.max_version) + "); upgrade ncclwatch";
  } else if (version_value_.AsInt64() < 1) {
    problem = what + " version " + std::to_string(version_value_.AsInt64()) + " is invalid";
  } else {
    version_ = static_cast<int>(version_value_.AsInt64());
  }
  if (problem) root.errors.insert(root.errors.begin(), {kHeaderOrdinal, std::move(*problem)});
}

}  // namespace

Status ReadCheckedJson(std::string_view text, const SchemaHeader& header, const ObjectSpec& root, void* target,
                       void (*clear)(void* target), int* version) noexcept {
  try {
    CheckedReader reader(header, root, target, clear);
    const bool parsed = StreamJson(text, &reader);
    return reader.Finish(parsed, version);
  } catch (const std::bad_alloc&) {
    return Status::Error("out of memory while reading it", ENOMEM);
  } catch (const std::exception& e) {
    return Status::Error(UnreadableLine(header, e.what()));
  }
}

}  // namespace checked_internal
}  // namespace ncclwatch::dump
