// Every key of a chip description, declared once: YAML name, member, type/unit, allowed range
// and a one-line meaning. Loading, validation of single values, `spec show`, `spec diff` and the
// schema reference in docs/spec.md are all derived from these declarations. Cross-field rules
// live in validate.cpp.
#include "chip_schema.h"

#include "chip_ranges.h"

namespace trn::spec::detail {
namespace {

/// The schema of T; one specialisation per struct below.
template <typename T>
const Schema<T>& schemaOf();

template <>
const Schema<PeakTflops>& schemaOf() {
  static const Schema<PeakTflops> s = [] {
    Schema<PeakTflops> t;
    t.leaf("mx", &PeakTflops::mx, "MXFP8/MXFP4 dense peak (0 = no MX matmul)")
        .min(kZero).unit("TFLOPS");
    t.leaf("fp8", &PeakTflops::fp8, "FP8 dense peak").min(kZero).unit("TFLOPS");
    t.leaf("bf16", &PeakTflops::bf16, "BF16/FP16/TF32 dense peak").min(kZero).unit("TFLOPS");
    t.leaf("fp32", &PeakTflops::fp32, "FP32 dense peak").min(kZero).unit("TFLOPS");
    t.leaf("sparse", &PeakTflops::sparse, "structured-sparse peak (0 = no sparse mode)")
        .min(kZero).unit("TFLOPS");
    return t;
  }();
  return s;
}

template <>
const Schema<LogicalCores>& schemaOf() {
  static const Schema<LogicalCores> s = [] {
    Schema<LogicalCores> t;
    t.leaf("sizes", &LogicalCores::sizes, "physical cores per logical core (LNC) that can be set")
        .range(1, 64);
    t.leaf("default_size", &LogicalCores::defaultSize, "LNC used when none is configured")
        .range(1, 64);
    return t;
  }();
  return s;
}

template <>
const Schema<ChipInfo>& schemaOf() {
  static const Schema<ChipInfo> s = [] {
    Schema<ChipInfo> t;
    t.leaf("generation", &ChipInfo::generation, "product name of the chip");
    t.leaf("core_version", &ChipInfo::coreVersion, "NeuronCore version");
    t.leaf("neuron_cores", &ChipInfo::neuronCores, "physical NeuronCores per chip").range(1, 1024);
    t.leaf("dies", &ChipInfo::dies, "silicon dies per package").range(1, 64);
    t.nested("logical_cores", &ChipInfo::logicalCores, schemaOf<LogicalCores>(),
             "logical NeuronCore (LNC) modes");
    t.leaf("collective_cores", &ChipInfo::collectiveCores,
           "collective-communication cores (TOP_SP) that orchestrate collectives")
        .range(0, 1024);
    t.leaf("host_dma_engines", &ChipInfo::hostDmaEngines, "host-to-device DMA engines")
        .range(0, 1024);
    t.leaf("dma_bandwidth", &ChipInfo::dmaBandwidth, "documented aggregate DMA bandwidth")
        .range(BytesPerSecond(0), kMaxBandwidth);
    t.leaf("memory_pool_chips", &ChipInfo::memoryPoolChips,
           "chips whose HBM can form one pool over NeuronLink").min(1).limit(kMaxCount);
    t.leaf("dma_ordering", &ChipInfo::dmaOrdering, "ordering guarantee of DMA writes");
    t.nested("peak_tflops", &ChipInfo::peakTflops, schemaOf<PeakTflops>(),
             "documented chip-level peak throughput");
    return t;
  }();
  return s;
}

template <>
const Schema<ElementRates>& schemaOf() {
  static const Schema<ElementRates> s = [] {
    Schema<ElementRates> t;
    t.leaf("fp8", &ElementRates::fp8, "FP8 elements per cycle, all lanes")
        .min(0).limit(kMaxCount).unit("elements/cycle");
    t.leaf("fp16", &ElementRates::fp16, "BF16/FP16 elements per cycle, all lanes")
        .min(0).limit(kMaxCount).unit("elements/cycle");
    t.leaf("other", &ElementRates::other, "FP32/integer elements per cycle, all lanes")
        .min(0).limit(kMaxCount).unit("elements/cycle");
    return t;
  }();
  return s;
}

template <>
const Schema<PeInputRates>& schemaOf() {
  static const Schema<PeInputRates> s = [] {
    Schema<PeInputRates> t;
    t.leaf("mx", &PeInputRates::mx, "MXFP8/MXFP4 input elements per cycle (0 = unsupported)")
        .min(0).limit(kMaxCount).unit("elements/cycle");
    t.leaf("fp8", &PeInputRates::fp8, "dense FP8 input elements per cycle")
        .min(0).limit(kMaxCount).unit("elements/cycle");
    t.leaf("fp16", &PeInputRates::fp16, "BF16/FP16/TF32 input elements per cycle")
        .min(0).limit(kMaxCount).unit("elements/cycle");
    t.leaf("fp32", &PeInputRates::fp32, "FP32 input elements per cycle")
        .min(0).limit(kMaxCount).unit("elements/cycle");
    t.leaf("sparse", &PeInputRates::sparse, "sparse-mode input elements per cycle (0 = none)")
        .min(0).limit(kMaxCount).unit("elements/cycle");
    return t;
  }();
  return s;
}

template <>
const Schema<DoubleRowMode>& schemaOf() {
  static const Schema<DoubleRowMode> s = [] {
    Schema<DoubleRowMode> t;
    t.leaf("supported", &DoubleRowMode::supported, "FP8 double-row mode exists");
    t.leaf("contraction", &DoubleRowMode::contraction, "contraction (K) per instruction")
        .min(1).limit(kMaxCount);
    t.leaf("throughput_factor", &DoubleRowMode::throughputFactor, "throughput versus BF16")
        .range(1, 64);
    return t;
  }();
  return s;
}

template <>
const Schema<PeTransposeMode>& schemaOf() {
  static const Schema<PeTransposeMode> s = [] {
    Schema<PeTransposeMode> t;
    t.leaf("bit_accurate", &PeTransposeMode::bitAccurate,
           "transpose mode preserves bits (NaN/Inf); false = identity matmul");
    t.leaf("fp32_speedup", &PeTransposeMode::fp32Speedup,
           "FP32 transpose speed-up over an FP32 matmul of the same shape").range(1, 64);
    return t;
  }();
  return s;
}

template <>
const Schema<PeTiling>& schemaOf() {
  static const Schema<PeTiling> s = [] {
    Schema<PeTiling> t;
    t.leaf("row_tile_sizes", &PeTiling::rowTileSizes, "row tile sizes (rows per tile)")
        .range(1, 4096);
    t.leaf("column_tile_sizes", &PeTiling::columnTileSizes, "column tile sizes").range(1, 4096);
    t.leaf("granularity", &PeTiling::granularity, "tile_position/tile_size multiple")
        .range(1, 4096);
    return t;
  }();
  return s;
}

template <>
const Schema<PeSparsity>& schemaOf() {
  static const Schema<PeSparsity> s = [] {
    Schema<PeSparsity> t;
    t.leaf("patterns", &PeSparsity::patterns, "supported M:N patterns of the stationary operand");
    t.leaf("max_compression", &PeSparsity::maxCompression, "largest compression factor")
        .range(1, 64);
    return t;
  }();
  return s;
}

template <>
const Schema<PowerThrottle>& schemaOf() {
  static const Schema<PowerThrottle> s = [] {
    Schema<PowerThrottle> t;
    t.leaf("enabled", &PowerThrottle::enabled, "model dI/dt throttling of TensorE");
    t.leaf("start_fraction", &PowerThrottle::startFraction,
           "utilisation limit right after idle (PE time is divided by it)")
        .range(kOnePercent, kOne);
    t.leaf("ramp_time", &PowerThrottle::rampTime, "time to ramp from start_fraction to 100%")
        .range(Picoseconds(0), kMaxLatency);
    t.leaf("rearm_window", &PowerThrottle::rearmWindow,
           "window over which low utilisation re-engages the limit")
        .range(Picoseconds(0), kMaxLatency);
    t.leaf("rearm_threshold", &PowerThrottle::rearmThreshold,
           "utilisation below which (over a window) the limit re-engages").range(kZero, kOne);
    return t;
  }();
  return s;
}

template <>
const Schema<TensorEngine>& schemaOf() {
  static const Schema<TensorEngine> s = [] {
    Schema<TensorEngine> t;
    t.leaf("clock", &TensorEngine::clock, "PE clock").range(kMinClock, kMaxClock);
    t.leaf("rows", &TensorEngine::rows, "PE array rows (contraction/partition axis)")
        .range(1, 4096);
    t.leaf("columns", &TensorEngine::columns, "PE array columns").range(1, 4096);
    t.nested("input_elements_per_cycle", &TensorEngine::inputElementsPerCycle,
             schemaOf<PeInputRates>(), "input data rate by data-type class");
    t.leaf("output_elements_per_cycle", &TensorEngine::outputElementsPerCycle,
           "PSUM output elements per cycle").min(1).limit(kMaxCount).unit("elements/cycle");
    t.leaf("fp32_cost_factor", &TensorEngine::fp32CostFactor, "FP32 matmul cost versus BF16")
        .range(1, 64);
    t.leaf("mm_min_initiation_interval", &TensorEngine::mmMinInitiationInterval,
           "minimum cycles between MultiplyMoving instructions (MM_INIT_LATENCY)")
        .range(0, kMaxCycles).unit("cycles");
    t.leaf("fast_load_stationary_speedup", &TensorEngine::fastLoadStationarySpeedup,
           "fast LoadStationary speed-up over an MM of equal free size").range(1, 64);
    t.leaf("background_load_stationary", &TensorEngine::backgroundLoadStationary,
           "the next stationary loads while the current matmul computes");
    t.nested("double_row_fp8", &TensorEngine::doubleRowFp8, schemaOf<DoubleRowMode>(),
             "FP8 double-row mode");
    t.leaf("mx_contraction", &TensorEngine::mxContraction,
           "contraction per MX matmul instruction (0 = no MX)").min(0).limit(kMaxCount);
    t.nested("transpose", &TensorEngine::transpose, schemaOf<PeTransposeMode>(),
             "transpose mode");
    t.nested("tiling", &TensorEngine::tiling, schemaOf<PeTiling>(), "array tiling mode");
    t.nested("sparsity", &TensorEngine::sparsity, schemaOf<PeSparsity>(),
             "structured sparsity");
    t.leaf("psum_accumulate_dtypes", &TensorEngine::psumAccumulateDtypes,
           "data types PE can accumulate into PSUM");
    t.leaf("output_spans_banks", &TensorEngine::outputSpansBanks,
           "one matmul output may span several PSUM banks");
    t.nested("peak_tflops", &TensorEngine::peakTflops, schemaOf<PeakTflops>(),
             "documented per-core peak throughput");
    t.nested("power_throttle", &TensorEngine::powerThrottle, schemaOf<PowerThrottle>(),
             "dI/dt power throttling");
    return t;
  }();
  return s;
}

/// Keys shared by the Vector, Scalar and GpSimd engines.
template <typename E>
void addStreamEngineFields(Schema<E>& t) {
  t.leaf("clock", &StreamEngine::clock, "engine clock").range(kMinClock, kMaxClock);
  t.leaf("lanes", &StreamEngine::lanes, "parallel lanes (partitions)").range(1, 4096);
  t.nested("elements_per_cycle", &StreamEngine::elementsPerCycle, schemaOf<ElementRates>(),
           "peak data rate by data-type class");
  t.leaf("peak_tflops_fp32", &StreamEngine::peakTflopsFp32,
         "documented FP32 peak (not used for timing; 0 = not documented)")
      .min(kZero).unit("TFLOPS");
}

template <>
const Schema<VectorPerfMode>& schemaOf() {
  static const Schema<VectorPerfMode> s = [] {
    Schema<VectorPerfMode> t;
    t.leaf("fast_factor", &VectorPerfMode::fastFactor,
           "speed-up for tensor_copy/tensor_scalar, SBUF in and out, BF16/FP16, contiguous")
        .range(1, 64);
    t.leaf("factor", &VectorPerfMode::factor,
           "speed-up when non-contiguous or one operand in PSUM, and for BF16/FP16 "
           "tensor_tensor from SBUF")
        .range(1, 64);
    return t;
  }();
  return s;
}

template <>
const Schema<VectorEngine>& schemaOf() {
  static const Schema<VectorEngine> s = [] {
    Schema<VectorEngine> t;
    addStreamEngineFields(t);
    t.nested("perf_mode", &VectorEngine::perfMode, schemaOf<VectorPerfMode>(),
             "performance-mode factors (1 = no perf mode)");
    t.leaf("shuffle_banks", &VectorEngine::shuffleBanks, "reshape banks (32x32 transpose units)")
        .range(0, 4096);
    t.leaf("shuffle_bank_partitions", &VectorEngine::shuffleBankPartitions,
           "partitions per reshape bank").range(0, 4096);
    return t;
  }();
  return s;
}

template <>
const Schema<ScalarEngine>& schemaOf() {
  static const Schema<ScalarEngine> s = [] {
    Schema<ScalarEngine> t;
    addStreamEngineFields(t);
    t.leaf("perf_mode_factor", &ScalarEngine::perfModeFactor,
           "BF16 speed-up for tensor_scalar/tensor_copy (1 = none)").range(1, 64);
    t.leaf("accumulators", &ScalarEngine::accumulators, "internal reduction accumulators")
        .min(0).limit(kMaxCount);
    return t;
  }();
  return s;
}

template <>
const Schema<GpSimdEngine>& schemaOf() {
  static const Schema<GpSimdEngine> s = [] {
    Schema<GpSimdEngine> t;
    addStreamEngineFields(t);
    t.leaf("cores", &GpSimdEngine::cores, "programmable SIMD cores").range(1, 4096);
    t.leaf("simd_bits", &GpSimdEngine::simdBits, "SIMD width per core").range(1, 65536)
        .unit("bits");
    t.leaf("tcm_bytes", &GpSimdEngine::tcmBytes, "tightly-coupled memory per core")
        .range(Bytes(0), kMaxPartitionBytes);
    t.leaf("partitions_per_core", &GpSimdEngine::partitionsPerCore,
           "SBUF partitions wired to each core").range(1, 4096);
    t.leaf("dma_bandwidth", &GpSimdEngine::dmaBandwidth,
           "integrated DMA bandwidth of all cores together (0 = none)")
        .range(BytesPerSecond(0), kMaxBandwidth);
    return t;
  }();
  return s;
}

template <>
const Schema<SyncEngine>& schemaOf() {
  static const Schema<SyncEngine> s = [] {
    Schema<SyncEngine> t;
    t.leaf("clock", &SyncEngine::clock, "sequencer clock").range(kMinClock, kMaxClock);
    return t;
  }();
  return s;
}

template <>
const Schema<Sequencer>& schemaOf() {
  static const Schema<Sequencer> s = [] {
    Schema<Sequencer> t;
    t.leaf("registers", &Sequencer::registers, "scalar registers per sequencer")
        .range(0, kMaxSequencerResources);
    t.leaf("register_bits", &Sequencer::registerBits, "register width").range(1, 64)
        .unit("bits");
    t.leaf("semaphores", &Sequencer::semaphores, "semaphores per core")
        .range(1, kMaxSequencerResources);
    t.leaf("semaphore_bits", &Sequencer::semaphoreBits, "semaphore width (signed)").range(1, 64)
        .unit("bits");
    t.leaf("events", &Sequencer::events, "single-bit events per core")
        .range(0, kMaxSequencerResources);
    return t;
  }();
  return s;
}

template <>
const Schema<Sbuf>& schemaOf() {
  static const Schema<Sbuf> s = [] {
    Schema<Sbuf> t;
    t.leaf("partitions", &Sbuf::partitions, "partitions (rows)").range(1, 4096);
    t.leaf("partition_bytes", &Sbuf::partitionBytes, "bytes per partition")
        .range(Bytes(1), kMaxPartitionBytes);
    t.leaf("total_bytes", &Sbuf::totalBytes, "documented total; must equal partitions x bytes")
        .range(Bytes(1), kMaxSbufBytes);
    t.leaf("layouts", &Sbuf::layouts, "memory layouts offered (semantics undocumented)");
    return t;
  }();
  return s;
}

template <>
const Schema<Psum>& schemaOf() {
  static const Schema<Psum> s = [] {
    Schema<Psum> t;
    t.leaf("partitions", &Psum::partitions, "partitions (rows)").range(1, 4096);
    t.leaf("partition_bytes", &Psum::partitionBytes, "bytes per partition")
        .range(Bytes(1), kMaxPsumPartitionBytes);
    t.leaf("banks", &Psum::banks, "banks per partition (accumulation groups)").range(1, 1024);
    t.leaf("bank_bytes", &Psum::bankBytes, "bytes per bank per partition")
        .range(Bytes(1), kMaxPsumPartitionBytes);
    t.leaf("banks_reserved_for_dma_transpose", &Psum::banksReservedForDmaTranspose,
           "banks reserved when DMA transpose is lowered to a PE transpose").range(0, 1024);
    return t;
  }();
  return s;
}

template <>
const Schema<StartPartitionRule>& schemaOf() {
  static const Schema<StartPartitionRule> s = [] {
    Schema<StartPartitionRule> t;
    t.leaf("max_partitions", &StartPartitionRule::maxPartitions,
           "the rule covers accesses of up to this many partitions").range(1, 4096);
    t.leaf("starts", &StartPartitionRule::starts, "allowed start partitions").range(0, 4095);
    return t;
  }();
  return s;
}

template <>
const Schema<AccessRules>& schemaOf() {
  static const Schema<AccessRules> s = [] {
    Schema<AccessRules> t;
    // At most 4: what the program formats hold (isa::kMaxFreeDims).
    t.leaf("max_free_dims", &AccessRules::maxFreeDims, "free-axis dimensions of an access pattern")
        .range(1, 4);
    t.leaf("free_dim_max_size", &AccessRules::freeDimMaxSize, "largest size of one free dimension")
        .range(1, kMaxElements).unit("elements");
    t.leaf("free_dim_min_stride", &AccessRules::freeDimMinStride,
           "most negative stride of a free dimension").range(-kMaxElements, 0).unit("elements");
    t.leaf("free_dim_max_stride", &AccessRules::freeDimMaxStride,
           "largest stride of a free dimension").range(0, kMaxElements).unit("elements");
    t.leaf("port_elements_per_cycle", &AccessRules::portElementsPerCycle,
           "elements per cycle through one engine port (one per partition)")
        .min(1).limit(kMaxCount).unit("elements/cycle");
    t.leaf("stride_penalty_above", &AccessRules::stridePenaltyAbove,
           "innermost stride above which port bandwidth drops")
        .range(Bytes(0), kMaxPartitionBytes);
    t.leaf("stride_penalty_factor", &AccessRules::stridePenaltyFactor,
           "bandwidth divisor beyond that stride").range(1, 64);
    t.leaf("access_overhead_cycles", &AccessRules::accessOverheadCycles,
           "fixed cost of one tensor access request").range(0, kMaxCycles).unit("cycles");
    t.recordList("start_partition_rules", &AccessRules::startPartitionRules,
                 schemaOf<StartPartitionRule>(),
                 "allowed start partitions by partition count, ascending");
    return t;
  }();
  return s;
}

template <>
const Schema<TileLimits>& schemaOf() {
  static const Schema<TileLimits> s = [] {
    Schema<TileLimits> t;
    t.leaf("matmul_k", &TileLimits::matmulK, "matmul contraction (partition) size")
        .min(1).limit(kMaxCount);
    t.leaf("matmul_m", &TileLimits::matmulM, "matmul stationary free size (output partitions)")
        .min(1).limit(kMaxCount);
    t.leaf("matmul_n", &TileLimits::matmulN, "matmul moving free size, FP32 output")
        .min(1).limit(kMaxCount);
    t.leaf("matmul_n_bf16", &TileLimits::matmulNBf16,
           "matmul moving free size with BF16 PSUM output (0 = no BF16 output)")
        .min(0).limit(kMaxCount);
    t.leaf("vector_p", &TileLimits::vectorP, "Vector/Scalar partitions").range(1, 4096);
    t.leaf("vector_f_sbuf", &TileLimits::vectorFSbuf, "Vector/Scalar free size from SBUF")
        .range(1, kMaxElements).unit("elements");
    t.leaf("vector_f_psum", &TileLimits::vectorFPsum, "Vector/Scalar free size from PSUM")
        .range(1, kMaxElements).unit("elements");
    t.leaf("bn_stats_f", &TileLimits::bnStatsF, "bn_stats free size").range(1, kMaxElements)
        .unit("elements");
    return t;
  }();
  return s;
}

template <>
const Schema<DmaEfficiency>& schemaOf() {
  static const Schema<DmaEfficiency> s = [] {
    Schema<DmaEfficiency> t;
    t.leaf("overhead_bound_below", &DmaEfficiency::overheadBoundBelow,
           "bytes per partition below which a transfer is overhead-bound")
        .range(Bytes(0), kMaxDmaBytes);
    t.leaf("near_peak_at", &DmaEfficiency::nearPeakAt,
           "bytes per partition from which a transfer is near peak")
        .range(Bytes(0), kMaxDmaBytes);
    t.leaf("saturated_at", &DmaEfficiency::saturatedAt,
           "bytes per partition from which bandwidth is saturated")
        .range(Bytes(0), kMaxDmaBytes);
    t.leaf("recommended_transfer", &DmaEfficiency::recommendedTransfer,
           "recommended minimum bytes per transfer")
        .range(Bytes(0), kMaxDmaBytes);
    return t;
  }();
  return s;
}

template <>
const Schema<DmaDescriptors>& schemaOf() {
  static const Schema<DmaDescriptors> s = [] {
    Schema<DmaDescriptors> t;
    t.leaf("descriptor_bytes", &DmaDescriptors::descriptorBytes, "size of one hardware descriptor")
        .range(Bytes(0), kMaxDmaBytes);
    t.leaf("max_buffer_bytes", &DmaDescriptors::maxBufferBytes,
           "largest contiguous buffer one descriptor moves")
        .range(Bytes(1), kMaxDmaBytes);
    t.leaf("max_per_packet", &DmaDescriptors::maxPerPacket, "descriptors per packet")
        .min(1).limit(kMaxCount);
    t.leaf("ring_max_descriptors", &DmaDescriptors::ringMaxDescriptors,
           "descriptors a ring holds").min(1).limit(kMaxCount);
    t.leaf("ring_alignment", &DmaDescriptors::ringAlignment, "ring alignment")
        .range(Bytes(0), kMaxDmaBytes);
    return t;
  }();
  return s;
}

template <>
const Schema<DmaDge>& schemaOf() {
  static const Schema<DmaDge> s = [] {
    Schema<DmaDge> t;
    t.leaf("hardware_blocks", &DmaDge::hardwareBlocks,
           "hardware descriptor-generation blocks per core (0 = software/static only)")
        .range(0, 64);
    t.leaf("instruction_cost", &DmaDge::instructionCost, "time per hardware-DGE DMA instruction")
        .range(Picoseconds(0), kMaxLatency);
    t.leaf("hardware_gather_scatter", &DmaDge::hardwareGatherScatter,
           "hardware DGE supports gather/scatter");
    return t;
  }();
  return s;
}

template <>
const Schema<DmaTranspose>& schemaOf() {
  static const Schema<DmaTranspose> s = [] {
    Schema<DmaTranspose> t;
    t.leaf("supported", &DmaTranspose::supported, "DMA can transpose");
    t.leaf("element_bytes", &DmaTranspose::elementBytes, "element sizes it can transpose")
        .range(1, 16);
    t.leaf("hbm_to_sbuf_efficiency", &DmaTranspose::hbmToSbufEfficiency,
           "fraction of DMA throughput reached HBM->SBUF").range(kZero, kOne);
    t.leaf("sbuf_to_sbuf_efficiency", &DmaTranspose::sbufToSbufEfficiency,
           "fraction of DMA throughput reached SBUF->SBUF").range(kZero, kOne);
    return t;
  }();
  return s;
}

template <>
const Schema<DmaCompletion>& schemaOf() {
  static const Schema<DmaCompletion> s = [] {
    Schema<DmaCompletion> t;
    t.leaf("semaphore_increment", &DmaCompletion::semaphoreIncrement,
           "semaphore increments per transfer (every engine of the core writes one)")
        .range(1, kMaxDmaEngines);
    t.leaf("semaphore_write_bytes", &DmaCompletion::semaphoreWriteBytes,
           "size of each completion write")
        .range(Bytes(0), kMaxDmaBytes);
    return t;
  }();
  return s;
}

template <>
const Schema<Dma>& schemaOf() {
  static const Schema<Dma> s = [] {
    Schema<Dma> t;
    t.leaf("engines_per_core", &Dma::enginesPerCore, "DMA engines per core")
        .range(1, kMaxDmaEngines);
    t.leaf("queues_per_engine", &Dma::queuesPerEngine,
           "queues per DMA engine, which are the DMA queues a program of one core names")
        .range(1, kMaxDmaQueuesPerCore);
    t.leaf("engine_bandwidth", &Dma::engineBandwidth, "bandwidth of one DMA engine")
        .range(kMinModelledBandwidth, kMaxBandwidth);
    t.leaf("fixed_cost", &Dma::fixedCost, "fixed cost per transfer (semaphore to start)")
        .range(Picoseconds(0), kMaxLatency);
    t.leaf("queue_scheduling", &Dma::queueScheduling, "arbitration among queues");
    t.leaf("qos_classes", &Dma::qosClasses, "traffic classes (0 = no QoS)").range(0, 64);
    t.leaf("compute_efficiency", &Dma::computeEfficiency,
           "DMA-compute (accumulate) throughput as a fraction of copy throughput")
        .range(kOnePercent, kOne);
    t.nested("efficiency", &Dma::efficiency, schemaOf<DmaEfficiency>(),
             "transfer-size efficiency knee");
    t.nested("descriptors", &Dma::descriptors, schemaOf<DmaDescriptors>(), "descriptor limits");
    t.nested("dge", &Dma::dge, schemaOf<DmaDge>(), "descriptor generation");
    t.nested("transpose", &Dma::transpose, schemaOf<DmaTranspose>(), "DMA transpose");
    t.nested("completion", &Dma::completion, schemaOf<DmaCompletion>(), "completion signalling");
    return t;
  }();
  return s;
}

template <>
const Schema<Core>& schemaOf() {
  static const Schema<Core> s = [] {
    Schema<Core> t;
    t.nested("pe", &Core::pe, schemaOf<TensorEngine>(), "Tensor engine (PE array)");
    t.nested("act", &Core::act, schemaOf<ScalarEngine>(), "Scalar engine (ACT)");
    t.nested("dve", &Core::dve, schemaOf<VectorEngine>(), "Vector engine (DVE)");
    t.nested("pool", &Core::pool, schemaOf<GpSimdEngine>(), "GpSimd engine (POOL)");
    t.nested("sp", &Core::sp, schemaOf<SyncEngine>(), "Sync engine (SP)");
    t.nested("sequencer", &Core::sequencer, schemaOf<Sequencer>(), "sequencer resources");
    t.nested("sbuf", &Core::sbuf, schemaOf<Sbuf>(), "state buffer (SBUF)");
    t.nested("psum", &Core::psum, schemaOf<Psum>(), "partial-sum buffer (PSUM)");
    t.nested("access", &Core::access, schemaOf<AccessRules>(), "SBUF/PSUM access rules");
    t.nested("tile_limits", &Core::tileLimits, schemaOf<TileLimits>(), "tile-size limits");
    t.nested("dma", &Core::dma, schemaOf<Dma>(), "DMA subsystem");
    return t;
  }();
  return s;
}

template <>
const Schema<Hbm>& schemaOf() {
  static const Schema<Hbm> s = [] {
    Schema<Hbm> t;
    t.leaf("stacks", &Hbm::stacks, "HBM stacks").range(1, 64);
    t.leaf("stack_capacity", &Hbm::stackCapacity, "capacity of one stack")
        .range(Bytes(1), kMaxStackBytes);
    t.leaf("capacity", &Hbm::capacity, "documented total; must equal stacks x stack_capacity")
        .range(Bytes(1), kMaxHbmBytes);
    t.leaf("bandwidth", &Hbm::bandwidth, "total bandwidth of all stacks")
        .range(kMinModelledBandwidth, kMaxBandwidth);
    t.leaf("stack_of_core", &Hbm::stackOfCore,
           "HBM stack index used by each physical core (cores with equal index share a stack)")
        .range(0, 63);
    return t;
  }();
  return s;
}

template <>
const Schema<NeuronLink>& schemaOf() {
  static const Schema<NeuronLink> s = [] {
    Schema<NeuronLink> t;
    t.leaf("version", &NeuronLink::version, "NeuronLink generation").range(1, 100);
    t.leaf("chip_bandwidth", &NeuronLink::chipBandwidth, "documented per-chip bandwidth")
        .range(BytesPerSecond(0), kMaxBandwidth);
    t.leaf("links_per_chip", &NeuronLink::linksPerChip, "links per chip").range(0, 1024);
    t.leaf("link_bandwidth", &NeuronLink::linkBandwidth, "bandwidth of one link")
        .range(BytesPerSecond(0), kMaxBandwidth);
    t.leaf("intra_instance_bandwidth", &NeuronLink::intraInstanceBandwidth,
           "per-chip bandwidth to chips of the same instance")
        .range(BytesPerSecond(0), kMaxBandwidth);
    t.leaf("inter_instance_bandwidth", &NeuronLink::interInstanceBandwidth,
           "per-chip bandwidth to other instances of an UltraServer")
        .range(BytesPerSecond(0), kMaxBandwidth);
    t.leaf("counting", &NeuronLink::counting, "how the bandwidth figures are counted");
    t.leaf("hop_latency_min", &NeuronLink::hopLatencyMin, "per-hop latency, low end")
        .range(Picoseconds(0), kMaxLatency);
    t.leaf("hop_latency_max", &NeuronLink::hopLatencyMax, "per-hop latency, high end")
        .range(Picoseconds(0), kMaxLatency);
    return t;
  }();
  return s;
}

template <>
const Schema<Efa>& schemaOf() {
  static const Schema<Efa> s = [] {
    Schema<Efa> t;
    t.leaf("instance_bandwidth", &Efa::instanceBandwidth, "EFA bandwidth per instance")
        .range(BytesPerSecond(0), kMaxBandwidth);
    t.leaf("chip_bandwidth", &Efa::chipBandwidth, "EFA bandwidth per chip")
        .range(BytesPerSecond(0), kMaxBandwidth);
    t.leaf("inter_node_latency", &Efa::interNodeLatency, "minimal HBM-to-HBM latency between nodes")
        .range(Picoseconds(0), kMaxLatency);
    return t;
  }();
  return s;
}

template <>
const Schema<Interconnect>& schemaOf() {
  static const Schema<Interconnect> s = [] {
    Schema<Interconnect> t;
    t.nested("neuronlink", &Interconnect::neuronlink, schemaOf<NeuronLink>(),
             "chip-to-chip links");
    t.nested("efa", &Interconnect::efa, schemaOf<Efa>(), "network between instances");
    return t;
  }();
  return s;
}

template <>
const Schema<SystemLevel>& schemaOf() {
  static const Schema<SystemLevel> s = [] {
    Schema<SystemLevel> t;
    t.leaf("name", &SystemLevel::name, "product name");
    t.leaf("chips", &SystemLevel::chips, "chips at this level (0 = no such level)")
        .min(0).limit(kMaxCount);
    t.leaf("kind", &SystemLevel::kind, "network shape");
    t.leaf("dims", &SystemLevel::dims, "extent of each dimension; product = chips")
        .min(1).limit(kMaxCount);
    t.leaf("inter_instance_links_per_chip", &SystemLevel::interInstanceLinksPerChip,
           "links per chip to other instances (e.g. the UltraServer Z ring)").range(0, 1024);
    t.leaf("inter_instance_link_bandwidth", &SystemLevel::interInstanceLinkBandwidth,
           "bandwidth of one such link")
        .range(BytesPerSecond(0), kMaxBandwidth);
    return t;
  }();
  return s;
}

template <>
const Schema<Topology>& schemaOf() {
  static const Schema<Topology> s = [] {
    Schema<Topology> t;
    t.nested("instance", &Topology::instance, schemaOf<SystemLevel>(), "one server instance");
    t.nested("ultraserver", &Topology::ultraserver, schemaOf<SystemLevel>(),
             "UltraServer (several instances)");
    return t;
  }();
  return s;
}

}  // namespace

const Schema<ChipSpec>& chipSchema() {
  static const Schema<ChipSpec> s = [] {
    Schema<ChipSpec> t;
    t.leaf("version", &ChipSpec::version, "format version of the file").range(1, 1).plain();
    t.leaf("name", &ChipSpec::name, "chip name").plain();
    t.leaf("description", &ChipSpec::description, "one-line description").plain().optional();
    t.leaf("base", &ChipSpec::base,
           "chip name or relative .yaml path this file overrides (what-if chips)")
        .plain().optional();
    t.nested("chip", &ChipSpec::chip, schemaOf<ChipInfo>(), "chip-level facts");
    t.nested("core", &ChipSpec::core, schemaOf<Core>(), "one NeuronCore");
    t.nested("hbm", &ChipSpec::hbm, schemaOf<Hbm>(), "device memory");
    t.nested("interconnect", &ChipSpec::interconnect, schemaOf<Interconnect>(),
             "chip-to-chip and network links");
    t.nested("topology", &ChipSpec::topology, schemaOf<Topology>(), "systems built from chips");
    t.nested("costs", &ChipSpec::costs, costModelSchema(), "per-instruction costs");
    return t;
  }();
  return s;
}

}  // namespace trn::spec::detail
