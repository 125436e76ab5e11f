#include "trn/profile/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <vector>

#include "trn/isa/enums.h"
#include "trn/isa/program_text.h"
#include "trn/profile/dependencies.h"
#include "trn/profile/memory_use.h"
#include "trn/profile/source_paths.h"

namespace trn::profile {
namespace {

using Json = nlohmann::ordered_json;

/// Where one run goes in the trace: its process id, its name, and the time it starts at.
struct Placement {
  int pid = 0;
  std::string name = "NeuronCore";
  Picoseconds offset;
};

/// The Neuron profiler's name of each engine, shown next to the short name on its track.
std::string_view engineTitle(isa::Engine engine) {
  constexpr std::array<std::string_view, isa::kNumEngines> kTitles = {"Tensor", "Scalar", "Vector",
                                                                      "GpSimd", "Sync"};
  return kTitles[static_cast<std::size_t>(engine)];
}

int engineTrack(isa::Engine engine) { return static_cast<int>(engine); }
std::int64_t queueTrack(std::int32_t queue) { return std::int64_t{kDmaQueueTrackBase} + queue; }

double microseconds(Picoseconds time) { return static_cast<double>(time.count()) / 1e6; }
double nanoseconds(Picoseconds time) { return static_cast<double>(time.count()) / 1e3; }

/// "s3>=2 s4==1", as inside program text's wait(...); "" when there are none.
std::string formatWaits(const isa::Sync& sync) {
  std::string out;
  for (const isa::SemaphoreWait& wait : sync.waits) {
    out += fmt::format("{}s{}{}{}", out.empty() ? "" : " ", wait.semaphore,
                       isa::enumName(wait.compare), wait.value);
  }
  return out;
}

/// "s1+=1 s2=0", as inside program text's signal(...); "" when there are none.
std::string formatSignals(const isa::Sync& sync) {
  std::string out;
  for (const isa::SemaphoreUpdate& update : sync.updates) {
    out += fmt::format("{}s{}{}{}", out.empty() ? "" : " ", update.semaphore,
                       isa::enumName(update.op), update.value);
  }
  return out;
}

/// "file:line", or "" when the location is unknown.
std::string formatLocation(const isa::SourceLocation& location) {
  return location.file.empty() ? std::string() : fmt::format("{}:{}", location.file, location.line);
}

/// Checks that every record refers to the program and to an existing instruction record.
Status validate(const isa::Program& program, const core::RunStats& stats) {
  if (stats.instructions > 0 && stats.records.empty()) {
    return failedPrecondition(
        fmt::format("the run executed {} instructions but kept no records; run with recording on "
                    "(CoreOptions::record) to write a trace",
                    stats.instructions));
  }
  for (std::size_t i = 0; i < stats.records.size(); ++i) {
    const core::InstructionRecord& record = stats.records[i];
    if (static_cast<int>(record.engine) >= isa::kNumEngines) {
      return invalidArgument(
          fmt::format("instruction record {} names engine {}, which does not exist", i,
                      static_cast<int>(record.engine)));
    }
    const std::size_t length = program.stream(record.engine).size();
    if (record.index >= length) {
      return invalidArgument(fmt::format(
          "instruction record {} is {} instruction {}, but the program's {} stream has {} "
          "instructions",
          i, isa::engineName(record.engine), record.index, isa::engineName(record.engine), length));
    }
  }
  for (std::size_t i = 0; i < stats.transfers.size(); ++i) {
    const core::TransferRecord& transfer = stats.transfers[i];
    if (transfer.instruction >= stats.records.size()) {
      return invalidArgument(
          fmt::format("transfer record {} was issued by instruction record {}, but the run has {} "
                      "instruction records",
                      i, transfer.instruction, stats.records.size()));
    }
    if (transfer.queue < 0) {
      return invalidArgument(fmt::format(
          "transfer record {} is on DMA queue {}; queues are numbered from 0", i, transfer.queue));
    }
  }
  return {};
}

/// `value` as JSON text: strings quoted and escaped (invalid UTF-8 replaced), numbers exact.
std::string toJson(const Json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// A number as JSON in its shortest round-trip form; JSON has no NaN or infinity, so null.
std::string jsonNumber(double value) {
  return std::isfinite(value) ? fmt::format("{}", value) : std::string("null");
}

/// Writes the members of the "traceEvents" array, separated by commas, one per line.
class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) {}

