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

/// Collects cross-field errors. A rule names the keys it involves; the error is reported at the
/// first of them written by the file being loaded (for a what-if chip, the value it overrode),
/// else at the first key.
class Checker {
 public:
  explicit Checker(const ChipSpec& spec) : spec_(spec) {}

  /// Records an error unless `ok`; `keys` are the involved key paths, the primary one first.
  void require(bool ok, std::initializer_list<std::string_view> keys, std::string_view message) {
    if (!ok) {
      fail(std::vector<std::string_view>(keys), message);
    }
  }

  void fail(const std::vector<std::string_view>& keys, std::string_view message) {
    std::string_view key = keys.front();
    for (const std::string_view candidate : keys) {
      const Provenance* p = spec_.provenanceOf(candidate);
      if (p != nullptr && p->file == spec_.file) {
        key = candidate;
        break;
      }
    }
    const Provenance* at = spec_.provenanceOf(key);
    errors_.push_back(at == nullptr
                          ? fmt::format("{}: {}: {}", spec_.file, key, message)
                          : fmt::format("{}:{}:{}: {}: {}", at->file, std::max(at->line, 1),
                                        std::max(at->column, 1), key, message));
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
            {"chip.logical_cores.default_size", "chip.logical_cores.sizes"},
            fmt::format("default_size {} is not one of chip.logical_cores.sizes [{}]",
                        lnc.defaultSize, fmt::join(lnc.sizes, ", ")));
  for (const std::int64_t size : lnc.sizes) {
    c.require(s.chip.neuronCores % size == 0, {"chip.logical_cores.sizes", "chip.neuron_cores"},
              fmt::format("LNC {} does not divide chip.neuron_cores {}", size,
                          s.chip.neuronCores));
  }

  const Sbuf& sbuf = s.core.sbuf;
  c.require(sbuf.partitionBytes * sbuf.partitions == sbuf.totalBytes,
            {"core.sbuf.total_bytes", "core.sbuf.partition_bytes", "core.sbuf.partitions"},
            fmt::format("core.sbuf.total_bytes {} != core.sbuf.partitions {} x "
                        "core.sbuf.partition_bytes {} = {}",
                        toString(sbuf.totalBytes), sbuf.partitions,
                        toString(sbuf.partitionBytes),
                        toString(sbuf.partitionBytes * sbuf.partitions)));
  const Psum& psum = s.core.psum;
  c.require(psum.bankBytes * psum.banks == psum.partitionBytes,
            {"core.psum.partition_bytes", "core.psum.banks", "core.psum.bank_bytes"},
            fmt::format("core.psum.partition_bytes {} != core.psum.banks {} x "
                        "core.psum.bank_bytes {} = {}",
                        toString(psum.partitionBytes), psum.banks, toString(psum.bankBytes),
                        toString(psum.bankBytes * psum.banks)));
  c.require(psum.partitions == sbuf.partitions, {"core.psum.partitions", "core.sbuf.partitions"},
            fmt::format("core.psum.partitions {} != core.sbuf.partitions {}", psum.partitions,
                        sbuf.partitions));
  c.require(psum.banksReservedForDmaTranspose < psum.banks,
            {"core.psum.banks_reserved_for_dma_transpose", "core.psum.banks"},
            "must leave at least one of core.psum.banks for matmuls");

  const Hbm& hbm = s.hbm;
  c.require(hbm.stackCapacity * hbm.stacks == hbm.capacity,
            {"hbm.capacity", "hbm.stacks", "hbm.stack_capacity"},
            fmt::format("hbm.capacity {} != hbm.stacks {} x hbm.stack_capacity {}",
                        toString(hbm.capacity), hbm.stacks, toString(hbm.stackCapacity)));
  c.require(static_cast<std::int64_t>(hbm.stackOfCore.size()) == s.chip.neuronCores,
            {"hbm.stack_of_core", "chip.neuron_cores"},
            fmt::format("hbm.stack_of_core lists {} cores; chip.neuron_cores is {}",
                        hbm.stackOfCore.size(), s.chip.neuronCores));
  for (const std::int64_t stack : hbm.stackOfCore) {
    c.require(stack < hbm.stacks, {"hbm.stack_of_core", "hbm.stacks"},
              fmt::format("stack {} does not exist (hbm.stacks is {})", stack, hbm.stacks));
  }
}

