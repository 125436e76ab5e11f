#include "validate.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trn/spec/report.h"

namespace trn::spec::detail {
namespace {

/// Collects cross-field errors located at the value they name.
class Checker {
 public:
  explicit Checker(const ChipSpec& spec) : spec_(spec) {}

  /// Records an error at `path` unless `ok`.
  void require(bool ok, std::string_view path, std::string_view message) {
    if (!ok) {
      fail(path, message);
    }
  }

  void fail(std::string_view path, std::string_view message) {
    const Provenance* at = spec_.provenanceOf(path);
    errors_.push_back(at == nullptr
                          ? fmt::format("{}: {}: {}", spec_.file, path, message)
                          : fmt::format("{}:{}:{}: {}: {}", at->file, std::max(at->line, 1),
                                        std::max(at->column, 1), path, message));
  }

  [[nodiscard]] Status status() const {
    return errors_.empty() ? Status()
                           : invalidArgument(fmt::format("{}", fmt::join(errors_, "\n")));
  }

 private:
  const ChipSpec& spec_;
  std::vector<std::string> errors_;
};

void checkChipAndMemories(const ChipSpec& s, Checker& c) {
  const LogicalCores& lnc = s.chip.logicalCores;
  c.require(std::find(lnc.sizes.begin(), lnc.sizes.end(), lnc.defaultSize) != lnc.sizes.end(),
            "chip.logical_cores.default_size",
            fmt::format("{} is not one of the sizes {}", lnc.defaultSize, fmt::join(lnc.sizes, ", ")));
  for (const std::int64_t size : lnc.sizes) {
    c.require(s.chip.neuronCores % size == 0, "chip.logical_cores.sizes",
              fmt::format("LNC {} does not divide the {} cores", size, s.chip.neuronCores));
  }

  const Sbuf& sbuf = s.core.sbuf;
  c.require(sbuf.partitionBytes * sbuf.partitions == sbuf.totalBytes, "core.sbuf.total_bytes",
            fmt::format("{} != partitions {} x partition_bytes {} = {}", toString(sbuf.totalBytes),
                        sbuf.partitions, toString(sbuf.partitionBytes),
                        toString(sbuf.partitionBytes * sbuf.partitions)));
  const Psum& psum = s.core.psum;
  c.require(psum.bankBytes * psum.banks == psum.partitionBytes, "core.psum.partition_bytes",
            fmt::format("{} != banks {} x bank_bytes {} = {}", toString(psum.partitionBytes),
                        psum.banks, toString(psum.bankBytes), toString(psum.bankBytes * psum.banks)));
  c.require(psum.partitions == sbuf.partitions, "core.psum.partitions",
            fmt::format("{} != core.sbuf.partitions {}", psum.partitions, sbuf.partitions));
  c.require(psum.banksReservedForDmaTranspose < psum.banks,
            "core.psum.banks_reserved_for_dma_transpose", "must leave at least one bank");

  const Hbm& hbm = s.hbm;
  c.require(hbm.stackCapacity * hbm.stacks == hbm.capacity, "hbm.capacity",
            fmt::format("{} != stacks {} x stack_capacity {}", toString(hbm.capacity), hbm.stacks,
                        toString(hbm.stackCapacity)));
  c.require(static_cast<std::int64_t>(hbm.stackOfCore.size()) == s.chip.neuronCores,
            "hbm.stack_of_core",
            fmt::format("lists {} cores; chip.neuron_cores is {}", hbm.stackOfCore.size(),
                        s.chip.neuronCores));
  for (const std::int64_t stack : hbm.stackOfCore) {
    c.require(stack < hbm.stacks, "hbm.stack_of_core",
              fmt::format("stack {} does not exist (hbm.stacks is {})", stack, hbm.stacks));
  }
}

void checkCore(const ChipSpec& s, Checker& c) {
  const Core& core = s.core;
  const TileLimits& tiles = core.tileLimits;
  c.require(core.pe.rows <= core.sbuf.partitions, "core.pe.rows",
            fmt::format("{} exceeds the {} SBUF partitions", core.pe.rows, core.sbuf.partitions));
  c.require(tiles.matmulK <= core.pe.rows, "core.tile_limits.matmul_k",
            fmt::format("{} exceeds core.pe.rows {}", tiles.matmulK, core.pe.rows));
  c.require(tiles.matmulM <= core.pe.columns, "core.tile_limits.matmul_m",
            fmt::format("{} exceeds core.pe.columns {}", tiles.matmulM, core.pe.columns));
  const Bytes outputLimit = core.pe.outputSpansBanks ? core.psum.partitionBytes
                                                     : core.psum.bankBytes;
  const char* limitName = core.pe.outputSpansBanks ? "core.psum.partition_bytes"
                                                   : "core.psum.bank_bytes";
  c.require(Bytes(tiles.matmulN * 4) <= outputLimit, "core.tile_limits.matmul_n",
            fmt::format("{} FP32 outputs ({}) exceed {} {}", tiles.matmulN,
                        toString(Bytes(tiles.matmulN * 4)), limitName, toString(outputLimit)));
  c.require(Bytes(tiles.matmulNBf16 * 2) <= outputLimit, "core.tile_limits.matmul_n_bf16",
            fmt::format("{} BF16 outputs exceed {} {}", tiles.matmulNBf16, limitName,
                        toString(outputLimit)));
  c.require(tiles.vectorP <= core.sbuf.partitions, "core.tile_limits.vector_p",
            fmt::format("{} exceeds the {} SBUF partitions", tiles.vectorP, core.sbuf.partitions));
  c.require(tiles.bnStatsF <= tiles.vectorFSbuf, "core.tile_limits.bn_stats_f",
            "exceeds core.tile_limits.vector_f_sbuf");
  c.require(!core.pe.doubleRowFp8.supported || core.pe.doubleRowFp8.contraction > core.pe.rows,
            "core.pe.double_row_fp8.contraction", "must exceed core.pe.rows when supported");
  c.require(!core.pe.psumAccumulateDtypes.empty(), "core.pe.psum_accumulate_dtypes",
            "must list at least one type");
  for (const std::string& pattern : core.pe.sparsity.patterns) {
    int m = 0;
    int n = 0;
    const char* end = pattern.data() + pattern.size();
    const auto first = std::from_chars(pattern.data(), end, m);
    const bool colon = first.ec == std::errc() && first.ptr != end && *first.ptr == ':';
    const auto second = colon ? std::from_chars(first.ptr + 1, end, n) : first;
    c.require(colon && second.ec == std::errc() && second.ptr == end && m >= 1 && m < n,
              "core.pe.sparsity.patterns",
              fmt::format("'{}' is not an M:N pattern with 1 <= M < N", pattern));
  }
  c.require(core.pool.cores * core.pool.partitionsPerCore == core.pool.lanes,
            "core.pool.partitions_per_core",
            fmt::format("cores {} x partitions_per_core {} != lanes {}", core.pool.cores,
                        core.pool.partitionsPerCore, core.pool.lanes));
  c.require(core.dve.shuffleBanks * core.dve.shuffleBankPartitions == core.dve.lanes,
            "core.dve.shuffle_bank_partitions",
            fmt::format("shuffle_banks {} x shuffle_bank_partitions {} != lanes {}",
                        core.dve.shuffleBanks, core.dve.shuffleBankPartitions, core.dve.lanes));

  const auto& rules = core.access.startPartitionRules;
  c.require(!rules.empty(), "core.access.start_partition_rules", "must have at least one rule");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const std::string path = fmt::format("core.access.start_partition_rules[{}]", i);
    c.require(i == 0 || rules[i - 1].maxPartitions < rules[i].maxPartitions, path,
              "max_partitions must increase from rule to rule");
    c.require(!rules[i].starts.empty(), path + ".starts", "must list at least one start");
    for (const std::int64_t start : rules[i].starts) {
      c.require(start + rules[i].maxPartitions <= core.sbuf.partitions, path + ".starts",
                fmt::format("start {} + {} partitions exceeds the {} partitions", start,
                            rules[i].maxPartitions, core.sbuf.partitions));
    }
  }
  c.require(rules.empty() || rules.back().maxPartitions == core.sbuf.partitions,
            "core.access.start_partition_rules",
            fmt::format("the last rule must cover all {} partitions", core.sbuf.partitions));

