#include "trn/fabric/functional_collective.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "trn/base/checked.h"
#include "trn/numerics/convert.h"

namespace trn::fabric {
namespace {

constexpr std::array<std::pair<ReduceOp, std::string_view>, 3> kReduceNames = {{
    {ReduceOp::kSum, "sum"},
    {ReduceOp::kMax, "max"},
    {ReduceOp::kMin, "min"},
}};

bool reduces(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter;
}

float combine(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::kSum:
      return a + b;
    case ReduceOp::kMax:
      return std::isnan(a) || std::isnan(b) ? std::nanf("") : std::max(a, b);
    case ReduceOp::kMin:
      return std::isnan(a) || std::isnan(b) ? std::nanf("") : std::min(a, b);
  }
  return a;
}

/// Calls f(first, k, length) for each run of `s`: `first` its first element in the region, `k` the
/// index of that element among the segment's (in run order).
template <typename F>
void forEachRun(const Segment& s, F f) {
  for (std::int64_t p = 0; p < s.pieces; ++p) {
    if (s.length > 0) {
      f(s.begin + p * s.stride, p * s.length, s.length);
    }
  }
}

/// The last element (plus one) of buffer or receive buffer that `s` reaches.
std::int64_t extent(const Segment& s) {
  return s.count() == 0 ? 0 : s.begin + (s.pieces - 1) * s.stride + s.length;
}

class Executor {
 public:
  Executor(const Plan& plan, DType dtype, ReduceOp reduce)
      : plan_(plan),
        dtype_(dtype),
        reduce_(reduce),
        bytes_(byteSize(dtype)),
        staging_(plan.ops().size(), -1) {}

