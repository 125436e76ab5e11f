#include "trn/runtime/host_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "trn/base/check.h"
#include "trn/base/file_reader.h"
#include "trn/isa/program_text.h"
#include "trn/numerics/convert.h"

namespace trn::runtime {

Result<TensorBinding> parseBinding(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return invalidArgument(fmt::format("bad tensor binding '{}'; expected NAME=FILE.npy or "
                                       "NAME=FILE.npy:DTYPE",
                                       text));
  }
  TensorBinding binding{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)), {}};
  const std::size_t colon = binding.path.rfind(':');
  if (colon != std::string::npos) {
    TRN_ASSIGN_OR_RETURN(const DType type, parseDType(binding.path.substr(colon + 1)));
    binding.hostType = type;
    binding.path.resize(colon);
  }
  return binding;
}

Result<isa::ChipProgram> loadChipProgram(const std::string& path) {
  TRN_ASSIGN_OR_RETURN(const std::unique_ptr<BoundedFile> file,
                       BoundedFile::open(path, kMaxProgramFileBytes, "program"));
  constexpr std::string_view kBinaryMagic = "TRNPROG";
  FileBytes bytes;
  TRN_ASSIGN_OR_RETURN(
      std::span<const std::byte> start,
      file->read(
          0, static_cast<std::size_t>(std::min<std::uint64_t>(file->size(), kBinaryMagic.size())),
          bytes));
  if (std::string_view(reinterpret_cast<const char*>(start.data()), start.size()) == kBinaryMagic) {
    return isa::decodeChipProgram(*file, path);  // read core by core
  }
  TRN_ASSIGN_OR_RETURN(const std::span<const std::byte> all,
                       file->read(0, static_cast<std::size_t>(file->size()), bytes));
  const std::string_view text(reinterpret_cast<const char*>(all.data()), all.size());
  isa::ChipProgram chip;
  TRN_ASSIGN_OR_RETURN(isa::Program program, isa::parseProgramText(text, path));
  chip.cores.push_back({0, std::move(program)});
  return chip;
}

Result<isa::Program> loadProgram(const std::string& path) {
  TRN_ASSIGN_OR_RETURN(isa::ChipProgram chip, loadChipProgram(path));
  if (chip.cores.size() != 1 || chip.cores.front().physicalCore != 0 || chip.lnc != 1) {
    return invalidArgument(
        fmt::format("{} is a chip program of {} cores at LNC={}, not a single "
                    "program",
                    path, chip.cores.size(), chip.lnc));
  }
  return std::move(chip.cores.front().program);
}

Status saveChipProgram(const isa::ChipProgram& chip, const std::string& path) {
  TRN_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes, isa::encodeChipProgram(chip));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out.good()) {
    return ioError(fmt::format("{}: cannot write", path));
  }
  return {};
}

NpyType storageType(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
    case DType::kTf32: return NpyType::kFloat32;
    case DType::kBf16: return NpyType::kUInt16;
    case DType::kFp16: return NpyType::kFloat16;
    case DType::kFp8E4m3:
    case DType::kFp8E5m2:
    case DType::kFp8E3m4:
    case DType::kFp8E4m3Fn: return NpyType::kUInt8;
    case DType::kInt8: return NpyType::kInt8;
    case DType::kInt16: return NpyType::kInt16;
    case DType::kInt32: return NpyType::kInt32;
    case DType::kUint8: return NpyType::kUInt8;
    case DType::kUint16: return NpyType::kUInt16;
    case DType::kUint32: return NpyType::kUInt32;
  }
  TRN_UNREACHABLE() << "bad DType " << static_cast<int>(dtype);
  return NpyType::kUInt8;
}

std::optional<DType> defaultHostType(DType dtype) {
  const bool numpyHasIt = dtype == DType::kFp32 || dtype == DType::kFp16;
  if (!isFloat(dtype) || numpyHasIt) {
    return std::nullopt;
  }
  return DType::kFp32;
}

namespace {

/// `value` rounded toward zero to float32.
float truncateToFloat(double value) {
  const float nearest = static_cast<float>(value);
  if (std::isfinite(nearest) && std::fabs(static_cast<double>(nearest)) > std::fabs(value)) {
    return std::nextafter(nearest, 0.0f);
  }
  if (std::isinf(nearest) && std::isfinite(value)) {
    return std::copysign(std::numeric_limits<float>::max(), static_cast<float>(value));
  }
  return nearest;
}

/// `value` rounded to float32 with round-to-odd: truncated, then the last mantissa bit set when
/// anything was discarded. Rounding that once more to a type of at most 22 significand bits gives
/// the directly rounded result in every mode.
float roundToOdd(double value) {
  const float truncated = truncateToFloat(value);
  if (!std::isfinite(value) || static_cast<double>(truncated) == value) {
    return truncated;
  }
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(truncated) | 1u);
}

