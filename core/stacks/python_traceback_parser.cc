#include "core/stacks/python_traceback_parser.h"

#include <cstdlib>
#include <string>

namespace ncclwatch {
namespace {

bool ConsumePrefix(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// "Thread 0x..." or "Current thread 0x..." (also "Stack" for one thread).
bool ParseThreadHeader(std::string_view line, PythonThread* thread) {
  bool current = ConsumePrefix(line, "Current thread ");
  if (!current && !ConsumePrefix(line, "Thread ")) return false;
  std::string id(line.substr(0, line.find(' ')));
  char* end = nullptr;
  uint64_t value = std::strtoull(id.c_str(), &end, 16);
  if (end == id.c_str()) return false;
  *thread = PythonThread{value, current, {}};
  return true;
}

//   File "<path>", line <n> in <function>
bool ParseFrame(std::string_view line, PythonFrame* frame) {
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  if (!ConsumePrefix(line, "File \"")) return false;
  size_t file_end = line.rfind("\", line ");
  if (file_end == std::string_view::npos) return false;
  frame->file = std::string(line.substr(0, file_end));
  line.remove_prefix(file_end + 8);
  size_t in = line.find(" in ");
  std::string number(line.substr(0, in));
  frame->line = std::atoi(number.c_str());
  frame->function = in == std::string_view::npos ? std::string() : std::string(line.substr(in + 4));
  return true;
}

}  // namespace

std::vector<PythonThread> ParsePythonTracebacks(std::string_view text) {
  std::vector<PythonThread> threads;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    PythonThread header;
    PythonFrame frame;
    if (ParseThreadHeader(line, &header)) {
      threads.push_back(header);
    } else if (!threads.empty() && ParseFrame(line, &frame)) {
      threads.back().frames.push_back(frame);
    }
  }
  return threads;
}

}  // namespace ncclwatch