void checkCore(const ChipSpec& s, Checker& c) {
  const Core& core = s.core;
  const TileLimits& tiles = core.tileLimits;
  c.require(core.pe.rows <= core.sbuf.partitions, {"core.pe.rows", "core.sbuf.partitions"},
            fmt::format("core.pe.rows {} exceeds core.sbuf.partitions {}", core.pe.rows,
                        core.sbuf.partitions));
  c.require(tiles.matmulK <= core.pe.rows, {"core.tile_limits.matmul_k", "core.pe.rows"},
            fmt::format("core.tile_limits.matmul_k {} exceeds core.pe.rows {}", tiles.matmulK,
                        core.pe.rows));
  c.require(tiles.matmulM <= core.pe.columns, {"core.tile_limits.matmul_m", "core.pe.columns"},
            fmt::format("core.tile_limits.matmul_m {} exceeds core.pe.columns {}", tiles.matmulM,
                        core.pe.columns));
  const bool spans = core.pe.outputSpansBanks;
  const Bytes outputLimit = spans ? core.psum.partitionBytes : core.psum.bankBytes;
  const std::string_view limitKey = spans ? "core.psum.partition_bytes" : "core.psum.bank_bytes";
  c.require(Bytes(tiles.matmulN * 4) <= outputLimit,
            {"core.tile_limits.matmul_n", limitKey, "core.pe.output_spans_banks"},
            fmt::format("core.tile_limits.matmul_n {} FP32 outputs ({}) exceed {} {}{}",
                        tiles.matmulN, toString(Bytes(tiles.matmulN * 4)), limitKey,
                        toString(outputLimit),
                        spans ? "" : " (core.pe.output_spans_banks is false)"));
  c.require(Bytes(tiles.matmulNBf16 * 2) <= outputLimit,
            {"core.tile_limits.matmul_n_bf16", limitKey, "core.pe.output_spans_banks"},
            fmt::format("core.tile_limits.matmul_n_bf16 {} BF16 outputs exceed {} {}",
                        tiles.matmulNBf16, limitKey, toString(outputLimit)));
  c.require(tiles.vectorP <= core.sbuf.partitions,
            {"core.tile_limits.vector_p", "core.sbuf.partitions"},
            fmt::format("core.tile_limits.vector_p {} exceeds core.sbuf.partitions {}",
                        tiles.vectorP, core.sbuf.partitions));
  c.require(tiles.bnStatsF <= tiles.vectorFSbuf,
            {"core.tile_limits.bn_stats_f", "core.tile_limits.vector_f_sbuf"},
            "core.tile_limits.bn_stats_f exceeds core.tile_limits.vector_f_sbuf");
  c.require(!core.pe.doubleRowFp8.supported || core.pe.doubleRowFp8.contraction > core.pe.rows,
            {"core.pe.double_row_fp8.contraction", "core.pe.rows"},
            "must exceed core.pe.rows when double-row mode is supported");
  c.require(!core.pe.psumAccumulateDtypes.empty(), {"core.pe.psum_accumulate_dtypes"},
            "must list at least one type");
  for (const std::string& pattern : core.pe.sparsity.patterns) {
    int m = 0;
    int n = 0;
    const char* end = pattern.data() + pattern.size();
    const auto first = std::from_chars(pattern.data(), end, m);
    const bool colon = first.ec == std::errc() && first.ptr != end && *first.ptr == ':';
    const auto second = colon ? std::from_chars(first.ptr + 1, end, n) : first;
    c.require(colon && second.ec == std::errc() && second.ptr == end && m >= 1 && m < n,
              {"core.pe.sparsity.patterns"},
              fmt::format("'{}' is not an M:N pattern with 1 <= M < N", pattern));
  }
  c.require(core.pool.cores * core.pool.partitionsPerCore == core.pool.lanes,
            {"core.pool.partitions_per_core", "core.pool.cores", "core.pool.lanes"},
            fmt::format("core.pool.cores {} x core.pool.partitions_per_core {} != "
                        "core.pool.lanes {}",
                        core.pool.cores, core.pool.partitionsPerCore, core.pool.lanes));
  c.require(core.dve.shuffleBanks * core.dve.shuffleBankPartitions == core.dve.lanes,
            {"core.dve.shuffle_bank_partitions", "core.dve.shuffle_banks", "core.dve.lanes"},
            fmt::format("core.dve.shuffle_banks {} x core.dve.shuffle_bank_partitions {} != "
                        "core.dve.lanes {}",
                        core.dve.shuffleBanks, core.dve.shuffleBankPartitions, core.dve.lanes));

  const auto& rules = core.access.startPartitionRules;
  c.require(!rules.empty(), {"core.access.start_partition_rules"}, "must have at least one rule");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const std::string path = fmt::format("core.access.start_partition_rules[{}]", i);
    c.require(i == 0 || rules[i - 1].maxPartitions < rules[i].maxPartitions, {path},
              "max_partitions must increase from rule to rule");
    c.require(!rules[i].starts.empty(), {path}, "must list at least one start");
    for (const std::int64_t start : rules[i].starts) {
      c.require(start + rules[i].maxPartitions <= core.sbuf.partitions,
                {path, "core.sbuf.partitions"},
                fmt::format("start {} + {} partitions exceeds core.sbuf.partitions {}", start,
                            rules[i].maxPartitions, core.sbuf.partitions));
    }
  }
  c.require(rules.empty() || rules.back().maxPartitions == core.sbuf.partitions,
            {"core.access.start_partition_rules", "core.sbuf.partitions"},
            fmt::format("the last rule must cover all core.sbuf.partitions ({})",
                        core.sbuf.partitions));

  const Dma& dma = core.dma;
  c.require(dma.completion.semaphoreIncrement == dma.enginesPerCore,
            {"core.dma.completion.semaphore_increment", "core.dma.engines_per_core"},
            fmt::format("core.dma.completion.semaphore_increment {} != "
                        "core.dma.engines_per_core {} (every engine writes one increment)",
                        dma.completion.semaphoreIncrement, dma.enginesPerCore));
  c.require(dma.efficiency.overheadBoundBelow <= dma.efficiency.nearPeakAt &&
                dma.efficiency.nearPeakAt <= dma.efficiency.saturatedAt,
            {"core.dma.efficiency.near_peak_at", "core.dma.efficiency.overhead_bound_below",
             "core.dma.efficiency.saturated_at"},
            "needs overhead_bound_below <= near_peak_at <= saturated_at");
  // The DMA model divides a transpose's bytes by its efficiency; 0 only marks "no transpose".
  const Ratio minEfficiency = Ratio::make(1, 100).value();
  for (const auto& [key, efficiency] :
       {std::pair{"core.dma.transpose.hbm_to_sbuf_efficiency", dma.transpose.hbmToSbufEfficiency},
        std::pair{"core.dma.transpose.sbuf_to_sbuf_efficiency",
                  dma.transpose.sbufToSbufEfficiency}}) {
    c.require(!dma.transpose.supported || !(efficiency < minEfficiency),
              {key, "core.dma.transpose.supported"},
              fmt::format("{} is {}; the DMA model divides by it, so it must be >= 0.01 when "
                          "core.dma.transpose.supported is true",
                          key, efficiency.toString()));
  }
  c.require((dma.queueScheduling == QueueScheduling::kQos) == (dma.qosClasses > 0),
            {"core.dma.qos_classes", "core.dma.queue_scheduling"},
            "core.dma.qos_classes must be > 0 exactly when core.dma.queue_scheduling is qos");
}

