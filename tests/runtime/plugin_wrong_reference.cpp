// A plugin whose kernel disagrees with its own reference (the reference forgets the relu and the
// scale), so `trnsim kernels bench` reports FAIL and exits 1.
#include <span>
#include <utility>
#include <vector>

#include "scaled_relu_linear.h"
#include "trn/kernels/plugin.h"

namespace {

std::vector<trn::kernels::HostTensor> plainProduct(std::span<const trn::kernels::HostTensor> in) {
  const trn::kernels::HostTensor& x = in[0];
  const trn::kernels::HostTensor& w = in[1];
  const std::int64_t m = x.shape.at(0);
  const std::int64_t k = x.shape.at(1);
  const std::int64_t n = w.shape.at(1);
  trn::kernels::HostTensor out{{m, n}, std::vector<double>(static_cast<std::size_t>(m * n))};
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t c = 0; c < k; ++c) {
        out.values[static_cast<std::size_t>(i * n + j)] +=
            x.values[static_cast<std::size_t>(i * k + c)] *
            w.values[static_cast<std::size_t>(c * n + j)];
      }
    }
  }
  return {std::move(out)};
}

}  // namespace

extern "C" int trnsim_register_kernels(int abiVersion, trn::kernels::PluginRegistrar* registrar) {
  if (abiVersion != trn::kernels::kPluginAbiVersion) {
    return trn::kernels::kPluginMismatch;
  }
  trn::kernels::KernelEntry entry;
  entry.name = "wrong_reference";
  entry.summary = "scaled_relu_linear checked against the plain product (fails on purpose)";
  entry.defaultInputs = {{"x", {128, 64}, trn::DType::kFp32}, {"w", {64, 128}, trn::DType::kFp32}};
  entry.def = user_kernel::scaledReluLinear();
  entry.reference = plainProduct;
  entry.tolerance = {1e-4, 1e-4};
  registrar->add(std::move(entry));
  return 0;
}
