#include "trn/profile/trace.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "trn/isa/program_text.h"

namespace trn::profile {
namespace {

using nlohmann::json;

constexpr std::int64_t kNs = 1000;  // picoseconds per nanosecond

// Two loads on queues 0 and 1, a matmul, a GELU and a store on queue 3; DVE and POOL stay idle.
constexpr std::string_view kProgramText = R"(
.tensor lhsT input bf16 [128, 128]
.tensor rhs input bf16 [128, 512]
.tensor c output fp32 [128, 512]
sp:  dma_copy dst=sbuf[0:128]:bf16[[1,128]] src=hbm:lhsT:bf16[[128,128],[1,128]] queue=0 signal(s0+=1)
sp:  dma_copy dst=sbuf[0:128]+256:bf16[[1,512]] src=hbm:rhs:bf16[[512,128],[1,512]] queue=1 signal(s0+=1)
pe:  nc_matmul dst=psum[0:128]:fp32[[1,512]] stationary=sbuf[0:128]:bf16[[1,128]] moving=sbuf[0:128]+256:bf16[[1,512]] wait(s0>=2) signal(s1+=1) loc=kernel.cpp:42
act: activation dst=sbuf[0:128]+2048:fp32[[1,512]] data=psum[0:128]:fp32[[1,512]] op=gelu wait(s1>=1) wait(s3==0) signal(s2+=1) signal(s4=0)
sp:  dma_copy dst=hbm:c:fp32[[512,128],[1,512]] src=sbuf[0:128]+2048:fp32[[1,512]] queue=3 wait(s2>=1)
)";

isa::Program parseProgram() {
  Result<isa::Program> program = isa::parseProgramText(kProgramText, "trace_test.tasm");
  TRN_CHECK(program.ok()) << program.status().toString();
  return std::move(program).value();
}

Picoseconds ns(std::int64_t nanoseconds) { return Picoseconds(nanoseconds * kNs); }

core::InstructionRecord record(isa::Engine engine, std::uint32_t index, Picoseconds ready,
                               Picoseconds start, Picoseconds end, std::int64_t cycles) {
  core::InstructionRecord r;
  r.engine = engine;
  r.index = index;
  r.ready = ready;
  r.start = start;
  r.end = end;
  r.complete = end;
  r.cycles = cycles;
  return r;
}

core::TransferRecord transfer(std::uint32_t instruction, std::int32_t queue, Picoseconds issued,
                              Picoseconds start, Picoseconds end, std::int64_t bytes) {
  core::TransferRecord t;
  t.instruction = instruction;
  t.queue = queue;
  t.issued = issued;
  t.start = start;
  t.end = end;
  t.bytes = bytes;
  t.hbmBytes = bytes;
  t.descriptors = 128;
  t.engines = 16;
  t.efficiency = 0.75;
  return t;
}

/// Records of one timed run of kProgramText, with hand-picked times.
core::RunStats runStats() {
  core::RunStats stats;
  stats.mode = core::RunMode::kFunctionalTiming;
  stats.instructions = 5;
  stats.total = ns(5500);
  stats.records = {
      record(isa::Engine::kSp, 0, ns(0), ns(0), ns(10), 12),
      record(isa::Engine::kSp, 1, ns(10), ns(10), ns(20), 12),
      record(isa::Engine::kPe, 0, ns(0), ns(2500), Picoseconds(2'713'333), 512),
      record(isa::Engine::kAct, 0, ns(100), ns(2800), ns(3300), 600),
      record(isa::Engine::kSp, 2, ns(20), ns(3400), ns(3410), 12),
  };
  core::InstructionRecord& matmul = stats.records[2];
  matmul.variant = "bf16";
  matmul.throttle = 0.5;
  matmul.flops = 2LL * 128 * 128 * 512;
  stats.records[3].variant = "psum_source";
  stats.transfers = {
      transfer(0, 0, ns(0), ns(1300), ns(2000), 32'768),
      transfer(1, 1, ns(10), ns(1310), ns(2500), 131'072),
      transfer(4, 3, ns(3400), ns(4700), ns(5500), 262'144),
  };
  return stats;
}

json writeAndParse(const isa::Program& program, const core::RunStats& stats) {
  std::ostringstream out;
  const Status status = writeTrace(out, program, stats);
  EXPECT_TRUE(status.ok()) << status.toString();
  return json::parse(out.str());
}

/// The track names by tid, from the thread_name metadata events.
std::map<int, std::string> trackNames(const json& trace) {
  std::map<int, std::string> names;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "thread_name") {
      names[event["tid"].get<int>()] = event["args"]["name"].get<std::string>();
    }
  }
  return names;
}

std::vector<json> completeEvents(const json& trace) {
  std::vector<json> events;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == "X") {
      events.push_back(event);
    }
  }
  return events;
}

