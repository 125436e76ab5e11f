#include "trn/isa/access_pattern.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include "trn/base/checked.h"

namespace trn::isa {

std::string_view memoryName(Memory memory) {
  switch (memory) {
    case Memory::kHbm: return "hbm";
    case Memory::kSbuf: return "sbuf";
    case Memory::kPsum: return "psum";
  }
  TRN_UNREACHABLE() << "bad Memory " << static_cast<int>(memory);
  return {};
}

namespace {

/// Debug builds: the unchecked sizes are used only on patterns whose checked extent exists.
void checkRepresentable([[maybe_unused]] const AccessPattern& ap) {
  TRN_DCHECK(ap.checkedExtent().has_value())
      << "sizes of an access pattern whose arithmetic overflows (the verifier rejects it)";
}

}  // namespace

std::int64_t AccessPattern::freeSize() const {
  checkRepresentable(*this);
  std::int64_t size = 1;
  for (int d = 0; d < numDims; ++d) {
    size *= dims[static_cast<std::size_t>(d)].count;
  }
  return size;
}

std::int64_t AccessPattern::elementCount() const { return partitionCount * freeSize(); }

std::int64_t AccessPattern::freeByteOffset(std::int64_t flat) const {
  checkRepresentable(*this);
  std::int64_t elements = 0;
  for (int d = numDims - 1; d >= 0; --d) {
    const Dim& dim = dims[static_cast<std::size_t>(d)];
    elements += (flat % dim.count) * dim.stride;
    flat /= dim.count;
  }
  return offset + elements * byteSize(dtype);
}

AccessPattern::ByteRange AccessPattern::byteRange() const {
  checkRepresentable(*this);
  const std::int64_t elementBytes = byteSize(dtype);
  std::int64_t low = 0;
  std::int64_t high = 0;
  auto extend = [&](std::int64_t stride, std::int64_t count) {
    const std::int64_t span = (count - 1) * stride;
    low += std::min<std::int64_t>(0, span);
    high += std::max<std::int64_t>(0, span);
  };
  for (int d = 0; d < numDims; ++d) {
    extend(dims[static_cast<std::size_t>(d)].stride, dims[static_cast<std::size_t>(d)].count);
  }
  if (memory == Memory::kHbm) {
    extend(partitionStride, partitionCount);
  }
  return {offset + low * elementBytes, offset + high * elementBytes + elementBytes};
}

std::optional<AccessPattern::Extent> AccessPattern::checkedExtent() const {
  if (numDims < 1 || numDims > kMaxFreeDims || partitionCount < 1) {
    return std::nullopt;
  }
  const std::int64_t elementBytes = byteSize(dtype);
  Checked<std::int64_t> free = 1;
  // Element offsets below and above element 0 (in elements); every partial sum of the per-dim
  // spans lies between them, so unchecked code that adds a subset of the spans cannot overflow.
  Checked<std::int64_t> low = 0;
  Checked<std::int64_t> high = 0;
  auto extend = [&](std::int64_t stride, std::int64_t count) {
    // count >= 1, so the span has the sign of the stride.
    (stride < 0 ? low : high) += (Checked<std::int64_t>(count) - 1) * stride;
  };
  for (int d = 0; d < numDims; ++d) {
    const Dim& dim = dims[static_cast<std::size_t>(d)];
    if (dim.count < 1) {
      return std::nullopt;
    }
    free *= dim.count;
    extend(dim.stride, dim.count);
  }
  if (memory == Memory::kHbm) {
    extend(partitionStride, partitionCount);
  }
  const Checked<std::int64_t> elements = free * partitionCount;
  const Checked<std::int64_t> begin = low * elementBytes + offset;
  const Checked<std::int64_t> end = (high + 1) * elementBytes + offset;
  if (!free.valid() || !elements.valid() || !begin.valid() || !end.valid()) {
    return std::nullopt;
  }
  return Extent{free.value(), elements.value(), ByteRange{begin.value(), end.value()}};
}

std::string formatAccessPattern(const AccessPattern& ap,
                                const std::function<std::string_view(std::int32_t)>& tensorName) {
  std::string out(memoryName(ap.memory));
  std::vector<std::string> pairs;
  if (ap.memory == Memory::kHbm) {
    out += fmt::format(":{}", tensorName(ap.tensor));
    pairs.push_back(fmt::format("[{},{}]", ap.partitionStride, ap.partitionCount));
  } else {
    out += fmt::format("[{}:{}]", ap.partitionStart, ap.partitionStart + ap.partitionCount);
  }
  if (ap.offset != 0) {
    out += fmt::format("+{}", ap.offset);
  }
  for (int d = 0; d < ap.numDims; ++d) {
    const Dim& dim = ap.dims[static_cast<std::size_t>(d)];
    pairs.push_back(fmt::format("[{},{}]", dim.stride, dim.count));
  }
  return out + fmt::format(":{}[{}]", dtypeName(ap.dtype), fmt::join(pairs, ","));
}

namespace {

/// A cursor over the pattern text with small typed readers.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  [[nodiscard]] bool done() const { return pos_ == text_.size(); }
  [[nodiscard]] char peek() const { return done() ? '\0' : text_[pos_]; }
  bool consume(char c) {
    if (peek() != c) {
      return false;
    }
    ++pos_;
    return true;
  }
  std::string_view takeWhile(auto predicate) {
    const std::size_t start = pos_;
    while (!done() && predicate(text_[pos_])) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }
  bool readInt(std::int64_t& value) {
    const char* begin = text_.data() + pos_;
    const auto [end, ec] = std::from_chars(begin, text_.data() + text_.size(), value);
    if (ec != std::errc() || end == begin) {
      return false;
    }
    pos_ += static_cast<std::size_t>(end - begin);
    return true;
  }
  [[nodiscard]] std::size_t position() const { return pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

}  // namespace

Result<AccessPattern> parseAccessPattern(
    std::string_view text,
    const std::function<Result<std::int32_t>(std::string_view)>& tensorIndex) {
  Cursor in(text);
  auto fail = [&](std::string_view what) {
    return parseError(fmt::format("bad access pattern '{}' at character {}: {}", text,
                                  in.position(), what));
  };
  AccessPattern ap;
  const std::string_view memory = in.takeWhile([](char c) { return c >= 'a' && c <= 'z'; });
  if (memory == "hbm") {
    ap.memory = Memory::kHbm;
    if (!in.consume(':')) {
      return fail("expected ':' and a tensor name after 'hbm'");
    }
    const std::string_view name = in.takeWhile(isNameChar);
    TRN_ASSIGN_OR_RETURN(ap.tensor, tensorIndex(name));
  } else if (memory == "sbuf" || memory == "psum") {
    ap.memory = memory == "sbuf" ? Memory::kSbuf : Memory::kPsum;
    std::int64_t end = 0;
    if (!in.consume('[') || !in.readInt(ap.partitionStart) || !in.consume(':') ||
        !in.readInt(end) || !in.consume(']')) {
      return fail("expected a partition range [start:end]");
    }
    const std::optional<std::int64_t> count = (Checked<std::int64_t>(end) - ap.partitionStart).get();
    ap.partitionCount = count.value_or(0);
    if (ap.partitionStart < 0 || ap.partitionCount <= 0) {
      return fail(fmt::format("empty or negative partition range [{}:{}]", ap.partitionStart, end));
    }
  } else {
    return fail("expected sbuf, psum or hbm");
  }
  if (in.consume('+') && !in.readInt(ap.offset)) {
    return fail("expected a byte offset after '+'");
  }
  if (!in.consume(':')) {
    return fail("expected ':' and a dtype");
  }
  const std::string_view dtype = in.takeWhile(isNameChar);
  const Result<DType> parsedType = parseDType(dtype);
  if (!parsedType.ok()) {
    return fail(parsedType.status().message());
  }
  ap.dtype = *parsedType;
  if (!in.consume('[')) {
    return fail("expected '[' and (stride, count) pairs");
  }
  std::vector<Dim> pairs;
  do {
    Dim dim;
    if (!in.consume('[') || !in.readInt(dim.stride) || !in.consume(',') || !in.readInt(dim.count) ||
        !in.consume(']')) {
      return fail("expected a [stride,count] pair");
    }
    if (dim.count < 1) {
      return fail(fmt::format("dimension count {} is not positive", dim.count));
    }
    pairs.push_back(dim);
  } while (in.consume(','));
  if (!in.consume(']') || !in.done()) {
    return fail("expected ']' at the end");
  }
  if (ap.memory == Memory::kHbm) {
    ap.partitionStride = pairs.front().stride;
    ap.partitionCount = pairs.front().count;
    pairs.erase(pairs.begin());
  }
  if (pairs.empty() || pairs.size() > static_cast<std::size_t>(kMaxFreeDims)) {
    return fail(fmt::format("{} free dimensions; an access pattern has 1 to {}", pairs.size(),
                            kMaxFreeDims));
  }
  ap.numDims = static_cast<std::int32_t>(pairs.size());
  std::copy(pairs.begin(), pairs.end(), ap.dims.begin());
  return ap;
}

}  // namespace trn::isa
