#include "trn/kernels/registry.h"

#include <algorithm>

#include "trn/kernels/elementwise.h"

namespace trn::kernels {

const std::vector<KernelEntry>& referenceKernels() {
  static const std::vector<KernelEntry> kernels = [] {
    std::vector<KernelEntry> all = {
        {"tensor_add",
         "out = a + b, 128-row tiles (NKI tutorial)",
         {{"a", {1024, 2048}, DType::kFp32}, {"b", {1024, 2048}, DType::kFp32}},
         kernel::makeKernel("tensor_add", tensorAdd)},
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