/// The only X event on track `tid` whose start is `ts` microseconds.
json eventAt(const json& trace, int tid, double ts) {
  std::vector<json> found;
  for (const json& event : completeEvents(trace)) {
    if (event["tid"] == tid && event["ts"].get<double>() == ts) {
      found.push_back(event);
    }
  }
  EXPECT_EQ(found.size(), 1u) << "tid " << tid << " ts " << ts;
  return found.empty() ? json() : found.front();
}

TEST(ProfileTrace, DocumentHasTheChromeTraceShape) {
  const json trace = writeAndParse(parseProgram(), runStats());
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace["displayTimeUnit"], "ns");
  EXPECT_EQ(trace["otherData"]["mode"], "functional+timing");
  EXPECT_EQ(trace["otherData"]["total_ps"], 5'500'000);
  for (const json& event : trace["traceEvents"]) {
    EXPECT_EQ(event["pid"], 0) << event.dump();
  }
  int processNames = 0;
  for (const json& event : trace["traceEvents"]) {
    if (event["name"] == "process_name") {
      ++processNames;
      EXPECT_EQ(event["args"]["name"], "NeuronCore");
    }
  }
  EXPECT_EQ(processNames, 1);
}

TEST(ProfileTrace, OneTrackPerActiveEngineAndQueue) {
  const json trace = writeAndParse(parseProgram(), runStats());
  const std::map<int, std::string> expected = {
      {0, "pe (Tensor)"},   {1, "act (Scalar)"},  {4, "sp (Sync)"},
      {100, "dma queue 0"}, {101, "dma queue 1"}, {103, "dma queue 3"},
  };
  EXPECT_EQ(trackNames(trace), expected);

  std::map<int, int> sortIndex;
  for (const json& event : trace["traceEvents"]) {
    if (event["name"] == "thread_sort_index") {
      sortIndex[event["tid"].get<int>()] = event["args"]["sort_index"].get<int>();
    }
  }
  ASSERT_EQ(sortIndex.size(), expected.size());
  for (const auto& [tid, index] : sortIndex) {
    EXPECT_EQ(index, tid);
  }
  EXPECT_LT(sortIndex[4], sortIndex[100]);  // engines come before queues
}

TEST(ProfileTrace, OneCompleteEventPerRecordAndTransfer) {
  const json trace = writeAndParse(parseProgram(), runStats());
  const std::vector<json> events = completeEvents(trace);
  EXPECT_EQ(events.size(), 5u + 3u);
  std::multiset<int> tids;
  for (const json& event : events) {
    tids.insert(event["tid"].get<int>());
  }
  EXPECT_EQ(tids, (std::multiset<int>{0, 1, 4, 4, 4, 100, 101, 103}));
}