  Status run(std::span<const std::int64_t> group, std::span<const RankMemory> ranks) {
    TRN_RETURN_IF_ERROR(bind(group, ranks));
    const std::vector<PlanOp>& ops = plan_.ops();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].move == kNoMove) {
        if (ops[i].resourceCount != 0 && ops[i].bytes > 0) {
          return invalidArgument(fmt::format(
              "operation {} of the plan moves bytes but says which data (a timing-only plan)", i));
        }
        continue;
      }
      const DataMove& m = plan_.moves()[ops[i].move];
      if (m.kind == DataMove::Kind::kCopy) {
        TRN_RETURN_IF_ERROR(copy(static_cast<OpId>(i), m));
      } else {
        reduceInto(m);
      }
    }
    return {};
  }

 private:
  /// Checks the memories and that every segment of the plan fits its buffer.
  Status bind(std::span<const std::int64_t> group, std::span<const RankMemory> ranks) {
    if (ranks.size() != group.size()) {
      return invalidArgument(
          fmt::format("{} rank memories for a group of {} ranks", ranks.size(), group.size()));
    }
    memoryOf_.assign(static_cast<std::size_t>(plan_.topology().chips()), nullptr);
    for (std::size_t i = 0; i < group.size(); ++i) {
      if (ranks[i].hbm == nullptr || !ranks[i].hbm->hasData()) {
        return invalidArgument(fmt::format("rank {} has no device memory with data", i));
      }
      memoryOf_[static_cast<std::size_t>(group[i])] = &ranks[i];
    }
    std::int64_t elements = 0;
    for (const DataMove& m : plan_.moves()) {
      if (memoryOf_.at(static_cast<std::size_t>(m.from)) == nullptr ||
          memoryOf_.at(static_cast<std::size_t>(m.to)) == nullptr) {
        return invalidArgument(fmt::format(
            "the plan moves data between chips {} and {}, not both in the group", m.from, m.to));
      }
      if (m.kind == DataMove::Kind::kReduce && !reducesIn(dtype_)) {
        return invalidArgument(
            fmt::format("the collective cores reduce in fp32 or bf16, not {}", dtypeName(dtype_)));
      }
      elements = std::max({elements, extent(m.source), extent(m.destination)});
    }
    const Checked<std::int64_t> size = Checked<std::int64_t>(elements) * bytes_;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      for (const std::int64_t address : {ranks[i].buffer, ranks[i].receive}) {
        if (!size.valid() || address < 0 || address > ranks[i].hbm->capacity() - size.value()) {
          return outOfRange(fmt::format(
              "rank {}'s buffers of {} elements at device address {} do not fit its HBM of {} "
              "bytes",
              i, elements, address, ranks[i].hbm->capacity()));
        }
      }
    }
    return {};
  }

  std::byte* at(std::int64_t chip, Region region, OpId stagedBy, std::int64_t element) {
    const RankMemory& m = *memoryOf_[static_cast<std::size_t>(chip)];
    const std::int64_t base = region == Region::kBuffer    ? m.buffer
                              : region == Region::kReceive ? m.receive
                                                           : staging_[stagedBy];
    return m.hbm->bytes().data() + base + element * bytes_;
  }

  Status copy(OpId op, const DataMove& m) {
    if (m.destination.region == Region::kStaging) {
      const RankMemory& to = *memoryOf_[static_cast<std::size_t>(m.to)];
      TRN_ASSIGN_OR_RETURN(staging_[op],
                           to.hbm->allocate(m.destination.count() * bytes_, 0,
                                            fmt::format("staging of collective operation {}", op)));
    }
    // Each source run lands in one or more destination runs.
    const Segment& d = m.destination;
    forEachRun(m.source, [&](std::int64_t first, std::int64_t k, std::int64_t length) {
      while (length > 0) {
        const std::int64_t offset = k % d.length;
        const std::int64_t n = std::min(length, d.length - offset);
        std::memcpy(at(m.to, d.region, op, d.begin + k / d.length * d.stride + offset),
                    at(m.from, m.source.region, op, first), static_cast<std::size_t>(n * bytes_));
        first += n;
        k += n;
        length -= n;
      }
    });
    return {};
  }

  void reduceInto(const DataMove& m) {
    const std::span<const OpId> inputs = plan_.inputsOf(m);
    forEachRun(m.destination, [&](std::int64_t first, std::int64_t k, std::int64_t length) {
      const auto n = static_cast<std::size_t>(length);
      const auto size = n * static_cast<std::size_t>(bytes_);
      value_.resize(n);
      operand_.resize(n);
      std::byte* target = at(m.to, m.destination.region, 0, first);
      convertToFloat(std::span(target, size), dtype_, value_);
      for (const OpId staged : inputs) {
        convertToFloat(std::span(at(m.to, Region::kStaging, staged, k), size), dtype_, operand_);
        for (std::size_t j = 0; j < n; ++j) {
          value_[j] = combine(reduce_, value_[j], operand_[j]);
        }
      }
      convertFromFloat(value_, dtype_, std::span(target, size));
    });
  }

  const Plan& plan_;
  DType dtype_;
  ReduceOp reduce_;
  std::int64_t bytes_;
  std::vector<std::int64_t> staging_;        ///< per operation, the device address it staged at
  std::vector<const RankMemory*> memoryOf_;  ///< per chip
  std::vector<float> value_;                 ///< scratch of reduceInto
  std::vector<float> operand_;
};

}  // namespace

std::string_view reduceOpName(ReduceOp op) {
  for (const auto& [value, name] : kReduceNames) {
    if (value == op) {
      return name;
    }
  }
  return "?";
}

Result<ReduceOp> parseReduceOp(std::string_view name) {
  for (const auto& [value, n] : kReduceNames) {
    if (n == name) {
      return value;
    }
  }
  return invalidArgument(fmt::format("unknown reduction '{}' (one of sum, max, min)", name));
}

bool reducesIn(DType dtype) { return dtype == DType::kFp32 || dtype == DType::kBf16; }

Status executePlan(const Plan& plan, std::span<const std::int64_t> group, DType dtype,
                   ReduceOp reduce, std::span<const RankMemory> ranks) {
  if (plan.elementBytes() != byteSize(dtype)) {
    return invalidArgument(fmt::format("a plan of {}-byte elements cannot move {} ({} bytes)",
                                       plan.elementBytes(), dtypeName(dtype), byteSize(dtype)));
  }
  return Executor(plan, dtype, reduce).run(group, ranks);
}

