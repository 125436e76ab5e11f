// The user's kernel as a trnsim plugin: `trnsim kernels bench scaled_relu_linear --plugin
// ./libmykernels.so` checks it against its float64 reference and reports its speed, like a
// built-in kernel (trn/kernels/plugin.h has the contract).
#include "trn/kernels/plugin.h"

#include <span>
#include <utility>
#include <vector>

#include "scaled_relu_linear.h"

namespace {

std::vector<trn::kernels::HostTensor> reference(std::span<const trn::kernels::HostTensor> in) {
  const trn::kernels::HostTensor& x = in[0];
  const trn::kernels::HostTensor& w = in[1];
  const long m = static_cast<long>(x.shape.at(0));
  const long k = static_cast<long>(x.shape.at(1));
  const long n = static_cast<long>(w.shape.at(1));
  return {{{m, n}, user_kernel::scaledReluLinearReference(x.values, w.values, m, k, n)}};
}

double flops(std::span<const trn::kernel::TensorSpec> in) {
  return 2.0 * static_cast<double>(in[0].shape.at(0)) * static_cast<double>(in[0].shape.at(1)) *
         static_cast<double>(in[1].shape.at(1));
}

}  // namespace

extern "C" int trnsim_register_kernels(int abiVersion, trn::kernels::PluginRegistrar* registrar) {
  if (abiVersion != trn::kernels::kPluginAbiVersion) {
    return trn::kernels::kPluginMismatch;
  }
  trn::kernels::KernelEntry entry;
  entry.name = "scaled_relu_linear";
  entry.summary = "out = relu(0.5 x @ w), x [M, K] (examples/user_kernel)";
  entry.defaultInputs = {{"x", {200, 192}, trn::DType::kFp32},
                         {"w", {192, 320}, trn::DType::kFp32}};
  entry.def = user_kernel::scaledReluLinear();
  entry.reference = reference;
  // fp32 products accumulated over K <= a few thousand terms of magnitude <= 1.
  entry.tolerance = {1e-4, 1e-4};
  entry.flops = flops;
  registrar->add(std::move(entry));
  return 0;
}