TEST(ProfileTrace, InstructionEventCarriesTimesAndArguments) {
  const isa::Program program = parseProgram();
  const json trace = writeAndParse(program, runStats());

  const json matmul = eventAt(trace, 0, 2.5);
  EXPECT_EQ(matmul["name"], "nc_matmul");
  EXPECT_DOUBLE_EQ(matmul["ts"].get<double>(), 2'500'000 / 1e6);
  EXPECT_DOUBLE_EQ(matmul["dur"].get<double>(), 213'333 / 1e6);  // 2713.333 - 2500 ns
  const json& args = matmul["args"];
  EXPECT_EQ(args["text"],
            isa::formatInstruction(program.stream(isa::Engine::kPe)[0], program, false));
  EXPECT_EQ(args["text"].get<std::string>().rfind("nc_matmul dst=psum", 0), 0u);
  EXPECT_EQ(args["index"], 0);
  EXPECT_EQ(args["cycles"], 512);
  EXPECT_EQ(args["variant"], "bf16");
  EXPECT_EQ(args["waits"], "s0>=2");
  EXPECT_EQ(args["signals"], "s1+=1");
  EXPECT_DOUBLE_EQ(args["waited_ns"].get<double>(), 2500.0);
  EXPECT_DOUBLE_EQ(args["throttle"].get<double>(), 0.5);
  EXPECT_EQ(args["flops"], 16'777'216);
  EXPECT_EQ(args["location"], "kernel.cpp:42");

  const json gelu = eventAt(trace, 1, 2.8);
  EXPECT_EQ(gelu["name"], "activation");
  EXPECT_DOUBLE_EQ(gelu["dur"].get<double>(), 0.5);
  EXPECT_EQ(gelu["args"]["waits"], "s1>=1 s3==0");
  EXPECT_EQ(gelu["args"]["signals"], "s2+=1 s4=0");
  EXPECT_DOUBLE_EQ(gelu["args"]["waited_ns"].get<double>(), 2700.0);
  EXPECT_EQ(gelu["args"]["location"], "");

  const json store = eventAt(trace, 4, 3.4);
  EXPECT_EQ(store["name"], "dma_copy");
  EXPECT_EQ(store["args"]["index"], 2);
  EXPECT_EQ(store["args"]["variant"], "");
  EXPECT_EQ(store["args"]["signals"], "");
  EXPECT_EQ(store["args"]["flops"], 0);

  const json firstLoad = eventAt(trace, 4, 0.0);
  EXPECT_EQ(firstLoad["args"]["waits"], "");
  EXPECT_DOUBLE_EQ(firstLoad["dur"].get<double>(), 0.01);
}

TEST(ProfileTrace, TransferEventSitsOnItsQueueTrack) {
  const isa::Program program = parseProgram();
  const json trace = writeAndParse(program, runStats());
  const json store = eventAt(trace, kDmaQueueTrackBase + 3, 4.7);
  EXPECT_EQ(store["name"], "dma_copy");
  EXPECT_DOUBLE_EQ(store["dur"].get<double>(), 0.8);
  const json& args = store["args"];
  EXPECT_EQ(args["bytes"], 262'144);
  EXPECT_EQ(args["hbm_bytes"], 262'144);
  EXPECT_EQ(args["descriptors"], 128);
  EXPECT_EQ(args["engines"], 16);
  EXPECT_DOUBLE_EQ(args["efficiency"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(args["issued_ns"].get<double>(), 3400.0);
  EXPECT_EQ(args["text"],
            isa::formatInstruction(program.stream(isa::Engine::kSp)[2], program, false));
  EXPECT_NE(args["text"].get<std::string>().find("queue=3"), std::string::npos);

  const json secondLoad = eventAt(trace, kDmaQueueTrackBase + 1, 1.31);
  EXPECT_DOUBLE_EQ(secondLoad["dur"].get<double>(), 1.19);
  EXPECT_EQ(secondLoad["args"]["bytes"], 131'072);
}

TEST(ProfileTrace, RepeatedExecutionsGiveOneEventEach) {
  core::RunStats stats = runStats();
  stats.records.push_back(record(isa::Engine::kPe, 0, ns(3300), ns(3300), ns(3400), 512));
  stats.instructions = 6;
  const json trace = writeAndParse(parseProgram(), stats);
  EXPECT_EQ(completeEvents(trace).size(), 9u);
  EXPECT_EQ(eventAt(trace, 0, 3.3)["args"]["text"], eventAt(trace, 0, 2.5)["args"]["text"]);
}

TEST(ProfileTrace, EmptyRunGivesOnlyTheProcessName) {
  core::RunStats stats;
  stats.mode = core::RunMode::kTimingOnly;
  const json trace = writeAndParse(parseProgram(), stats);
  ASSERT_EQ(trace["traceEvents"].size(), 1u);
  EXPECT_EQ(trace["traceEvents"][0]["name"], "process_name");
  EXPECT_EQ(trace["otherData"]["mode"], "timing-only");
  EXPECT_EQ(trace["otherData"]["total_ps"], 0);
}

TEST(ProfileTrace, RecordsThatDoNotMatchTheProgramAreRejected) {
  const isa::Program program = parseProgram();

  core::RunStats badIndex = runStats();
  badIndex.records[3].index = 1;  // act has one instruction
  std::ostringstream out;
  Status status = writeTrace(out, program, badIndex);
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("act instruction 1"), std::string::npos) << status.toString();
  EXPECT_TRUE(out.str().empty());

  core::RunStats badIssuer = runStats();
  badIssuer.transfers[2].instruction = 5;
  status = writeTrace(out, program, badIssuer);
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("instruction record 5"), std::string::npos) << status.toString();

  core::RunStats notRecorded = runStats();
  notRecorded.records.clear();
  notRecorded.transfers.clear();
  status = writeTrace(out, program, notRecorded);
  EXPECT_EQ(status.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("record"), std::string::npos) << status.toString();
  EXPECT_TRUE(out.str().empty());
}

TEST(ProfileTrace, WritesAFile) {
  const std::string path = ::testing::TempDir() + "trn_profile_trace_test.json";
  const Status status = writeTraceFile(path, parseProgram(), runStats());
  ASSERT_TRUE(status.ok()) << status.toString();
  std::ifstream in(path);
  const json trace = json::parse(in);
  EXPECT_EQ(completeEvents(trace).size(), 8u);
  std::filesystem::remove(path);
}

TEST(ProfileTrace, UnwritablePathIsAnErrorNamingIt) {
  const std::string path = ::testing::TempDir() + "no_such_directory/trace.json";
  const Status status = writeTraceFile(path, parseProgram(), runStats());
  EXPECT_EQ(status.code(), ErrorCode::kIoError);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.toString();
}

TEST(ProfileTrace, SequenceLaysRunsEndToEndAsProcesses) {
  const isa::Program program = parseProgram();
  const core::RunStats first = runStats();
  core::RunStats second = runStats();
  second.total = ns(7000);
  const std::vector<TraceSegment> segments = {{"rmsnorm", &program, &first},
                                              {"attention", &program, &second}};
  std::ostringstream out;
  const Status status = writeSequenceTrace(out, segments);
  ASSERT_TRUE(status.ok()) << status.toString();
  const json trace = json::parse(out.str());
  std::map<int, std::string> processes;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "process_name") {
      processes[event["pid"].get<int>()] = event["args"]["name"].get<std::string>();
    }
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{0, "rmsnorm"}, {1, "attention"}}));
  // The matmul started at 2.5 us in both runs; the second run starts when the first ended (5.5).
  int matmuls = 0;
  for (const json& event : completeEvents(trace)) {
    if (event["name"] == "nc_matmul") {
      ++matmuls;
      EXPECT_EQ(event["ts"].get<double>(), event["pid"] == 0 ? 2.5 : 8.0);
    }
    if (event["pid"] == 1 && event["cat"] == "dma" && event["tid"] == 103) {
      EXPECT_EQ(event["ts"].get<double>(), 5.5 + 4.7);
    }
  }
  EXPECT_EQ(matmuls, 2);
  EXPECT_EQ(completeEvents(trace).size(), 16u);
  EXPECT_EQ(trace["otherData"]["total_ps"], 12'500'000);
  ASSERT_EQ(trace["otherData"]["runs"].size(), 2u);
  EXPECT_EQ(trace["otherData"]["runs"][1]["name"], "attention");
  EXPECT_EQ(trace["otherData"]["runs"][1]["total_ps"], 7'000'000);
}