  const Dma& dma = core.dma;
  c.require(dma.completion.semaphoreIncrement == dma.enginesPerCore,
            "core.dma.completion.semaphore_increment",
            fmt::format("{} != core.dma.engines_per_core {} (every engine writes one increment)",
                        dma.completion.semaphoreIncrement, dma.enginesPerCore));
  c.require(dma.efficiency.overheadBoundBelow <= dma.efficiency.nearPeakAt &&
                dma.efficiency.nearPeakAt <= dma.efficiency.saturatedAt,
            "core.dma.efficiency", "needs overhead_bound_below <= near_peak_at <= saturated_at");
  c.require((dma.queueScheduling == QueueScheduling::kQos) == (dma.qosClasses > 0),
            "core.dma.qos_classes", "must be > 0 exactly when queue_scheduling is qos");
}

void checkSystem(const ChipSpec& s, Checker& c) {
  c.require(s.interconnect.neuronlink.hopLatencyMin <= s.interconnect.neuronlink.hopLatencyMax,
            "interconnect.neuronlink.hop_latency_max", "is below hop_latency_min");
  for (const auto& [name, level] :
       {std::pair{"topology.instance", &s.topology.instance},
        std::pair{"topology.ultraserver", &s.topology.ultraserver}}) {
    const bool none = level->kind == TopologyKind::kNone;
    c.require(none == (level->chips == 0), fmt::format("{}.chips", name),
              "is 0 exactly when kind is none");
    std::int64_t product = 1;
    for (const std::int64_t d : level->dims) {
      if (__builtin_mul_overflow(product, d, &product)) {
        product = -1;
        break;
      }
    }
    c.require(none ? level->dims.empty() : product == level->chips, fmt::format("{}.dims", name),
              none ? std::string("must be empty when kind is none")
                   : fmt::format("product {} != chips {}", product, level->chips));
  }
  const std::int64_t perInstance = s.topology.instance.chips;
  c.require(perInstance > 0, "topology.instance.chips", "an instance has at least one chip");
  c.require(perInstance == 0 || s.topology.ultraserver.chips % perInstance == 0,
            "topology.ultraserver.chips", "is not a whole number of instances");
}

void checkCosts(ChipSpec& s, Checker& c) {
  for (const std::string_view required : requiredCostClasses()) {
    c.require(s.costs.find(required) != nullptr, "costs.classes",
              fmt::format("missing the required class '{}'", required));
  }
  std::map<std::string, Ratio, std::less<>> numbers;
  for (const SpecEntry& entry : describeChip(s)) {
    if (entry.number && entry.record.empty()) {
      numbers.emplace(entry.path, *entry.number);
    }
  }
  const auto lookup = [&](std::string_view name) -> std::optional<Ratio> {
    const auto it = numbers.find(name);
    return it == numbers.end() ? std::nullopt : std::optional<Ratio>(it->second);
  };
  for (CostClass& costClass : s.costs.classes) {
    const std::string path = fmt::format("costs.classes.{}", costClass.name);
    c.require(!costClass.instructions.empty(), path + ".instructions", "must list instructions");
    c.require(!costClass.engines.empty(), path + ".engines", "must list engines");
    const auto fallbacks = std::count_if(costClass.variants.begin(), costClass.variants.end(),
                                         [](const CostVariant& v) { return v.when.empty(); });
    c.require(fallbacks == 1, path + ".variants",
              fmt::format("needs exactly one variant without `when:` (the fallback); found {}",
                          fallbacks));
    for (CostVariant& variant : costClass.variants) {
      const std::string variantPath = fmt::format("{}.variants.{}", path, variant.name);
      if (variant.when.engine) {
        c.require(std::find(costClass.engines.begin(), costClass.engines.end(),
                            *variant.when.engine) != costClass.engines.end(),
                  variantPath + ".when.engine", "is not one of the class's engines");
      }
      if (const Status bound = variant.cycles.bind(lookup); !bound.ok()) {
        c.fail(variantPath + ".cycles", bound.message());
      }
    }
  }
}

}  // namespace

Status finalizeChip(ChipSpec& spec) {
  Checker checker(spec);
  checkChipAndMemories(spec, checker);
  checkCore(spec, checker);
  checkSystem(spec, checker);
  checkCosts(spec, checker);
  return checker.status();
}

}  // namespace trn::spec::detail