/// `value` rounded to float32 under `options` (element `index` for stochastic rounding).
float roundToFloat(double value, const ConvertOptions& options, std::uint64_t index) {
  switch (options.rounding) {
    case RoundingMode::kNearestEven: return static_cast<float>(value);
    case RoundingMode::kTowardZero: return truncateToFloat(value);
    case RoundingMode::kStochastic: {
      const float down = truncateToFloat(value);
      if (!std::isfinite(value) || static_cast<double>(down) == value) {
        return static_cast<float>(value);
      }
      const float up = std::nextafter(down, std::copysign(std::numeric_limits<float>::infinity(),
                                                          down == 0.0f ? static_cast<float>(value)
                                                                       : down));
      // The discarded fraction's top 32 bits plus the random word carry into the kept part
      // exactly as in convert.h's rule.
      const double fraction = (std::fabs(value) - std::fabs(static_cast<double>(down))) /
                              (std::fabs(static_cast<double>(up)) -
                               std::fabs(static_cast<double>(down)));
      const auto kept = static_cast<std::uint64_t>(std::ldexp(fraction, 32));
      return kept + stochasticWord(options, index) >= (std::uint64_t{1} << 32) ? up : down;
    }
  }
  TRN_UNREACHABLE() << "bad RoundingMode";
  return 0.0f;
}

}  // namespace

void convertFromDouble(std::span<const double> src, DType type, std::span<std::byte> dst,
                       const ConvertOptions& options) {
  TRN_CHECK(isFloat(type)) << "convertFromDouble to " << dtypeName(type);
  TRN_CHECK(dst.size() == src.size() * static_cast<std::size_t>(byteSize(type)))
      << "convertFromDouble: destination of the wrong size";
  std::vector<float> values(src.size());
  if (type == DType::kFp32) {
    for (std::size_t i = 0; i < src.size(); ++i) {
      values[i] = roundToFloat(src[i], options, i);
    }
    std::memcpy(dst.data(), values.data(), dst.size());
    return;
  }
  for (std::size_t i = 0; i < src.size(); ++i) {
    values[i] = roundToOdd(src[i]);
  }
  convertFromFloat(values, type, dst, options);
}

Result<std::vector<std::byte>> tensorFromNpy(const isa::TensorDecl& tensor, const NpyArray& array,
                                             std::string_view source,
                                             const ConvertOptions& rounding) {
  if (array.shape != tensor.shape) {
    return invalidArgument(fmt::format("{}: shape ({}) does not match tensor '{}' [{}]", source,
                                       fmt::join(array.shape, ", "), tensor.name,
                                       fmt::join(tensor.shape, ", ")));
  }
  const NpyType storage = storageType(tensor.dtype);
  if (array.type == storage) {
    return array.data;
  }
  if (array.type == NpyType::kFloat32 && isFloat(tensor.dtype)) {
    std::vector<float> values(array.data.size() / sizeof(float));
    std::memcpy(values.data(), array.data.data(), array.data.size());
    std::vector<std::byte> bytes(static_cast<std::size_t>(tensor.byteSize()));
    convertFromFloat(values, tensor.dtype, bytes, rounding);
    return bytes;
  }
  if (array.type == NpyType::kFloat64 && isFloat(tensor.dtype)) {
    std::vector<double> values(array.data.size() / sizeof(double));
    std::memcpy(values.data(), array.data.data(), array.data.size());
    std::vector<std::byte> bytes(static_cast<std::size_t>(tensor.byteSize()));
    convertFromDouble(values, tensor.dtype, bytes, rounding);
    return bytes;
  }
  return invalidArgument(fmt::format(
      "{}: element type {} cannot feed {} tensor '{}'; give {} (its storage type){}", source,
      npyDescr(array.type), dtypeName(tensor.dtype), tensor.name, npyDescr(storage),
      isFloat(tensor.dtype) ? ", float32 or float64 (rounded with the run's rounding mode)" : ""));
}

Result<NpyArray> npyFromTensor(const isa::TensorDecl& tensor, std::span<const std::byte> bytes,
                               std::optional<DType> hostType) {
  NpyArray array;
  array.shape = tensor.shape;
  if (!hostType || *hostType == tensor.dtype) {
    array.type = storageType(tensor.dtype);
    array.data.assign(bytes.begin(), bytes.end());
    return array;
  }
  if (*hostType != DType::kFp32) {
    return invalidArgument(fmt::format("output '{}' can be written as its own type {} or as fp32, "
                                       "not {}",
                                       tensor.name, dtypeName(tensor.dtype),
                                       dtypeName(*hostType)));
  }
  std::vector<float> values(static_cast<std::size_t>(tensor.elementCount()));
  convertToFloat(bytes, tensor.dtype, values);
  array.type = NpyType::kFloat32;
  array.data.resize(values.size() * sizeof(float));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

}  // namespace trn::runtime
