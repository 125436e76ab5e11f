// Pass (analysis): dependencies between the instructions of an allocated kernel, found from the
// bytes their operands touch. Runs on physical addresses, so tiles that reuse an address after
// allocation are ordered too.
//
// Guarantees: for every pair of instructions a < b (trace order) whose operands touch a common
// byte, at least one a write, b depends on a directly or through a chain of dependencies.
// Overlap is exact (element runs are compared, isa/footprint.h), so interleaved accesses that
// share no byte do not depend on each other. An access that a later write covers completely is
// dropped from the search (the write depends on it, and so does everything after), and so is a
// read that a later read of the same engine covers: the result stays small on long kernels.
// Reads of HBM tensors that no op writes (a kernel's inputs) order nothing and are not kept, and a
// DMA read never scans earlier reads (it cannot drop them): kernels that re-read their inputs for
// every output tile analyse in time linear in their instructions. A core barrier depends on every
// op that touched HBM since the previous barrier, and every later op that touches HBM depends on
// it, so what one core wrote before the barrier is visible to the other cores after it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trn/kernel/kernel_ir.h"

namespace trn::kernel {

/// For each op, the earlier ops it depends on (sorted, no duplicates), kept in one flat array.
class Dependencies {
 public:
  /// The producers of op `op`.
  [[nodiscard]] std::span<const std::int32_t> operator[](std::size_t op) const {
    return std::span(producers_).subspan(starts_[op], starts_[op + 1] - starts_[op]);
  }
  [[nodiscard]] std::size_t size() const { return starts_.size() - 1; }
  /// Appends the producers of the next op (sorted, no duplicates).
  void append(std::span<const std::int32_t> producers) {
    producers_.insert(producers_.end(), producers.begin(), producers.end());
    starts_.push_back(producers_.size());
  }

 private:
  std::vector<std::size_t> starts_{0};
  std::vector<std::int32_t> producers_;
};

Dependencies analyseDependencies(const KernelIR& ir);

}  // namespace trn::kernel