  void write(const Json& event) {
    separate();
    out_ << toJson(event);
  }

  /// An event already serialised as a JSON object.
  void write(const fmt::memory_buffer& event) {
    separate();
    out_.write(event.data(), static_cast<std::streamsize>(event.size()));
  }

 private:
  void separate() {
    out_ << (first_ ? "\n" : ",\n");
    first_ = false;
  }

  std::ostream& out_;
  bool first_ = true;
};

/// The serialised parts of an instruction's events that are the same on every execution.
struct InstructionJson {
  std::string name;       ///< the mnemonic, as a JSON string
  std::string text;       ///< the instruction text, as a JSON string
  std::string fixedArgs;  ///< "text", "waits", "signals" and "location" members of args
  std::string location;   ///< the source location, as a JSON string
};

/// InstructionJson of each instruction, built on first use. Loop bodies execute many times, and
/// formatting and escaping each instruction once rather than per execution keeps large traces
/// fast to write.
class InstructionJsonCache {
 public:
  InstructionJsonCache(const isa::Program& program, const SourcePaths& paths)
      : program_(program), paths_(paths) {
    for (const isa::Engine engine : isa::kAllEngines) {
      entries_[static_cast<std::size_t>(engine)].resize(program.stream(engine).size());
    }
  }

  const InstructionJson& get(isa::Engine engine, std::uint32_t index) {
    std::optional<InstructionJson>& entry = entries_[static_cast<std::size_t>(engine)][index];
    if (!entry) {
      const isa::Instruction& instr = program_.stream(engine)[index];
      InstructionJson json;
      json.name = toJson(isa::info(instr.body).mnemonic);
      json.text = toJson(isa::formatInstruction(instr, program_, false));
      isa::SourceLocation location = instr.location;
      location.file = paths_.relative(location.file);
      json.location = toJson(formatLocation(location));
      json.fixedArgs = fmt::format(R"("text":{},"waits":{},"signals":{},"location":{})", json.text,
                                   toJson(formatWaits(instr.sync)),
                                   toJson(formatSignals(instr.sync)), json.location);
      entry = std::move(json);
    }
    return *entry;
  }

 private:
  const isa::Program& program_;
  const SourcePaths& paths_;
  std::array<std::vector<std::optional<InstructionJson>>, isa::kNumEngines> entries_;
};

/// Cost-class variant names as JSON strings (few distinct names, many executions).
class VariantJsonCache {
 public:
  const std::string& get(std::string_view variant) {
    auto found = entries_.find(variant);
    if (found == entries_.end()) {
      found = entries_.emplace(std::string(variant), toJson(variant)).first;
    }
    return found->second;
  }

