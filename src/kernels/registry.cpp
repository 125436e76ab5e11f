#include "trn/kernels/registry.h"

#include <algorithm>

#include "trn/kernels/elementwise.h"
#include "trn/kernels/matmul.h"

namespace trn::kernels {

const std::vector<KernelEntry>& referenceKernels() {
  static const std::vector<KernelEntry> kernels = [] {
    std::vector<KernelEntry> all = {
        {"tensor_add",
         "out = a + b, 128-row tiles (NKI tutorial)",
         {{"a", {1024, 2048}, DType::kFp32}, {"b", {1024, 2048}, DType::kFp32}},
         kernel::makeKernel("tensor_add", tensorAdd)},
        {"matmul_basic",
         "result = lhsT^T @ rhs, one 128x128x512 tile (NKI matmul tutorial)",
         {{"lhsT", {128, 128}, DType::kBf16}, {"rhs", {128, 512}, DType::kBf16}},
         kernel::makeKernel("matmul_basic", matmulBasic)},
        {"matmul_tiled",
         "result = lhsT^T @ rhs, M/N/K tile loops, loads in the K loop (NKI tutorial)",
         {{"lhsT", {256, 384}, DType::kBf16}, {"rhs", {256, 1024}, DType::kBf16}},
         kernel::makeKernel("matmul_tiled", matmulTiled)},
        {"matmul_hoisted",
         "result = lhsT^T @ rhs, loads hoisted out of the K loop (NKI tutorial)",
         {{"lhsT", {256, 384}, DType::kBf16}, {"rhs", {256, 1024}, DType::kBf16}},
         kernel::makeKernel("matmul_hoisted", matmulHoisted)},
        {"matmul_blocked",
         "result = lhsT^T @ rhs, free dimensions blocked 2x2 tiles (NKI tutorial)",
         {{"lhsT", {256, 384}, DType::kBf16}, {"rhs", {256, 1024}, DType::kBf16}},
         kernel::makeKernel("matmul_blocked", matmulBlocked)},
        {"matmul_optimised",
         "result = lhsT^T @ rhs, M/N/K blocking, SBUF partial sums (NKI tutorial)",
         {{"lhsT", {256, 384}, DType::kBf16}, {"rhs", {256, 1024}, DType::kBf16}},
         kernel::makeKernel("matmul_optimised",
                            [](kernel::Kernel& k, kernel::Tensor lhsT, kernel::Tensor rhs) {
                              return matmulOptimised(k, lhsT, rhs);
                            })},
    };
    std::sort(all.begin(), all.end(),
              [](const KernelEntry& x, const KernelEntry& y) { return x.name < y.name; });
    return all;
  }();
  return kernels;
}

const KernelEntry* findKernel(std::string_view name) {
  for (const KernelEntry& k : referenceKernels()) {
    if (k.name == name) {
      return &k;
    }
  }
  return nullptr;
}

}  // namespace trn::kernels