TEST(ProfileTrace, SequenceErrorsNameTheSegment) {
  const isa::Program program = parseProgram();
  const core::RunStats good = runStats();
  core::RunStats bad = runStats();
  bad.records[3].index = 1;
  const std::vector<TraceSegment> segments = {{"rmsnorm", &program, &good},
                                              {"rope", &program, &bad}};
  std::ostringstream out;
  const Status status = writeSequenceTrace(out, segments);
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("trace segment 1 ('rope')"), std::string::npos)
      << status.toString();
  EXPECT_TRUE(out.str().empty());
}

std::vector<json> eventsOfPhase(const json& trace, std::string_view phase) {
  std::vector<json> events;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == phase) {
      events.push_back(event);
    }
  }
  return events;
}

// Each wait that blocked is a flow from the slice that signalled to the slice it released: the
// second load (its transfer on queue 1) to the matmul, the matmul to the GELU, the GELU to the
// store. The store's own signal-free wait(s3==0) held from the start: no flow.
TEST(ProfileTrace, SemaphoreHandOffsAreFlows) {
  const json trace = writeAndParse(parseProgram(), runStats());
  const std::vector<json> starts = eventsOfPhase(trace, "s");
  const std::vector<json> finishes = eventsOfPhase(trace, "f");
  ASSERT_EQ(starts.size(), 3u);
  ASSERT_EQ(finishes.size(), 3u);
  EXPECT_EQ(starts[0]["tid"], kDmaQueueTrackBase + 1);
  EXPECT_DOUBLE_EQ(starts[0]["ts"].get<double>(), 1.31);
  EXPECT_EQ(finishes[0]["tid"], 0);
  EXPECT_DOUBLE_EQ(finishes[0]["ts"].get<double>(), 2.5);
  EXPECT_EQ(finishes[0]["bp"], "e");
  EXPECT_EQ(starts[0]["name"], "s0");
  EXPECT_EQ(starts[1]["tid"], 0);
  EXPECT_EQ(finishes[1]["tid"], 1);
  EXPECT_EQ(starts[2]["tid"], 1);
  EXPECT_EQ(finishes[2]["tid"], 4);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    EXPECT_EQ(starts[i]["id"], finishes[i]["id"]);
  }
}