 private:
  std::map<std::string, std::string, std::less<>> entries_;
};

Json metadataEvent(std::string_view name, int pid, std::int64_t track, Json args) {
  return Json{{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", track}, {"args", std::move(args)}};
}

void writeTrackNames(EventWriter& writer, const core::RunStats& stats, const Placement& place) {
  std::array<bool, isa::kNumEngines> engineActive{};
  for (const core::InstructionRecord& record : stats.records) {
    engineActive[static_cast<std::size_t>(record.engine)] = true;
  }
  std::set<std::int32_t> queues;
  for (const core::TransferRecord& transfer : stats.transfers) {
    queues.insert(transfer.queue);
  }

  writer.write(metadataEvent("process_name", place.pid, 0, Json{{"name", place.name}}));
  for (const isa::Engine engine : isa::kAllEngines) {
    if (!engineActive[static_cast<std::size_t>(engine)]) {
      continue;
    }
    const int track = engineTrack(engine);
    writer.write(metadataEvent(
        "thread_name", place.pid, track,
        Json{{"name", fmt::format("{} ({})", isa::engineName(engine), engineTitle(engine))}}));
    writer.write(metadataEvent("thread_sort_index", place.pid, track, Json{{"sort_index", track}}));
  }
  for (const std::int32_t queue : queues) {
    const std::int64_t track = queueTrack(queue);
    writer.write(metadataEvent("thread_name", place.pid, track,
                               Json{{"name", fmt::format("dma queue {}", queue)}}));
    writer.write(metadataEvent("thread_sort_index", place.pid, track, Json{{"sort_index", track}}));
  }
}

/// The complete ("X") event of one execution of an instruction.
void formatInstructionEvent(fmt::memory_buffer& out, const core::InstructionRecord& record,
                            const InstructionJson& instr, const std::string& variant,
                            const Placement& place) {
  out.clear();
  fmt::format_to(std::back_inserter(out),
                 R"({{"name":{},"cat":"instruction","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},)"
                 R"("args":{{{},"index":{},"cycles":{},"variant":{},"waited_ns":{},"throttle":{},)"
                 R"("flops":{}}}}})",
                 instr.name, place.pid, engineTrack(record.engine),
                 jsonNumber(microseconds(place.offset + record.start)),
                 jsonNumber(microseconds(record.end - record.start)), instr.fixedArgs, record.index,
                 record.cycles, variant, jsonNumber(nanoseconds(record.start - record.ready)),
                 jsonNumber(record.throttle), record.flops);
}

/// The complete ("X") event of one DMA transfer, on its queue's track.
void formatTransferEvent(fmt::memory_buffer& out, const core::TransferRecord& transfer,
                         const InstructionJson& issuer, const Placement& place) {
  out.clear();
  fmt::format_to(std::back_inserter(out),
                 R"({{"name":{},"cat":"dma","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},)"
                 R"("args":{{"bytes":{},"hbm_bytes":{},"descriptors":{},"engines":{},)"
                 R"("efficiency":{},"issued_ns":{},"text":{},"location":{}}}}})",
                 issuer.name, place.pid, queueTrack(transfer.queue),
                 jsonNumber(microseconds(place.offset + transfer.start)),
                 jsonNumber(microseconds(transfer.end - transfer.start)), transfer.bytes,
                 transfer.hbmBytes, transfer.descriptors, transfer.engines,
                 jsonNumber(transfer.efficiency), jsonNumber(nanoseconds(transfer.issued)),
                 issuer.text, issuer.location);
}

/// The project root of the run's source files (source_paths.h).
SourcePaths sourcePaths(const isa::Program& program, const core::RunStats& stats) {
  std::set<std::string_view> seen;
  for (const core::InstructionRecord& record : stats.records) {
    seen.insert(program.stream(record.engine).locationFile(record.index));
  }
  const std::vector<std::string> files(seen.begin(), seen.end());
  return SourcePaths(files);
}

