#include "trn/kernels/bench_inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <utility>

namespace trn::kernels {
namespace {

/// Splits "name=value" into (name, value); plain "value" gives an empty name.
std::pair<std::string_view, std::string_view> splitAssignment(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return {"", text};
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

/// The input that `name` names, or the `position`-th when `name` is empty.
Result<kernel::TensorSpec*> selectInput(std::vector<kernel::TensorSpec>& specs,
                                        std::string_view name, std::size_t position,
                                        std::string_view option) {
  if (name.empty()) {
    if (position >= specs.size()) {
      return invalidArgument(
          fmt::format("more {} values than the kernel's {} inputs", option, specs.size()));
    }
    return &specs[position];
  }
  for (kernel::TensorSpec& spec : specs) {
    if (spec.name == name) {
      return &spec;
    }
  }
  std::vector<std::string> names;
  for (const kernel::TensorSpec& spec : specs) {
    names.push_back(spec.name);
  }
  return invalidArgument(fmt::format("{} {}=...: the kernel has no input '{}' (inputs: {})", option,
                                     name, name, fmt::join(names, ", ")));
}

}  // namespace

Result<std::vector<std::int64_t>> parseShape(std::string_view text) {
  std::vector<std::int64_t> shape;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find_first_of("x,", begin);
    const std::string_view part =
        text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
    std::int64_t extent = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), extent);
    if (ec != std::errc() || ptr != part.data() + part.size() || extent <= 0) {
      return invalidArgument(fmt::format(
          "--shape '{}': expected positive extents separated by 'x', e.g. 512x2048", text));
    }
    shape.push_back(extent);
    if (end == std::string_view::npos) {
      return shape;
    }
    begin = end + 1;
  }
}

Result<std::vector<kernel::TensorSpec>> benchInputs(const KernelEntry& entry,
                                                    std::span<const std::string> shapes,
                                                    std::span<const std::string> dtypes) {
  std::vector<kernel::TensorSpec> specs = entry.defaultInputs;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto [name, value] = splitAssignment(shapes[i]);
    TRN_ASSIGN_OR_RETURN(kernel::TensorSpec * spec, selectInput(specs, name, i, "--shape"));
    TRN_ASSIGN_OR_RETURN(spec->shape, parseShape(value));
  }
  for (const std::string& text : dtypes) {
    const auto [name, value] = splitAssignment(text);
    TRN_ASSIGN_OR_RETURN(const DType dtype, parseDType(value));
    if (name.empty()) {
      for (kernel::TensorSpec& spec : specs) {
        if (isFloat(spec.dtype)) {
          spec.dtype = dtype;
        }
      }
      continue;
    }
    TRN_ASSIGN_OR_RETURN(kernel::TensorSpec * spec, selectInput(specs, name, 0, "--dtype"));
    spec->dtype = dtype;
  }
  return specs;
}

}  // namespace trn::kernels
