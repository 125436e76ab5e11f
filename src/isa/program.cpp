#include "trn/isa/program.h"

namespace trn::isa {

std::int64_t TensorDecl::elementCount() const {
  std::int64_t count = 1;
  for (const std::int64_t d : shape) {
    count *= d;
  }
  return count;
}

std::optional<std::int32_t> Program::findTensor(std::string_view name) const {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == name) {
      return static_cast<std::int32_t>(i);
    }
  }
  return std::nullopt;
}

std::size_t Program::instructionCount() const {
  std::size_t count = 0;
  for (const auto& s : streams) {
    count += s.size();
  }
  return count;
}

}  // namespace trn::isa
