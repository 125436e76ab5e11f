// Loading the real chip descriptions and the what-if example: key values against
// hardware-trn2.md, provenance, inheritance and the config-dir override.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"
#include "trn/spec/report.h"

namespace trn::spec {
namespace {

using testing::mustLoad;

Hertz ghz(const char* text) { return *parseFrequency(text); }
Bytes bytes(const char* text) { return *parseBytes(text); }

TEST(Trn2, ComputeEngines) {
  const ChipSpec s = mustLoad("trn2");
  EXPECT_EQ(s.name, "trn2");
  EXPECT_EQ(s.chip.neuronCores, 8);
  EXPECT_EQ(s.core.pe.clock, ghz("2.4GHz"));
  EXPECT_EQ(s.core.act.clock, ghz("1.2GHz"));
  EXPECT_EQ(s.core.dve.clock, ghz("0.96GHz"));
  EXPECT_EQ(s.core.pool.clock, ghz("1.2GHz"));
  EXPECT_EQ(s.core.pe.rows, 128);
  EXPECT_EQ(s.core.pe.columns, 128);
  EXPECT_EQ(s.core.pe.inputElementsPerCycle.fp8, 4 * 128);
  EXPECT_EQ(s.core.pe.inputElementsPerCycle.fp16, 2 * 128);
  EXPECT_EQ(s.core.pe.inputElementsPerCycle.sparse, 5 * 128);
  EXPECT_EQ(s.core.dve.elementsPerCycle.fp16, 512);
  EXPECT_EQ(s.core.dve.elementsPerCycle.other, 256);
  EXPECT_EQ(s.core.dve.perfMode.fastFactor, 4);
  EXPECT_EQ(s.core.dve.perfMode.factor, 2);
  EXPECT_EQ(s.core.pe.fp32CostFactor, 4);
  EXPECT_EQ(s.core.pe.mmMinInitiationInterval, 64);
  EXPECT_TRUE(s.core.pe.doubleRowFp8.supported);
  EXPECT_EQ(s.core.pe.doubleRowFp8.contraction, 256);
  EXPECT_EQ(s.core.pe.tiling.rowTileSizes, (std::vector<std::int64_t>{64, 32}));
  EXPECT_EQ(s.core.pe.sparsity.patterns.size(), 7U);
  EXPECT_EQ(s.core.pe.sparsity.maxCompression, 4);
  EXPECT_TRUE(s.core.pe.powerThrottle.enabled);
  EXPECT_EQ(s.core.pe.powerThrottle.startFraction, *Ratio::make(1, 2));
  EXPECT_EQ(s.core.pe.powerThrottle.rampTime, *parseTime("3us"));
}

TEST(Trn2, Memories) {
  const ChipSpec s = mustLoad("trn2");
  EXPECT_EQ(s.core.sbuf.partitions, 128);
  EXPECT_EQ(s.core.sbuf.partitionBytes, bytes("224KiB"));
  EXPECT_EQ(s.core.sbuf.totalBytes, bytes("28MiB"));
  EXPECT_EQ(s.core.psum.banks, 8);
  EXPECT_EQ(s.core.psum.bankBytes, bytes("2KiB"));
  EXPECT_EQ(s.core.psum.partitionBytes, bytes("16KiB"));
  EXPECT_EQ(s.core.access.maxFreeDims, 4);
  EXPECT_EQ(s.core.access.freeDimMaxSize, 65535);
  EXPECT_EQ(s.core.access.freeDimMinStride, -32768);
  ASSERT_EQ(s.core.access.startPartitionRules.size(), 3U);
  EXPECT_EQ(s.core.access.startPartitionRules[0].starts,
            (std::vector<std::int64_t>{0, 32, 64, 96}));
  EXPECT_EQ(s.core.tileLimits.matmulN, 512);
  EXPECT_EQ(s.core.tileLimits.bnStatsF, 512);
  EXPECT_EQ(s.hbm.stacks, 4);
  EXPECT_EQ(s.hbm.stackCapacity, bytes("24GiB"));
  EXPECT_EQ(s.hbm.capacity, bytes("96GiB"));
  EXPECT_EQ(s.hbm.bandwidth, *parseBandwidth("2.9TB/s"));
  EXPECT_EQ(s.hbm.stackOfCore, (std::vector<std::int64_t>{0, 0, 1, 1, 2, 2, 3, 3}));
}

TEST(Trn2, DmaAndSystem) {
  const ChipSpec s = mustLoad("trn2");
  EXPECT_EQ(s.core.dma.enginesPerCore, 16);
  EXPECT_EQ(s.core.dma.queuesPerEngine, 16);
  EXPECT_EQ(s.core.dma.engineBandwidth, *parseBandwidth("23B/ns"));
  EXPECT_EQ(s.core.dma.fixedCost, *parseTime("1.3us"));
  EXPECT_EQ(s.core.dma.efficiency.nearPeakAt, bytes("2KiB"));
  EXPECT_EQ(s.core.dma.dge.instructionCost, *parseTime("600ns"));
  EXPECT_EQ(s.core.dma.transpose.hbmToSbufEfficiency, *Ratio::make(9, 10));
  EXPECT_EQ(s.core.dma.completion.semaphoreIncrement, 16);
  EXPECT_EQ(s.core.sequencer.semaphores, 256);
  EXPECT_EQ(s.core.sequencer.events, 256);
  EXPECT_EQ(s.chip.collectiveCores, 16);
  EXPECT_EQ(s.interconnect.neuronlink.version, 3);
  EXPECT_EQ(s.interconnect.neuronlink.chipBandwidth, *parseBandwidth("1.28TB/s"));
  EXPECT_EQ(s.topology.instance.chips, 16);
  EXPECT_EQ(s.topology.instance.dims, (std::vector<std::int64_t>{4, 4}));
  EXPECT_EQ(s.topology.ultraserver.chips, 64);
  EXPECT_EQ(s.topology.ultraserver.dims, (std::vector<std::int64_t>{4, 4, 4}));
  EXPECT_EQ(s.interconnect.efa.interNodeLatency, *parseTime("15us"));
}

TEST(Trn2, PerCoreBf16PeakDerivedFromTheSpec) {
  const ChipSpec s = mustLoad("trn2");
  const double fromFields = static_cast<double>(s.core.pe.rows * s.core.pe.columns * 2) *
                            static_cast<double>(s.core.pe.clock.count()) / 1e12;
  EXPECT_NEAR(fromFields, 78.6, 0.05);
  const Result<Ratio> derived = peBf16PeakTflops(s);
  ASSERT_TRUE(derived.ok());
  EXPECT_EQ(*derived, *Ratio::parse("78.6432"));
  EXPECT_NEAR(derived->toDouble(), s.core.pe.peakTflops.bf16.toDouble(), 0.5);  // 79 documented
}

TEST(Trn2, ConflictsRecordTheAlternative) {
  const ChipSpec s = mustLoad("trn2");
  const Provenance* cc = s.provenanceOf("chip.collective_cores");
  ASSERT_NE(cc, nullptr);
  EXPECT_NE(cc->alternative.find("20"), std::string::npos);
  const Provenance* dma = s.provenanceOf("core.dma.engine_bandwidth");
  ASSERT_NE(dma, nullptr);
  EXPECT_NE(dma->source.find("N4 table"), std::string::npos);
  EXPECT_NE(dma->alternative.find("27.2"), std::string::npos);
  const Provenance* clock = s.provenanceOf("core.pe.clock");
  ASSERT_NE(clock, nullptr);
  EXPECT_NE(clock->source.find("N2"), std::string::npos);
  EXPECT_TRUE(clock->file.ends_with("trn2.yaml"));
  EXPECT_GT(clock->line, 0);
}

TEST(Trn1, NeuronCoreV2) {
  const ChipSpec s = mustLoad("trn1");
  EXPECT_EQ(s.chip.neuronCores, 2);
  EXPECT_EQ(s.core.sbuf.partitionBytes, bytes("192KiB"));
  EXPECT_EQ(s.core.sbuf.totalBytes, bytes("24MiB"));
  EXPECT_EQ(s.core.pe.clock, ghz("2.8GHz"));
  EXPECT_EQ(s.core.dve.clock, ghz("1.12GHz"));
  EXPECT_FALSE(s.core.pe.doubleRowFp8.supported);
  EXPECT_FALSE(s.core.pe.transpose.bitAccurate);
  // Fitted to the calibration set (docs/fidelity.md), not the N4 table's 17 B/ns.
  EXPECT_EQ(s.core.dma.engineBandwidth, *parseBandwidth("8.5B/ns"));
  EXPECT_EQ(s.core.dma.dge.hardwareBlocks, 0);
  EXPECT_EQ(s.hbm.capacity, bytes("32GiB"));
  EXPECT_EQ(s.chip.collectiveCores, 6);
  EXPECT_EQ(s.topology.ultraserver.kind, TopologyKind::kNone);
  // The costs table is shared with NC-v3; NC-v2 has no Vector perf mode, so its factors are 1
  // and the perf-mode variants cost what the plain formula does.
  EXPECT_EQ(s.costs.find("tensor_copy")->variants.size(), 3U);
  EXPECT_EQ(s.core.dve.perfMode.factor, 1);
  EXPECT_EQ(s.core.dve.perfMode.fastFactor, 1);
  EXPECT_NE(s.provenanceOf("costs.min_ii")->file.find("costs/neuroncore.yaml"), std::string::npos);
}

TEST(Trn3, NeuronCoreV4) {
  const ChipSpec s = mustLoad("trn3");
  EXPECT_EQ(s.core.sbuf.partitionBytes, bytes("256KiB"));
  EXPECT_EQ(s.core.sbuf.totalBytes, bytes("32MiB"));
  EXPECT_EQ(s.core.dve.clock, ghz("1.2GHz"));
  EXPECT_EQ(s.core.pe.mxContraction, 512);
  EXPECT_EQ(s.core.tileLimits.matmulN, 4096);
  EXPECT_TRUE(s.core.pe.outputSpansBanks);
  EXPECT_EQ(s.core.pe.psumAccumulateDtypes,
            (std::vector<DType>{DType::kFp32, DType::kBf16}));
  EXPECT_EQ(s.hbm.capacity, bytes("144GiB"));
  EXPECT_EQ(s.core.dma.queueScheduling, QueueScheduling::kQos);
  EXPECT_EQ(s.topology.ultraserver.kind, TopologyKind::kSwitched);
  const Provenance* dies = s.provenanceOf("chip.dies");
  ASSERT_NE(dies, nullptr);
  // Not documented for Trn3: carried from trn2.yaml, which the provenance names.
  EXPECT_NE(dies->file.find("trn2.yaml"), std::string::npos) << dies->file;
  const Provenance* cores = s.provenanceOf("chip.neuron_cores");
  ASSERT_NE(cores, nullptr);
  EXPECT_NE(cores->file.find("trn3.yaml"), std::string::npos) << cores->file;  // documented: A7
  EXPECT_NE(formatChip(s).find("inherited from trn2.yaml"), std::string::npos);
}

TEST(WhatIf, OverridesAFewValuesOfItsBase) {
  const ChipSpec s = mustLoad("examples/trn2-wide-sbuf");
  EXPECT_EQ(s.name, "trn2-wide-sbuf");
  EXPECT_EQ(s.base, "trn2");
  EXPECT_EQ(s.core.sbuf.partitionBytes, bytes("256KiB"));
  EXPECT_FALSE(s.core.pe.powerThrottle.enabled);
  EXPECT_EQ(s.costs.minIi, 48);
  EXPECT_EQ(s.core.pe.clock, ghz("2.4GHz"));  // inherited

  const Provenance* sbuf = s.provenanceOf("core.sbuf.partition_bytes");
  ASSERT_NE(sbuf, nullptr);
  EXPECT_TRUE(sbuf->source.starts_with("override in ")) << sbuf->source;
  EXPECT_TRUE(sbuf->source.ends_with("trn2-wide-sbuf.yaml")) << sbuf->source;
  EXPECT_EQ(s.provenanceOf("costs.min_ii")->source,
            "what-if: assumed 25% shorter initiation interval");
  EXPECT_TRUE(s.provenanceOf("core.pe.clock")->file.ends_with("trn2.yaml"));
  EXPECT_EQ(s.provenanceOf("core.pe.clock")->source, "N2 engine table (§4)");
}

TEST(WhatIf, FormulasSeeOverriddenValues) {
  const ChipSpec s = mustLoad("examples/trn2-wide-sbuf");
  CostQuery q;
  q.engine = Engine::kAct;
  q.variables.set(CostVariable::kN, 10);
  EXPECT_EQ(s.costs.find("activation")->estimate(q)->cycles, 48);  // max(min_ii 48, 10)
  q.engine = Engine::kDve;
  q.dtypes = {DType::kFp32};
  q.variables.set(CostVariable::kN, 1000);
  EXPECT_EQ(s.costs.find("tensor_tensor")->estimate(q)->cycles, 1500);  // overridden formula
}

TEST(AllChips, EveryValueCitesASource) {
  for (const std::string& name : listChips()) {
    const ChipSpec s = mustLoad(name);
    int values = 0;
    for (const SpecEntry& e : describeChip(s)) {
      if (e.meta) {
        continue;
      }
      ++values;
      EXPECT_FALSE(e.provenance.source.empty()) << name << ": " << e.path;
      EXPECT_GT(e.provenance.line, 0) << name << ": " << e.path;
    }
    EXPECT_GT(values, 250) << name;
  }
}

TEST(AllChips, RequiredCostClassesEvaluate) {
  for (const std::string& name : listChips()) {
    const ChipSpec s = mustLoad(name);
    for (const std::string_view required : requiredCostClasses()) {
      const CostClass* c = s.costs.find(required);
      ASSERT_NE(c, nullptr) << name << ": " << required;
      CostQuery q;
      q.engine = c->engines.front();
      q.dtypes = {DType::kBf16};
      for (const CostVariable v : {CostVariable::kN, CostVariable::kP, CostVariable::kNStationary,
                                   CostVariable::kNMoving, CostVariable::kK,
                                   CostVariable::kIndices}) {
        q.variables.set(v, 128);
      }
      q.variables.set(CostVariable::kDtypeBytes, 2);
      const Result<CostEstimate> e = c->estimate(q);
      ASSERT_TRUE(e.ok()) << name << ": " << e.status().toString();
      EXPECT_GT(e->cycles, 0) << name << ": " << required;
    }
  }
}

TEST(Loader, ListsTheChips) {
  const std::vector<std::string> chips = listChips();
  for (const char* expected : {"trn1", "trn2", "trn3", "examples/trn2-wide-sbuf"}) {
    EXPECT_NE(std::find(chips.begin(), chips.end(), expected), chips.end()) << expected;
  }
}

TEST(Loader, LoadsByPathAndFromText) {
  const ChipSpec byPath = mustLoad(testing::sourcePath("configs/chips/trn2.yaml"));
  EXPECT_EQ(byPath.name, "trn2");
  const Result<ChipSpec> fromText = loadChipFromString(
      "version: 1\nname: tiny\nbase: trn2\ncore:\n  pe:\n    clock: 3GHz\n", "mem/tiny.yaml");
  ASSERT_TRUE(fromText.ok()) << fromText.status().toString();
  EXPECT_EQ(fromText->core.pe.clock, ghz("3GHz"));
  EXPECT_EQ(fromText->provenanceOf("core.pe.clock")->source, "override in mem/tiny.yaml");
  EXPECT_EQ(fromText->file, "mem/tiny.yaml");
}

TEST(Loader, ConfigDirComesFromTheEnvironment) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "trnsim_spec_config_dir_test";
  fs::create_directories(dir / "chips");
  fs::copy_file(testing::sourcePath("configs/chips/trn2.yaml"), dir / "chips" / "mine.yaml",
                fs::copy_options::overwrite_existing);
  fs::create_directories(dir / "costs");  // the costs table trn2.yaml includes
  fs::copy_file(testing::sourcePath("configs/costs/neuroncore.yaml"),
                dir / "costs" / "neuroncore.yaml", fs::copy_options::overwrite_existing);
  ::setenv("TRNSIM_CONFIG_DIR", dir.c_str(), 1);
  EXPECT_EQ(configDir(), dir.string());
  EXPECT_EQ(listChips(), std::vector<std::string>{"mine"});
  const Result<ChipSpec> mine = loadChip("mine");
  const Result<ChipSpec> missing = loadChip("trn1");
  ::unsetenv("TRNSIM_CONFIG_DIR");
  fs::remove_all(dir);
  EXPECT_TRUE(mine.ok()) << mine.status().toString();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("available chips: mine"), std::string::npos)
      << missing.status().message();
}

}  // namespace
}  // namespace trn::spec
