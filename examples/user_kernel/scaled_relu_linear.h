// A user's own tile kernel, written outside trnsim against its installed headers:
// out[M, N] = relu(scale * (x[M, K] @ w[K, N])), with its float64 reference. main.cpp runs it
// through runtime::Session; plugin.cpp registers it so `trnsim kernels bench --plugin` runs it.
#pragma once

#include <vector>

#include "trn/kernel/compiler.h"

namespace user_kernel {

/// The factor applied to the product before the relu.
inline constexpr float kScale = 0.5f;

/// The kernel: 128-row tiles of x, K in chunks of 128 accumulated in PSUM by
/// nl::matmulAccumulate (x in NKI's [M, K] layout), the scale and relu in one scalar-engine
/// activation (nisa), N up to 512.
trn::kernel::KernelDef scaledReluLinear();

/// The float64 reference of the kernel, from row-major x [M, K] and w [K, N]; `bound` receives
/// each element's error bound (the fp32 accumulation of K exact products, then one rounding).
std::vector<double> scaledReluLinearReference(const std::vector<double>& x,
                                              const std::vector<double>& w, long m, long k, long n,
                                              std::vector<double>* bound = nullptr);

}  // namespace user_kernel
