#include "trn/graph/shape.h"

#include <fmt/format.h>

#include "trn/base/check.h"
#include "trn/base/checked.h"

namespace trn::graph {

Shape Shape::of(const std::vector<std::int64_t>& sizes) {
  Shape shape;
  for (std::int64_t s : sizes) {
    shape.dims.push_back(Dim::known(s));
  }
  return shape;
}

bool Shape::isStatic() const {
  for (const Dim& d : dims) {
    if (!d.isStatic()) {
      return false;
    }
  }
  return true;
}

std::vector<std::int64_t> Shape::sizes() const {
  TRN_CHECK(isStatic()) << "sizes() of the symbolic shape " << toString();
  std::vector<std::int64_t> out;
  out.reserve(dims.size());
  for (const Dim& d : dims) {
    out.push_back(d.value);
  }
  return out;
}

std::optional<std::int64_t> Shape::elementCount() const {
  Checked<std::int64_t> count = 1;
  for (const Dim& d : dims) {
    if (!d.isStatic() || d.value < 0) {
      return std::nullopt;
    }
    count *= d.value;
  }
  return count.get();
}

std::string Shape::toString() const {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) {
      out += ", ";
    }
    out += dims[i].isStatic() ? std::to_string(dims[i].value) : dims[i].symbol;
  }
  return out + "]";
}

}  // namespace trn::graph