/// A flow ("s" then "f") from the slice that signalled to the slice whose wait it released,
/// for each wait that blocked; `nextFlow` numbers them across the trace.
void writeFlows(EventWriter& writer, const isa::Program& program, const core::RunStats& stats,
                const Placement& place, std::int64_t& nextFlow) {
  const Result<std::vector<Dependency>> deps = findDependencies(program, stats);
  if (!deps.ok()) {
    return;  // validate() has accepted the records, so this does not happen
  }
  fmt::memory_buffer event;
  for (const Dependency& d : *deps) {
    if (!d.blocked) {
      continue;
    }
    const core::InstructionRecord& to = stats.records[static_cast<std::size_t>(d.to)];
    std::int64_t fromTrack = 0;
    Picoseconds fromTime;
    if (d.fromTransfer >= 0) {
      const core::TransferRecord& t = stats.transfers[static_cast<std::size_t>(d.fromTransfer)];
      fromTrack = queueTrack(t.queue);
      fromTime = t.start;
    } else {
      const core::InstructionRecord& r = stats.records[static_cast<std::size_t>(d.fromRecord)];
      fromTrack = engineTrack(r.engine);
      fromTime = r.start;
    }
    const std::int64_t id = nextFlow++;
    event.clear();
    fmt::format_to(std::back_inserter(event),
                   R"({{"name":"s{}","cat":"semaphore","ph":"s","id":{},"pid":{},"tid":{},)"
                   R"("ts":{}}})",
                   d.semaphore, id, place.pid, fromTrack,
                   jsonNumber(microseconds(place.offset + fromTime)));
    writer.write(event);
    event.clear();
    fmt::format_to(
        std::back_inserter(event),
        R"({{"name":"s{}","cat":"semaphore","ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{}}})",
        d.semaphore, id, place.pid, engineTrack(to.engine),
        jsonNumber(microseconds(place.offset + to.start)));
    writer.write(event);
  }
}

constexpr std::size_t kCounterBins = 1000;

/// Counter tracks of SBUF and PSUM in use (memory_use.h), in KiB: every change, or past
/// 2 x kCounterBins changes the largest use in each of kCounterBins stretches.
void writeMemoryCounters(EventWriter& writer, const isa::Program& program,
                         const core::RunStats& stats, const Placement& place) {
  const Result<MemoryUse> use = memoryUse(program, stats);
  if (!use.ok() || use->samples.empty()) {
    return;
  }
  std::vector<std::pair<Picoseconds, std::pair<std::int64_t, std::int64_t>>> points;
  if (use->samples.size() <= 2 * kCounterBins) {
    for (const MemoryUseSample& sample : use->samples) {
      points.emplace_back(sample.time, std::pair(sample.sbufBytes, sample.psumBytes));
    }
  } else {
    const auto bins = peakPerBin(*use, stats.total, kCounterBins);
    for (std::size_t b = 0; b < bins.size(); ++b) {
      points.emplace_back(Picoseconds(stats.total.count() * static_cast<std::int64_t>(b) /
                                      static_cast<std::int64_t>(kCounterBins)),
                          bins[b]);
    }
    points.emplace_back(stats.total, std::pair<std::int64_t, std::int64_t>(0, 0));
  }
  fmt::memory_buffer event;
  for (const auto& [time, bytes] : points) {
    event.clear();
    fmt::format_to(std::back_inserter(event),
                   R"({{"name":"SBUF in use, KiB","ph":"C","pid":{},"ts":{},"args":{{"KiB":{}}}}})",
                   place.pid, jsonNumber(microseconds(place.offset + time)),
                   jsonNumber(static_cast<double>(bytes.first) / 1024.0));
    writer.write(event);
    event.clear();
    fmt::format_to(std::back_inserter(event),
                   R"({{"name":"PSUM in use, KiB","ph":"C","pid":{},"ts":{},"args":{{"KiB":{}}}}})",
                   place.pid, jsonNumber(microseconds(place.offset + time)),
                   jsonNumber(static_cast<double>(bytes.second) / 1024.0));
    writer.write(event);
  }
}