// Bandwidth and transfers-in-flight counters over 2 x 3 transfers = 6 stretches of the run,
// back to 0 at its end.
TEST(ProfileTrace, DmaCounterTracks) {
  const json trace = writeAndParse(parseProgram(), runStats());
  std::vector<json> counters;
  std::vector<json> memory;
  for (const json& event : eventsOfPhase(trace, "C")) {
    (event["name"].get<std::string>().starts_with("DMA") ? counters : memory).push_back(event);
  }
  ASSERT_EQ(counters.size(), 14u);
  EXPECT_EQ(counters[0]["name"], "DMA bandwidth, GB/s");
  EXPECT_EQ(counters[1]["name"], "DMA transfers moving data");
  EXPECT_DOUBLE_EQ(counters.back()["ts"].get<double>(), 5.5);
  EXPECT_DOUBLE_EQ(counters.back()["args"]["transfers"].get<double>(), 0.0);
  // Stretch 1 (916.7..1833.3 ns): the first two loads move data from 1300 and 1310 ns.
  EXPECT_GT(counters[3]["args"]["transfers"].get<double>(), 1.0);
  // SBUF and PSUM in use (memory_use.h), a pair of counters per change. The first load's
  // 256 B x 128 partitions (32 KiB) come into use when its data starts to move.
  ASSERT_FALSE(memory.empty());
  EXPECT_EQ(memory[0]["name"], "SBUF in use, KiB");
  EXPECT_EQ(memory[1]["name"], "PSUM in use, KiB");
  EXPECT_DOUBLE_EQ(memory[0]["ts"].get<double>(), 1.3);
  EXPECT_DOUBLE_EQ(memory[0]["args"]["KiB"].get<double>(), 32.0);
  EXPECT_DOUBLE_EQ(memory.back()["args"]["KiB"].get<double>(), 0.0);
}

// DMA slices carry their instruction's source line; absolute paths are shown relative to the
// files' project (here their common directory: there is no .git above it).
TEST(ProfileTrace, SourceLinesOnDmaSlicesRelativeToTheProject) {
  constexpr std::string_view kText = R"(
.tensor a input bf16 [128, 128]
sp:  dma_copy dst=sbuf[0:128]:bf16[[1,128]] src=hbm:a:bf16[[128,128],[1,128]] queue=0 signal(s0+=1) loc=/nonexistent/proj/k.cpp:7
pe:  nc_matmul dst=psum[0:128]:fp32[[1,128]] stationary=sbuf[0:128]:bf16[[1,128]] moving=sbuf[0:128]:bf16[[1,128]] wait(s0>=1) loc=/nonexistent/proj/sub/m.cpp:9
)";
  Result<isa::Program> program = isa::parseProgramText(kText, "loc.tasm");
  ASSERT_TRUE(program.ok()) << program.status().toString();
  core::RunStats stats;
  stats.mode = core::RunMode::kTimingOnly;
  stats.instructions = 2;
  stats.total = ns(2000);
  stats.records = {record(isa::Engine::kSp, 0, ns(0), ns(0), ns(10), 12),
                   record(isa::Engine::kPe, 0, ns(0), ns(1600), ns(1800), 128)};
  stats.transfers = {transfer(0, 0, ns(0), ns(1300), ns(1500), 32'768)};
  const json trace = writeAndParse(*program, stats);
  EXPECT_EQ(eventAt(trace, kDmaQueueTrackBase, 1.3)["args"]["location"], "k.cpp:7");
  EXPECT_EQ(eventAt(trace, 0, 1.6)["args"]["location"], "sub/m.cpp:9");
}

}  // namespace
}  // namespace trn::profile
