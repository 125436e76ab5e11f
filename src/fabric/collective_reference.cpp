// checkAgainstFloat64: the float64 reference of every collective, for `trnsim collectives run`.
// Data movement (an all-to-all-v's included) is rebuilt from the inputs and compared byte for byte.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "trn/fabric/all_to_allv.h"
#include "trn/fabric/functional_collective.h"
#include "trn/numerics/convert.h"

namespace trn::fabric {
namespace {

bool sameBytes(const std::vector<std::byte>& a, std::int64_t ia, const std::vector<std::byte>& b,
               std::int64_t ib, std::int64_t size) {
  return std::memcmp(a.data() + ia * size, b.data() + ib * size, static_cast<std::size_t>(size)) ==
         0;
}

}  // namespace

Result<ReferenceCheck> checkAgainstFloat64(const CollectiveRequest& request, DType dtype,
                                           ReduceOp reduce,
                                           std::span<const std::vector<std::byte>> inputs,
                                           std::span<const std::vector<std::byte>> outputs) {
  const auto n = static_cast<std::int64_t>(request.group.size());
  const std::int64_t size = byteSize(dtype);
  if (n == 0 || inputs.size() != request.group.size() || outputs.size() != inputs.size()) {
    return invalidArgument(
        fmt::format("{} inputs and {} outputs for {} ranks", inputs.size(), outputs.size(), n));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (static_cast<std::int64_t>(inputs[i].size()) != inputBytes(request) ||
        static_cast<std::int64_t>(outputs[i].size()) != outputBytes(request)) {
      return invalidArgument(fmt::format("rank {} has {} input and {} output bytes, not {} and {}",
                                         i, inputs[i].size(), outputs[i].size(),
                                         inputBytes(request), outputBytes(request)));
    }
  }
  const std::int64_t count = request.bytes / size;
  const std::int64_t chunk = count / n;
  // The reduction of each buffer element over the ranks, once (every rank's output reads it).
  std::vector<double> sum;
  std::vector<double> magnitude;
  std::vector<double> best;
  if (request.op == CollectiveOp::kAllReduce || request.op == CollectiveOp::kReduceScatter) {
    sum.assign(static_cast<std::size_t>(count), 0.0);
    magnitude.assign(static_cast<std::size_t>(count), 0.0);
    best.resize(static_cast<std::size_t>(count));
    std::vector<float> x(static_cast<std::size_t>(count));
    convertToFloat(inputs[0], dtype, x);
    best.assign(x.begin(), x.end());
    for (const std::vector<std::byte>& input : inputs) {
      convertToFloat(input, dtype, x);
      for (std::int64_t e = 0; e < count; ++e) {
        const auto i = static_cast<std::size_t>(e);
        const double v = x[i];
        sum[i] += v;
        magnitude[i] += std::abs(v);
        best[i] = std::isnan(v) || std::isnan(best[i]) ? NAN
                  : reduce == ReduceOp::kMax           ? std::max(best[i], v)
                                                       : std::min(best[i], v);
      }
    }
  }
  // An all-to-all-v's receive buffers: zero where nothing lands, each pair's range from its sender.
  std::vector<std::vector<std::byte>> received;
  if (request.op == CollectiveOp::kAllToAllV) {
    const VariableCounts& v = request.variable;
    TRN_RETURN_IF_ERROR(checkVariableCounts(v, n, count, count));
    received.assign(inputs.size(), std::vector<std::byte>(outputs[0].size(), std::byte{0}));
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        const auto k = static_cast<std::size_t>(i * n + j);
        const std::byte* from =
            inputs[static_cast<std::size_t>(i)].data() + v.sendOffsets[k] * size;
        std::copy(from, from + v.counts[k] * size,
                  received[static_cast<std::size_t>(j)].begin() + v.receiveOffsets[k] * size);
      }
    }
  }
  ReferenceCheck check;
  const std::int64_t outCount = outputBytes(request) / size;
  std::vector<float> values(static_cast<std::size_t>(outCount));
  for (std::int64_t rank = 0; rank < n; ++rank) {
    const std::vector<std::byte>& got = outputs[static_cast<std::size_t>(rank)];
    if (!sum.empty()) {
      convertToFloat(got, dtype, values);
    }
    for (std::int64_t e = 0; e < outCount; ++e) {
      ++check.elements;
      bool exact = true;
      switch (request.op) {
        case CollectiveOp::kAllReduce:
        case CollectiveOp::kReduceScatter: {
          const auto at = static_cast<std::size_t>(
              request.op == CollectiveOp::kAllReduce ? e : rank * chunk + e);
          const double value = values[static_cast<std::size_t>(e)];
          if (reduce == ReduceOp::kSum) {
            const double error = std::abs(value - sum[at]);
            check.maxError = std::max(check.maxError, error);
            check.maxRelative =
                std::max(check.maxRelative, magnitude[at] > 0 ? error / magnitude[at] : error);
          } else {
            exact = value == best[at] || (std::isnan(value) && std::isnan(best[at]));
          }
          break;
        }
        case CollectiveOp::kAllGather:
          exact = sameBytes(got, e, inputs[static_cast<std::size_t>(e / chunk)], e % chunk, size);
          break;
        case CollectiveOp::kAllToAll:
          exact = sameBytes(got, e, inputs[static_cast<std::size_t>(e / chunk)],
                            rank * chunk + e % chunk, size);
          break;
        case CollectiveOp::kAllToAllV:
          exact = sameBytes(got, e, received[static_cast<std::size_t>(rank)], e, size);
          break;
        case CollectiveOp::kBroadcast:
          exact = sameBytes(got, e, inputs[static_cast<std::size_t>(request.root)], e, size);
          break;
        case CollectiveOp::kPermute:
          exact = sameBytes(got, e, inputs[static_cast<std::size_t>((rank + n - 1) % n)], e, size);
          break;
      }
      check.mismatches += exact ? 0 : 1;
    }
  }
  return check;
}

}  // namespace trn::fabric