std::int64_t inputBytes(const CollectiveRequest& request) {
  const auto n = static_cast<std::int64_t>(std::max<std::size_t>(request.group.size(), 1));
  return request.op == CollectiveOp::kAllGather ? request.bytes / n : request.bytes;
}

std::int64_t outputBytes(const CollectiveRequest& request) {
  const auto n = static_cast<std::int64_t>(std::max<std::size_t>(request.group.size(), 1));
  return request.op == CollectiveOp::kReduceScatter ? request.bytes / n : request.bytes;
}

Result<DataCollectiveResult> runCollectiveOnData(const Topology& topology,
                                                 const spec::ChipSpec& chip,
                                                 const CollectiveRequest& request, DType dtype,
                                                 ReduceOp reduce,
                                                 std::span<const std::vector<std::byte>> inputs,
                                                 std::optional<Algorithm> algorithm) {
  if (request.elementBytes != byteSize(dtype)) {
    return invalidArgument(fmt::format("the request has {}-byte elements but {} has {}",
                                       request.elementBytes, dtypeName(dtype), byteSize(dtype)));
  }
  if (reduces(request.op) && !reducesIn(dtype)) {
    return invalidArgument(
        fmt::format("{} reduces, and the collective cores reduce in fp32 or "
                    "bf16, not {}",
                    opName(request.op), dtypeName(dtype)));
  }
  if (inputs.size() != request.group.size()) {
    return invalidArgument(
        fmt::format("{} inputs for {} ranks", inputs.size(), request.group.size()));
  }
  TRN_ASSIGN_OR_RETURN(CollectiveResult timing, runCollective(topology, request, algorithm));
  const std::int64_t in = inputBytes(request);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (static_cast<std::int64_t>(inputs[i].size()) != in) {
      return invalidArgument(fmt::format(
          "rank {}'s input has {} bytes; {} of {} bytes over {} "
          "ranks takes {} from each",
          i, inputs[i].size(), opName(request.op), request.bytes, request.group.size(), in));
    }
  }
  TRN_ASSIGN_OR_RETURN(Plan plan, buildPlan(topology, request, timing.algorithm));
  std::vector<std::shared_ptr<core::DeviceMemory>> devices;
  std::vector<RankMemory> ranks;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    TRN_ASSIGN_OR_RETURN(
        std::shared_ptr<core::DeviceMemory> hbm,
        core::DeviceMemory::create(chip.hbm.stackCapacity.count(), chip.hbm.stacks, true, false));
    RankMemory m;
    m.hbm = hbm.get();
    TRN_ASSIGN_OR_RETURN(m.buffer, hbm->allocate(request.bytes, 0, "collective buffer"));
    TRN_ASSIGN_OR_RETURN(m.receive, hbm->allocate(request.bytes, 0, "collective receive buffer"));
    const std::int64_t at = request.op == CollectiveOp::kAllGather
                                ? m.buffer + static_cast<std::int64_t>(i) * in
                                : m.buffer;
    TRN_RETURN_IF_ERROR(hbm->write(at, inputs[i]));
    devices.push_back(std::move(hbm));
    ranks.push_back(m);
  }
  TRN_RETURN_IF_ERROR(executePlan(plan, request.group, dtype, reduce, ranks));
  DataCollectiveResult result;
  result.timing = std::move(timing);
  const std::int64_t out = outputBytes(request);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const bool received =
        request.op == CollectiveOp::kAllToAll || request.op == CollectiveOp::kPermute;
    const std::int64_t at = received ? ranks[i].receive
                            : request.op == CollectiveOp::kReduceScatter
                                ? ranks[i].buffer + static_cast<std::int64_t>(i) * out
                                : ranks[i].buffer;
    TRN_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, ranks[i].hbm->read(at, out));
    result.outputs.emplace_back(bytes.begin(), bytes.end());
  }
  return result;
}

}  // namespace trn::fabric
