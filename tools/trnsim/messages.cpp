#include "messages.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace trn::tools {
namespace {

void printLines(std::string_view prefix, std::string_view message) {
  std::size_t start = 0;
  while (start <= message.size()) {
    const std::size_t end = std::min(message.find('\n', start), message.size());
    fmt::print(stderr, "trnsim: {}: {}\n", prefix, message.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace

void printError(std::string_view message) { printLines("error", message); }

void printWarning(std::string_view message) { printLines("warning", message); }

}  // namespace trn::tools
