// What crosses between host files and device tensors: program files (text or binary, read with
// a bound), `NAME=FILE.npy` bindings, and the conversions between .npy arrays and tensor bytes.
// Tensors are exchanged in their storage format (bf16 as raw uint16, fp8 as raw uint8, ...); a
// float32 or float64 array may also be given for any floating-point tensor and is rounded with
// the run's rounding mode, and outputs may be requested as float32 with a `:fp32` suffix on the
// binding.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/status.h"
#include "trn/isa/chip_program.h"
#include "trn/isa/core_limits.h"
#include "trn/isa/program.h"
#include "trn/numerics/convert.h"
#include "trn/runtime/npy.h"
#include "trn/spec/chip_spec.h"

namespace trn::runtime {

/// A command-line binding `tensor=path.npy` or `tensor=path.npy:dtype`.
struct TensorBinding {
  std::string tensor;
  std::string path;
  std::optional<DType> hostType;  ///< output: convert to this type (only fp32 is supported)
};

/// Parses a binding; the error shows the expected form.
Result<TensorBinding> parseBinding(std::string_view text);

/// The largest program file loadProgram reads: 1 GiB. The reference kernels encode about 250
/// bytes per instruction in either form (flash attention: 1,533 instructions in 362 KB), so this
/// holds a program at isa::ProgramLimits::kMaxInstructions (4M instructions, about 1 GB).
inline constexpr std::uint64_t kMaxProgramFileBytes = std::uint64_t{1} << 30;

/// Loads a program from a binary file (recognised by its magic) or from assembly text; the file
/// must be a regular file of at most kMaxProgramFileBytes.
Result<isa::Program> loadProgram(const std::string& path);

/// A chip program (isa/chip_program.h) from `path`: a multi-core binary, or any program that
/// loadProgram reads, as one core (physical core 0, LNC 1). The same file rules.
Result<isa::ChipProgram> loadChipProgram(const std::string& path);

/// Writes `chip` to `path` in the binary form (the single-program form for one core on physical
/// core 0 at LNC 1).
Status saveChipProgram(const isa::ChipProgram& chip, const std::string& path);

/// The .npy element type that stores `dtype` bit for bit.
NpyType storageType(DType dtype);

/// The type an output of `dtype` is read back in unless the caller keeps the storage type:
/// float32 for the floating-point types numpy lacks (bf16, tf32, fp8), nullopt (the storage
/// type itself) for fp32, fp16 and the integers.
std::optional<DType> defaultHostType(DType dtype);

/// The bytes of `tensor` from an array: raw when the array has the storage type; for a
/// floating-point tensor, a float32 or float64 array is rounded once to the tensor's type under
/// `rounding` (stochastic rounding draws element i's word from (seed, stream, i)). Shapes must
/// match.
Result<std::vector<std::byte>> tensorFromNpy(const isa::TensorDecl& tensor, const NpyArray& array,
                                             std::string_view source,
                                             const ConvertOptions& rounding = {});

/// float64 values rounded once to `type` (a float type) under `options`, one encoding of
/// byteSize(type) bytes per element into `dst`: exactly as if each value were rounded directly,
/// not first to float32 (values go through float32 rounded to odd, which keeps the sticky bit).
void convertFromDouble(std::span<const double> src, DType type, std::span<std::byte> dst,
                       const ConvertOptions& options = {});

/// An array holding `bytes` of `tensor`, in its storage type, or widened to float32 when
/// `hostType` is fp32.
Result<NpyArray> npyFromTensor(const isa::TensorDecl& tensor, std::span<const std::byte> bytes,
                               std::optional<DType> hostType);

}  // namespace trn::runtime