/// Counter tracks of the run: the DMA bandwidth (GB/s) and the transfers in flight, each
/// averaged over up to kCounterBins stretches of the run.
void writeCounters(EventWriter& writer, const core::RunStats& stats, const Placement& place) {
  if (stats.transfers.empty() || stats.total.count() <= 0) {
    return;
  }
  const std::size_t bins = std::min(kCounterBins, 2 * stats.transfers.size());
  const double width = static_cast<double>(stats.total.count()) / static_cast<double>(bins);
  std::vector<double> bytes(bins, 0.0);
  std::vector<double> busy(bins, 0.0);  ///< transfer-picoseconds of data moving
  for (const core::TransferRecord& t : stats.transfers) {
    const auto s = static_cast<double>(t.start.count());
    const double e = std::max(s + 1, static_cast<double>(t.end.count()));
    const double rate = static_cast<double>(t.bytes) / (e - s);
    for (auto b = static_cast<std::size_t>(s / width);
         b < bins && static_cast<double>(b) * width < e; ++b) {
      const double overlap = std::min(e, static_cast<double>(b + 1) * width) -
                             std::max(s, static_cast<double>(b) * width);
      bytes[b] += rate * std::max(0.0, overlap);
      busy[b] += std::max(0.0, overlap);
    }
  }
  fmt::memory_buffer event;
  for (std::size_t b = 0; b <= bins; ++b) {
    const double ts = microseconds(place.offset) + static_cast<double>(b) * width / 1e6;
    const double gbps = b < bins ? bytes[b] / width * 1e3 : 0.0;  // bytes per ps -> GB/s
    const double inFlight = b < bins ? busy[b] / width : 0.0;
    event.clear();
    fmt::format_to(std::back_inserter(event),
                   R"({{"name":"DMA bandwidth, GB/s","ph":"C","pid":{},"ts":{},)"
                   R"("args":{{"GB/s":{}}}}})",
                   place.pid, jsonNumber(ts), jsonNumber(gbps));
    writer.write(event);
    event.clear();
    fmt::format_to(
        std::back_inserter(event),
        R"({{"name":"DMA transfers moving data","ph":"C","pid":{},"ts":{},)"
        R"("args":{{"transfers":{}}}}})",
        place.pid, jsonNumber(ts), jsonNumber(inFlight));
    writer.write(event);
  }
}

/// Writes the events of one run at `place`; the run has been validated.
void writeRun(EventWriter& writer, const isa::Program& program, const core::RunStats& stats,
              const Placement& place, std::int64_t& nextFlow) {
  writeTrackNames(writer, stats, place);
  const SourcePaths paths = sourcePaths(program, stats);
  InstructionJsonCache instructions(program, paths);
  VariantJsonCache variants;
  fmt::memory_buffer event;
  for (const core::InstructionRecord& record : stats.records) {
    formatInstructionEvent(event, record, instructions.get(record.engine, record.index),
                           variants.get(record.variant), place);
    writer.write(event);
  }
  for (const core::TransferRecord& transfer : stats.transfers) {
    const core::InstructionRecord& issuer = stats.records[transfer.instruction];
    formatTransferEvent(event, transfer, instructions.get(issuer.engine, issuer.index), place);
    writer.write(event);
  }
  writeFlows(writer, program, stats, place, nextFlow);
  writeCounters(writer, stats, place);
  writeMemoryCounters(writer, program, stats, place);
}

/// Writes the whole document: the validated runs one after another, then `otherData`.
Status writeDocument(std::ostream& out, std::span<const TraceSegment> segments,
                     std::span<const Placement> placements, const Json& otherData) {
  out << "{\"traceEvents\":[";
  EventWriter writer(out);
  std::int64_t nextFlow = 1;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    writeRun(writer, *segments[i].program, *segments[i].stats, placements[i], nextFlow);
  }
  out << "\n],\"displayTimeUnit\":\"ns\",\"otherData\":" << toJson(otherData) << "}\n";
  if (!out) {
    return ioError("writing the trace failed");
  }
  return {};
}

Json runData(const core::RunStats& stats) {
  return Json{{"mode", core::runModeName(stats.mode)},
              {"total_ps", stats.total.count()},
              {"instructions", stats.instructions}};
}

/// Validates the segments and places them end to end, or all from time 0 when they ran
/// `together` (the cores of one run); names each error's segment.
Result<std::vector<Placement>> placeSegments(std::span<const TraceSegment> segments,
                                             bool together = false) {
  std::vector<Placement> placements;
  Picoseconds offset;
  Picoseconds stepEnd;  ///< the end of the longest core of the current step
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const TraceSegment& segment = segments[i];
    if (const Status status = validate(*segment.program, *segment.stats); !status.ok()) {
      return Status(status.code(),
                    fmt::format("trace segment {} ('{}'): {}", i, segment.name, status.message()));
    }
    const bool sameStep = i > 0 && segment.step >= 0 && segment.step == segments[i - 1].step;
    if (!together && !sameStep) {
      offset = stepEnd;
    }
    placements.push_back(Placement{static_cast<int>(i), segment.name, offset});
    stepEnd = std::max(stepEnd, offset + segment.stats->total);
  }
  return placements;
}

