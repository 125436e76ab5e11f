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

/// Calls f(first, length) for each run of `s`: `first` its first element in the region.
template <typename F>
void forEachRun(const Segment& s, F f) {
  for (std::int64_t p = 0; p < s.pieces; ++p) {
    if (s.length > 0) {
      f(s.begin + p * s.stride, s.length);
    }
  }
}

/// The last element (plus one) of its region that `s` reaches.
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
      TRN_RETURN_IF_ERROR(execute(static_cast<OpId>(i), plan_.moves()[ops[i].move]));
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
      if (m.kind == DataMove::Kind::kReduce && !reducesIn(dtype_)) {
        return invalidArgument(
            fmt::format("the collective cores reduce in fp32 or bf16, not {}", dtypeName(dtype_)));
      }
      for (const std::span<const Access> accesses : {plan_.readsOf(m), plan_.writesOf(m)}) {
        for (const Access& a : accesses) {
          if (memoryOf_.at(static_cast<std::size_t>(a.place)) == nullptr) {
            return invalidArgument(fmt::format(
                "the plan moves data of place {} (issued by place {}), which is not in the group",
                a.place, m.issuer));
          }
          if (a.segment.region != Region::kStaging) {
            elements = std::max(elements, extent(a.segment));
          }
        }
      }
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

  /// The bytes of element `element` of `a`'s region; staging is that of a.stagedBy, or of
  /// `writer` when `a` is what it writes.
  std::byte* at(const Access& a, OpId writer, std::int64_t element) {
    const RankMemory& m = *memoryOf_[static_cast<std::size_t>(a.place)];
    const std::int64_t base = a.segment.region == Region::kBuffer ? m.buffer
                              : a.segment.region == Region::kReceive
                                  ? m.receive
                                  : staging_[a.stagedBy == kNoMove ? writer : a.stagedBy];
    return m.hbm->bytes().data() + base + element * bytes_;
  }

  /// Appends the elements `a` reads, in run order, to `out`.
  void gather(const Access& a, std::vector<std::byte>& out) {
    forEachRun(a.segment, [&](std::int64_t first, std::int64_t length) {
      const std::byte* from = at(a, kNoMove, first);
      out.insert(out.end(), from, from + length * bytes_);
    });
  }

  Status execute(OpId op, const DataMove& m) {
    const std::span<const Access> reads = plan_.readsOf(m);
    data_.clear();
    if (m.kind == DataMove::Kind::kCopy) {
      for (const Access& r : reads) {
        gather(r, data_);
      }
    } else {
      // Every input in fp32, combined in the order the plan lists them, rounded once.
      gather(reads.front(), data_);
      value_.resize(data_.size() / static_cast<std::size_t>(bytes_));
      operand_.resize(value_.size());
      convertToFloat(data_, dtype_, value_);
      for (const Access& r : reads.subspan(1)) {
        data_.clear();
        gather(r, data_);
        convertToFloat(data_, dtype_, operand_);
        for (std::size_t j = 0; j < value_.size(); ++j) {
          value_[j] = combine(reduce_, value_[j], operand_[j]);
        }
      }
      convertFromFloat(value_, dtype_, data_);
    }
    for (const Access& w : plan_.writesOf(m)) {
      if (w.segment.region == Region::kStaging) {
        const RankMemory& to = *memoryOf_[static_cast<std::size_t>(w.place)];
        TRN_ASSIGN_OR_RETURN(
            staging_[op], to.hbm->allocate(extent(w.segment) * bytes_, 0,
                                           fmt::format("staging of collective operation {}", op)));
      }
      std::int64_t k = 0;
      forEachRun(w.segment, [&](std::int64_t first, std::int64_t length) {
        std::memcpy(at(w, op, first), data_.data() + k * bytes_,
                    static_cast<std::size_t>(length * bytes_));
        k += length;
      });
    }
    return {};
  }

  const Plan& plan_;
  DType dtype_;
  ReduceOp reduce_;
  std::int64_t bytes_;
  std::vector<std::int64_t> staging_;        ///< per operation, the device address it staged at
  std::vector<const RankMemory*> memoryOf_;  ///< per place
  std::vector<std::byte> data_;              ///< scratch of execute: what a move writes
  std::vector<float> value_;
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
    const bool received = request.op == CollectiveOp::kAllToAll ||
                          request.op == CollectiveOp::kAllToAllV ||
                          request.op == CollectiveOp::kPermute;
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
