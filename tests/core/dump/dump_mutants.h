// Deterministic variants of a dump's text, for comparing what readers make of hostile input:
// the text cut short and its bytes replaced, and, when it is JSON, every field given each
// value of another type, removed, given twice, and the header's fields varied.
#ifndef NCCLWATCH_TESTS_DUMP_DUMP_MUTANTS_H_
#define NCCLWATCH_TESTS_DUMP_DUMP_MUTANTS_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclwatch::testing {

struct Mutant {
  std::string name;  // how it was made: "cut@812", "byte@40=0x22", "set comms[0].rank=-1", ...
  std::string text;
};

namespace mutants_internal {

using nlohmann::json;

// Values of every JSON type and the edges of the schema's integer kinds.
inline const std::vector<std::string>& Replacements() {
  static const std::vector<std::string> values = {
      "null", "true", "-1", "1.5", "2147483648", "18446744073709551615", "\"\"", "\"0x1f\"", "[1,\"a\"]", "{}",
  };
  return values;
}

// The values a key given twice has the other time: none, one of the wrong type, an empty one.
inline const std::vector<std::string>& TwiceValues() {
  static const std::vector<std::string> values = {"null", "\"\"", "{\"x\":1}"};
  return values;
}

// `doc` written out with `edit` applied at the value whose path is `target` ("comms[0].rank";
// "" is the document): kind 0 replaces it by `value`, 1 removes its key, 2 gives its key
// once more before it with `value`, 3 once more after it.
inline void Write(const json& node, const std::string& path, const std::string& target, int kind,
                  const std::string& value, std::string* out) {
  if (node.is_object()) {
    *out += '{';
    bool first = true;
    for (const auto& [key, child] : node.items()) {
      const std::string child_path = path.empty() ? key : path + "." + key;
      if (child_path == target && kind == 1) continue;
      if (!first) *out += ',';
      first = false;
      if (child_path == target && kind == 2) *out += json(key).dump() + ":" + value + ",";
      *out += json(key).dump() + ":";
      if (child_path == target && kind == 0) {
        *out += value;
      } else {
        Write(child, child_path, target, kind, value, out);
      }
      if (child_path == target && kind == 3) *out += "," + json(key).dump() + ":" + value;
    }
    *out += '}';
  } else if (node.is_array()) {
    *out += '[';
    for (size_t i = 0; i < node.size(); ++i) {
      if (i) *out += ',';
      const std::string child_path = path + "[" + std::to_string(i) + "]";
      if (child_path == target && kind == 0) {
        *out += value;
      } else {
        Write(node[i], child_path, target, kind, value, out);
      }
    }
    *out += ']';
  } else {
    *out += node.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

// The paths of `node`'s values: every member of every object, the first two and the last
// element of every array (their other elements are alike).
inline void Paths(const json& node, const std::string& path, bool member, std::vector<std::pair<std::string, bool>>* out) {
  if (!path.empty()) out->emplace_back(path, member);
  if (node.is_object()) {
    for (const auto& [key, child] : node.items()) Paths(child, path.empty() ? key : path + "." + key, true, out);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) {
      if (i >= 2 && i + 1 < node.size()) continue;
      Paths(node[i], path + "[" + std::to_string(i) + "]", false, out);
    }
  }
}

}  // namespace mutants_internal

inline std::vector<Mutant> MutantsOf(const std::string& text) {
  using namespace mutants_internal;
  std::vector<Mutant> out;
  out.push_back({"as is", text});
  const size_t step = std::max<size_t>(1, text.size() / 97);
  for (size_t at = 0; at < text.size(); at += step) out.push_back({"cut@" + std::to_string(at), text.substr(0, at)});
  for (size_t i = 1; i <= 8 && i <= text.size(); ++i) {
    out.push_back({"cut@end-" + std::to_string(i), text.substr(0, text.size() - i)});
  }
  static const unsigned char kBytes[] = {'"', '\\', '{', '}', '[', ']', ',', ':', '-', '0', 'x', ' ', 0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xed, 0xff};
  for (size_t at = step / 2; at < text.size(); at += step) {
    for (unsigned char b : kBytes) {
      std::string mutated = text;
      mutated[at] = static_cast<char>(b);
      char hex[8];
      std::snprintf(hex, sizeof hex, "%02x", b);
      out.push_back({"byte@" + std::to_string(at) + "=0x" + hex, mutated});
    }
  }
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) return out;
  for (const std::string& value : Replacements()) out.push_back({"document=" + value, value});
  std::vector<std::pair<std::string, bool>> paths;
  Paths(doc, "", false, &paths);
  for (const auto& [path, member] : paths) {
    for (const std::string& value : Replacements()) {
      std::string mutated;
      Write(doc, "", path, 0, value, &mutated);
      out.push_back({"set " + path + "=" + value, std::move(mutated)});
    }
    for (const std::string& value : member ? TwiceValues() : std::vector<std::string>{}) {
      std::string mutated;
      Write(doc, "", path, 2, value, &mutated);
      out.push_back({"twice " + path + " first=" + value, std::move(mutated)});
      mutated.clear();
      Write(doc, "", path, 3, value, &mutated);
      out.push_back({"twice " + path + " last=" + value, std::move(mutated)});
    }
    if (member) {
      std::string mutated;
      Write(doc, "", path, 1, "", &mutated);
      out.push_back({"remove " + path, std::move(mutated)});
    }
  }
  return out;
}

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_DUMP_DUMP_MUTANTS_H_