void checkSystem(const ChipSpec& s, Checker& c) {
  c.require(s.interconnect.neuronlink.hopLatencyMin <= s.interconnect.neuronlink.hopLatencyMax,
            {"interconnect.neuronlink.hop_latency_max", "interconnect.neuronlink.hop_latency_min"},
            "hop_latency_max is below hop_latency_min");
  for (const auto& [name, level] :
       {std::pair{"topology.instance", &s.topology.instance},
        std::pair{"topology.ultraserver", &s.topology.ultraserver}}) {
    const bool none = level->kind == TopologyKind::kNone;
    const std::string chips = fmt::format("{}.chips", name);
    const std::string kind = fmt::format("{}.kind", name);
    const std::string dims = fmt::format("{}.dims", name);
    c.require(none == (level->chips == 0), {chips, kind},
              fmt::format("{} is 0 exactly when {} is none", chips, kind));
    std::int64_t product = 1;
    for (const std::int64_t d : level->dims) {
      if (__builtin_mul_overflow(product, d, &product)) {
        product = -1;
        break;
      }
    }
    c.require(none ? level->dims.empty() : product == level->chips, {dims, chips},
              none ? fmt::format("{} must be empty when {} is none", dims, kind)
                   : fmt::format("the product of {} ({}) != {} {}", dims, product, chips,
                                 level->chips));
  }
  const std::int64_t perInstance = s.topology.instance.chips;
  c.require(perInstance > 0, {"topology.instance.chips"}, "an instance has at least one chip");
  c.require(perInstance == 0 || s.topology.ultraserver.chips % perInstance == 0,
            {"topology.ultraserver.chips", "topology.instance.chips"},
            "is not a whole number of instances (topology.instance.chips)");
}

void checkCosts(ChipSpec& s, Checker& c) {
  for (const std::string_view required : requiredCostClasses()) {
    c.require(s.costs.find(required) != nullptr, {"costs.classes"},
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
    const std::string instructions = path + ".instructions";
    const std::string engines = path + ".engines";
    const std::string variants = path + ".variants";
    c.require(!costClass.instructions.empty(), {instructions}, "must list instructions");
    c.require(!costClass.engines.empty(), {engines}, "must list engines");
    const auto fallbacks = std::count_if(costClass.variants.begin(), costClass.variants.end(),
                                         [](const CostVariant& v) { return v.when.empty(); });
    if (fallbacks != 1) {
      std::vector<std::string> keys = {variants};
      for (const CostVariant& v : costClass.variants) {
        if (v.when.empty()) {
          keys.push_back(fmt::format("{}.{}", variants, v.name));
        }
      }
      c.fail(std::vector<std::string_view>(keys.begin(), keys.end()),
             fmt::format("needs exactly one variant without `when:` (the fallback); found {}",
                         fallbacks));
    }
    for (CostVariant& variant : costClass.variants) {
      const std::string variantPath = fmt::format("{}.variants.{}", path, variant.name);
      const std::string engine = variantPath + ".when.engine";
      const std::string cycles = variantPath + ".cycles";
      if (variant.when.engine) {
        c.require(std::find(costClass.engines.begin(), costClass.engines.end(),
                            *variant.when.engine) != costClass.engines.end(),
                  {engine, engines}, fmt::format("is not one of {}", engines));
      }
      if (const Status bound = variant.cycles.bind(lookup); !bound.ok()) {
        c.fail({cycles}, bound.message());
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
