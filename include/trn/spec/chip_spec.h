// ChipSpec: the typed hardware description of one chip generation (or a what-if chip), loaded
// from configs/chips/<name>.yaml by loader.h. Every member mirrors one YAML key (lowerCamel here,
// snake_case in YAML); the schema that maps them, with units, ranges and documentation, is
// declared once in src/spec/chip_schema.cpp. Where each value came from (its cited source, an
// alternative value from a conflicting source, the file and line) is kept in `provenance`.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/ratio.h"
#include "trn/base/units.h"
#include "trn/numerics/dtype.h"
#include "trn/spec/cost_model.h"
#include "trn/spec/enums.h"

namespace trn::spec {

/// Where a value of the description came from.
struct Provenance {
  std::string source;       ///< cited source, e.g. "N2 engine table" or "derived: 8 x 16 x ..."
  std::string alternative;  ///< a conflicting value/source that was not chosen, if any
  std::string file;         ///< file the value was read from
  int line = 0;             ///< 1-based line of the value in `file` (0 = unknown)
  int column = 0;           ///< 1-based column
};

/// Provenance by full key path ("core.sbuf.partition_bytes").
using ProvenanceMap = std::map<std::string, Provenance, std::less<>>;

/// The provenance of `path` in `map`, or of its nearest ancestor that has one; null if none.
const Provenance* provenanceAt(const ProvenanceMap& map, std::string_view path);

/// Documented peak throughput figures, in TFLOPS.
struct PeakTflops {
  Ratio mx;        ///< MXFP8/MXFP4 dense (0 = no MX support)
  Ratio fp8;       ///< FP8 dense
  Ratio bf16;      ///< BF16/FP16/TF32 dense
  Ratio fp32;      ///< FP32 dense
  Ratio sparse;    ///< structured-sparse (0 = no sparse mode)
};

/// Logical NeuronCore (LNC) configurations.
struct LogicalCores {
  std::vector<std::int64_t> sizes;  ///< physical cores per logical core that can be configured
  std::int64_t defaultSize = 0;
};

/// Chip-level facts (YAML `chip`).
struct ChipInfo {
  std::string generation;   ///< e.g. "Trainium2"
  std::string coreVersion;  ///< e.g. "NeuronCore-v3"
  std::int64_t neuronCores = 0;
  std::int64_t dies = 0;
  LogicalCores logicalCores;
  std::int64_t collectiveCores = 0;
  std::int64_t hostDmaEngines = 0;
  BytesPerSecond dmaBandwidth;
  std::int64_t memoryPoolChips = 0;
  DmaOrdering dmaOrdering = DmaOrdering::kWriteAfterWrite;
  PeakTflops peakTflops;
};

/// Elements per cycle across all lanes, by data-type class.
struct ElementRates {
  std::int64_t fp8 = 0;    ///< FP8 types
  std::int64_t fp16 = 0;   ///< BF16/FP16
  std::int64_t other = 0;  ///< FP32 and integer types
};

/// TensorE input rates per cycle (elements entering the array).
struct PeInputRates {
  std::int64_t mx = 0;      ///< MXFP8/MXFP4 (0 = unsupported)
  std::int64_t fp8 = 0;
  std::int64_t fp16 = 0;    ///< BF16/FP16/TF32
  std::int64_t fp32 = 0;
  std::int64_t sparse = 0;  ///< structured-sparse mode (0 = unsupported)
};

/// FP8 double-row mode: two FP8 multiplies per PE per cycle.
struct DoubleRowMode {
  bool supported = false;
  std::int64_t contraction = 0;       ///< contraction per instruction
  std::int64_t throughputFactor = 0;  ///< versus BF16
};

/// TensorE transpose mode.
struct PeTransposeMode {
  bool bitAccurate = false;     ///< NaN/Inf preserved
  std::int64_t fp32Speedup = 0; ///< FP32 transpose versus an FP32 identity matmul
};

/// Several small matmuls sharing the array.
struct PeTiling {
  std::vector<std::int64_t> rowTileSizes;
  std::vector<std::int64_t> columnTileSizes;
  std::int64_t granularity = 0;  ///< tile_position/tile_size multiple
};

/// M:N structured sparsity of the stationary operand.
struct PeSparsity {
  std::vector<std::string> patterns;  ///< "M:N" strings
  std::int64_t maxCompression = 0;
};

/// dI/dt power throttling of TensorE after idle.
struct PowerThrottle {
  bool enabled = false;
  Ratio startFraction;   ///< utilisation limit right after idle
  Picoseconds rampTime;  ///< time to ramp to full utilisation
  Picoseconds rearmWindow;
  Ratio rearmThreshold;  ///< utilisation below which, over a window, the limit re-engages
};

/// Tensor engine (YAML `core.pe`).
struct TensorEngine {
  Hertz clock;
  std::int64_t rows = 0;
  std::int64_t columns = 0;
  PeInputRates inputElementsPerCycle;
  std::int64_t outputElementsPerCycle = 0;
  std::int64_t fp32CostFactor = 0;
  std::int64_t mmMinInitiationInterval = 0;
  std::int64_t fastLoadStationarySpeedup = 0;
  bool backgroundLoadStationary = false;
  DoubleRowMode doubleRowFp8;
  std::int64_t mxContraction = 0;
  PeTransposeMode transpose;
  PeTiling tiling;
  PeSparsity sparsity;
  std::vector<DType> psumAccumulateDtypes;
  bool outputSpansBanks = false;
  PeakTflops peakTflops;
  PowerThrottle powerThrottle;
};

/// Fields shared by the Vector, Scalar and GpSimd engines.
struct StreamEngine {
  Hertz clock;
  std::int64_t lanes = 0;
  ElementRates elementsPerCycle;
  Ratio peakTflopsFp32;  ///< documented; not used for timing (hardware-trn2.md §4)
};

/// Vector performance mode speed-ups (applied by cost-class variants).
struct VectorPerfMode {
  std::int64_t fastFactor = 0;  ///< SBUF in/out, BF16/FP16, contiguous
  std::int64_t factor = 0;      ///< non-contiguous, one PSUM operand, or tensor_tensor
};

/// Vector engine (YAML `core.dve`).
struct VectorEngine : StreamEngine {
  VectorPerfMode perfMode;
  std::int64_t shuffleBanks = 0;
  std::int64_t shuffleBankPartitions = 0;
};

/// Scalar engine (YAML `core.act`).
struct ScalarEngine : StreamEngine {
  std::int64_t perfModeFactor = 0;
  std::int64_t accumulators = 0;
};

/// GpSimd engine (YAML `core.pool`).
struct GpSimdEngine : StreamEngine {
  std::int64_t cores = 0;
  std::int64_t simdBits = 0;
  Bytes tcmBytes;
  std::int64_t partitionsPerCore = 0;
  BytesPerSecond dmaBandwidth;
};

/// Sync engine (YAML `core.sp`).
struct SyncEngine {
  Hertz clock;
};

/// Most registers per sequencer, and semaphores and events per core, a description may declare:
/// they are indexed by int32 instruction fields and size per-core arrays (the race detector keeps
/// a 96-byte vector clock per semaphore). Trn1-Trn3 have 64 registers and 256 semaphores.
inline constexpr std::int64_t kMaxSequencerResources = 65536;

/// Most DMA queues of one core (`core.dma.queues_per_engine`): race detection keeps 24 clock
/// slots, the 5 engines, at most 18 queues and the count of core barriers seen (kMaxAgents in
/// core/hazard_detector.h). Trn1-Trn3 have 16.
inline constexpr std::int64_t kMaxDmaQueuesPerCore = 18;

/// Sequencer resources (YAML `core.sequencer`).
struct Sequencer {
  std::int64_t registers = 0;
  std::int64_t registerBits = 0;
  std::int64_t semaphores = 0;
  std::int64_t semaphoreBits = 0;
  std::int64_t events = 0;
};

/// State buffer (YAML `core.sbuf`).
struct Sbuf {
  std::int64_t partitions = 0;
  Bytes partitionBytes;
  Bytes totalBytes;
  std::vector<std::string> layouts;
};

/// Partial-sum buffer (YAML `core.psum`).
struct Psum {
  std::int64_t partitions = 0;
  Bytes partitionBytes;
  std::int64_t banks = 0;
  Bytes bankBytes;
  std::int64_t banksReservedForDmaTranspose = 0;
};

/// Allowed start partitions for accesses of up to `maxPartitions` partitions.
struct StartPartitionRule {
  std::int64_t maxPartitions = 0;
  std::vector<std::int64_t> starts;
};

/// SBUF/PSUM access-pattern rules (YAML `core.access`).
struct AccessRules {
  std::int64_t maxFreeDims = 0;
  std::int64_t freeDimMaxSize = 0;
  std::int64_t freeDimMinStride = 0;
  std::int64_t freeDimMaxStride = 0;
  std::int64_t portElementsPerCycle = 0;
  Bytes stridePenaltyAbove;
  std::int64_t stridePenaltyFactor = 0;
  std::int64_t accessOverheadCycles = 0;
  std::vector<StartPartitionRule> startPartitionRules;
};

/// Tile-size limits (YAML `core.tile_limits`).
struct TileLimits {
  std::int64_t matmulK = 0;
  std::int64_t matmulM = 0;
  std::int64_t matmulN = 0;
  std::int64_t matmulNBf16 = 0;
  std::int64_t vectorP = 0;
  std::int64_t vectorFSbuf = 0;
  std::int64_t vectorFPsum = 0;
  std::int64_t bnStatsF = 0;
};

/// DMA efficiency knee, in bytes per partition.
struct DmaEfficiency {
  Bytes overheadBoundBelow;
  Bytes nearPeakAt;
  Bytes saturatedAt;
  Bytes recommendedTransfer;
};

/// Hardware DMA descriptors.
struct DmaDescriptors {
  Bytes descriptorBytes;
  Bytes maxBufferBytes;
  std::int64_t maxPerPacket = 0;
  std::int64_t ringMaxDescriptors = 0;
  Bytes ringAlignment;
};

/// Descriptor generation.
struct DmaDge {
  std::int64_t hardwareBlocks = 0;
  Picoseconds instructionCost;
  bool hardwareGatherScatter = false;
};

/// DMA transpose.
struct DmaTranspose {
  bool supported = false;
  std::vector<std::int64_t> elementBytes;
  Ratio hbmToSbufEfficiency;
  Ratio sbufToSbufEfficiency;
};

/// Completion signalling.
struct DmaCompletion {
  std::int64_t semaphoreIncrement = 0;
  Bytes semaphoreWriteBytes;
};

/// DMA subsystem of one core (YAML `core.dma`).
struct Dma {
  std::int64_t enginesPerCore = 0;
  std::int64_t queuesPerEngine = 0;
  BytesPerSecond engineBandwidth;
  Picoseconds fixedCost;
  QueueScheduling queueScheduling = QueueScheduling::kRoundRobin;
  std::int64_t qosClasses = 0;
  Ratio computeEfficiency;
  DmaEfficiency efficiency;
  DmaDescriptors descriptors;
  DmaDge dge;
  DmaTranspose transpose;
  DmaCompletion completion;
};

/// One NeuronCore (YAML `core`).
struct Core {
  TensorEngine pe;
  ScalarEngine act;
  VectorEngine dve;
  GpSimdEngine pool;
  SyncEngine sp;
  Sequencer sequencer;
  Sbuf sbuf;
  Psum psum;
  AccessRules access;
  TileLimits tileLimits;
  Dma dma;
};

/// Device memory (YAML `hbm`).
struct Hbm {
  std::int64_t stacks = 0;
  Bytes stackCapacity;
  Bytes capacity;
  BytesPerSecond bandwidth;
  std::vector<std::int64_t> stackOfCore;  ///< HBM stack index of each physical core