/// Opens `path`, runs `write` on it and reports errors with the path.
Status writeFile(const std::string& path, const std::function<Status(std::ostream&)>& write) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file.is_open()) {
    return ioError(
        fmt::format("cannot open trace file '{}' for writing: {}", path, std::strerror(errno)));
  }
  if (const Status status = write(file); !status.ok()) {
    return ioError(fmt::format("cannot write trace file '{}': {}", path, status.message()));
  }
  file.close();
  if (!file) {
    return ioError(fmt::format("cannot write trace file '{}': closing it failed", path));
  }
  return {};
}

}  // namespace

Status writeTrace(std::ostream& out, const isa::Program& program, const core::RunStats& stats) {
  TRN_RETURN_IF_ERROR(validate(program, stats));
  const TraceSegment segment{"NeuronCore", &program, &stats};
  const Placement place;
  return writeDocument(out, {&segment, 1}, {&place, 1}, runData(stats));
}

Status writeTraceFile(const std::string& path, const isa::Program& program,
                      const core::RunStats& stats) {
  TRN_RETURN_IF_ERROR(validate(program, stats));
  const TraceSegment segment{"NeuronCore", &program, &stats};
  const Placement place;
  return writeFile(path, [&](std::ostream& out) {
    return writeDocument(out, {&segment, 1}, {&place, 1}, runData(stats));
  });
}

/// otherData of a sequence: the total and each run's figures.
Json sequenceData(std::span<const TraceSegment> segments) {
  Json runs = Json::array();
  std::int64_t total = 0;
  std::int64_t step = 0;  ///< the longest core of the current step
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const TraceSegment& segment = segments[i];
    Json run = runData(*segment.stats);
    run["name"] = segment.name;
    runs.push_back(std::move(run));
    if (i == 0 || segment.step < 0 || segment.step != segments[i - 1].step) {
      total += step;
      step = 0;
    }
    step = std::max(step, segment.stats->total.count());
  }
  return Json{{"total_ps", total + step}, {"runs", runs}};
}

Status writeSequenceTrace(std::ostream& out, std::span<const TraceSegment> segments) {
  TRN_ASSIGN_OR_RETURN(const std::vector<Placement> placements, placeSegments(segments));
  return writeDocument(out, segments, placements, sequenceData(segments));
}

/// otherData of cores run together: the longest total and each core's figures.
Json coresData(std::span<const TraceSegment> segments) {
  Json cores = Json::array();
  std::int64_t total = 0;
  for (const TraceSegment& segment : segments) {
    Json core = runData(*segment.stats);
    core["name"] = segment.name;
    cores.push_back(std::move(core));
    total = std::max(total, segment.stats->total.count());
  }
  return Json{{"total_ps", total}, {"cores", cores}};
}

Status writeCoresTraceFile(const std::string& path, std::span<const TraceSegment> cores) {
  if (cores.size() == 1) {
    return writeTraceFile(path, *cores.front().program, *cores.front().stats);
  }
  TRN_ASSIGN_OR_RETURN(const std::vector<Placement> placements, placeSegments(cores, true));
  return writeFile(path, [&](std::ostream& out) {
    return writeDocument(out, cores, placements, coresData(cores));
  });
}

Status writeSequenceTraceFile(const std::string& path, std::span<const TraceSegment> segments) {
  TRN_ASSIGN_OR_RETURN(const std::vector<Placement> placements, placeSegments(segments));
  return writeFile(path, [&](std::ostream& out) {
    return writeDocument(out, segments, placements, sequenceData(segments));
  });
}

}  // namespace trn::profile