  /// The stack physical core `core` sits on (0 for a core the chip does not have, which
  /// NeuronCore::create rejects before anything asks).
  [[nodiscard]] std::int32_t stackOf(std::int64_t core) const {
    return core >= 0 && static_cast<std::size_t>(core) < stackOfCore.size()
               ? static_cast<std::int32_t>(stackOfCore[static_cast<std::size_t>(core)])
               : 0;
  }
};

/// Chip-to-chip links (YAML `interconnect.neuronlink`).
struct NeuronLink {
  std::int64_t version = 0;
  BytesPerSecond chipBandwidth;
  std::int64_t linksPerChip = 0;
  BytesPerSecond linkBandwidth;
  BytesPerSecond intraInstanceBandwidth;
  BytesPerSecond interInstanceBandwidth;
  BandwidthCounting counting = BandwidthCounting::kPerDirection;
  Picoseconds hopLatencyMin;
  Picoseconds hopLatencyMax;
};

/// Network between instances (YAML `interconnect.efa`).
struct Efa {
  BytesPerSecond instanceBandwidth;
  BytesPerSecond chipBandwidth;
  Picoseconds interNodeLatency;
};

/// YAML `interconnect`.
struct Interconnect {
  NeuronLink neuronlink;
  Efa efa;
};

/// One level of the system (an instance or an UltraServer).
struct SystemLevel {
  std::string name;
  std::int64_t chips = 0;
  TopologyKind kind = TopologyKind::kNone;
  std::vector<std::int64_t> dims;
  std::int64_t interInstanceLinksPerChip = 0;
  BytesPerSecond interInstanceLinkBandwidth;
};

/// YAML `topology`.
struct Topology {
  SystemLevel instance;
  SystemLevel ultraserver;
};

/// The whole description of one chip.
struct ChipSpec {
  std::int64_t version = 0;
  std::string name;
  std::string description;
  std::string base;  ///< the chip this one overrides ("" for a full description)
  ChipInfo chip;
  Core core;
  Hbm hbm;
  Interconnect interconnect;
  Topology topology;
  CostModel costs;

  std::string file;          ///< the file it was loaded from
  ProvenanceMap provenance;  ///< by full key path, for every value and record

  /// The provenance of `path`, or of its nearest ancestor that has one; null if none.
  [[nodiscard]] const Provenance* provenanceOf(std::string_view path) const;
};

}  // namespace trn::spec
