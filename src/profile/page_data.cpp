#include "trn/profile/page_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>

#include "trn/isa/enums.h"
#include "trn/isa/program_text.h"
#include "trn/profile/critical_path.h"
#include "trn/profile/dependencies.h"
#include "trn/profile/memory_use.h"
#include "trn/profile/report.h"
#include "trn/profile/slice_groups.h"
#include "trn/profile/source_paths.h"
#include "trn/profile/verdict.h"

namespace trn::profile {
namespace {

using Json = nlohmann::ordered_json;

/// Nanoseconds, with the picoseconds as 3 decimals.
double ns3(Picoseconds t) { return std::round(static_cast<double>(t.count())) / 1e3; }

std::string waitsText(std::span<const isa::SemaphoreWait> waits) {
  std::string out;
  for (const isa::SemaphoreWait& w : waits) {
    out += fmt::format("{}s{}{}{}", out.empty() ? "" : " ", w.semaphore, isa::enumName(w.compare),
                       w.value);
  }
  return out;
}

std::string updatesText(std::span<const isa::SemaphoreUpdate> updates) {
  std::string out;
  for (const isa::SemaphoreUpdate& u : updates) {
    out += fmt::format("{}s{}{}{}", out.empty() ? "" : " ", u.semaphore, isa::enumName(u.op),
                       u.value);
  }
  return out;
}

/// One slice before aggregation.
struct Slice {
  std::int32_t track = 0;
  Picoseconds start;
  Picoseconds end;
  std::uint32_t run = 0;
  std::uint32_t record = 0;  ///< the instruction (a transfer's issuer) in the run's records
  Picoseconds waited;       ///< start - ready (instructions)
  std::int64_t cycles = 0;
  std::int64_t bytes = 0;  ///< transfers
  bool critical = false;
  bool transfer = false;
};

/// Everything per run the builder needs after the first pass.
struct RunData {
  std::vector<Dependency> deps;
  CriticalPath path;
  std::vector<PathSegment> outline;  ///< the segments on this run's records that are critical
  std::vector<std::int32_t> engineTrack;  ///< per engine, -1 when idle
  std::map<std::int32_t, std::int32_t> queueTrack;
};

class Builder {
 public:
  Builder(const std::vector<PageRun>& runs, const spec::ChipSpec& chip, const PageOptions& options)
      : runs_(runs), chip_(chip), options_(options) {}

  Result<Json> build(PageSummary* summary) {
    TRN_RETURN_IF_ERROR(check());
    std::set<std::string_view> seen;
    for (const PageRun& run : runs_) {
      for (const core::InstructionRecord& r : run.stats->records) {
        seen.insert(run.program->stream(r.engine).locationFile(r.index));
      }
    }
    const std::vector<std::string> files(seen.begin(), seen.end());
    paths_ = SourcePaths(files);
    makeTracks();
    TRN_RETURN_IF_ERROR(findGroupPaths());
    Json page{{"kind", "cores"}, {"title", options_.title}, {"chip", chip_.name},
              {"generator", "trnsim"}};
    Json runsJson = Json::array();
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      TRN_ASSIGN_OR_RETURN(Json run, analyseRun(i));
      runsJson.push_back(std::move(run));
    }
    page["total_ns"] = ns3(end_);
    page["source_root"] = paths_.root();
    page["runs"] = std::move(runsJson);
    crossCoreArrows();
    page["tracks"] = tracks_;
    Json slices = slicesJson();  // fills the instruction table
    page["instrs"] = std::move(instrs_);
    page["slices"] = std::move(slices);
    page["arrows"] = arrows_;
    page["lines"] = linesJson();
    page["bandwidth"] = bandwidthJson();
    page["memory"] = memoryJson();
    if (summary != nullptr) {
      *summary = summary_;
      summary->arrows = arrows_.size();
      summary->lines = lines_.size();
    }
    return page;
  }

 private:
  Status check() const {
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const PageRun& run = runs_[i];
      if (run.program == nullptr || run.stats == nullptr) {
        return invalidArgument(fmt::format("report run {} ('{}') has no program or statistics", i,
                                           run.name));
      }
      if (!core::hasTiming(run.stats->mode)) {
        return failedPrecondition(fmt::format(
            "report run '{}' is {}: the report needs a timed run", run.name,
            core::runModeName(run.stats->mode)));
      }
      if (run.stats->instructions > 0 && run.stats->records.empty()) {
        return failedPrecondition(fmt::format(
            "report run '{}' executed {} instructions but kept no records; run with recording "
            "on (RunOptions::record)",
            run.name, run.stats->instructions));
      }
    }
    if (runs_.empty()) {
      return invalidArgument("the report has no runs");
    }
    return {};
  }

  /// The timeline's tracks: per lane in order of appearance, its engines in engine order, then
  /// its queues in queue order.
  void makeTracks() {
    std::vector<std::string> lanes;
    std::map<std::string, std::pair<std::array<bool, isa::kNumEngines>, std::set<std::int32_t>>>
        used;
    for (const PageRun& run : runs_) {
      const std::string lane = run.lane.empty() ? run.name : run.lane;
      if (!used.contains(lane)) {
        lanes.push_back(lane);
      }
      auto& [engines, queues] = used[lane];
      for (const core::InstructionRecord& r : run.stats->records) {
        engines[static_cast<std::size_t>(r.engine)] = true;
      }
      for (const core::TransferRecord& t : run.stats->transfers) {
        queues.insert(t.queue);
      }
    }
    for (const std::string& lane : lanes) {
      const std::string prefix = lanes.size() > 1 ? lane + " \u00b7 " : std::string();
      const auto& [engines, queues] = used.at(lane);
      for (std::size_t e = 0; e < engines.size(); ++e) {
        if (engines[e]) {
          trackIds_[{lane, static_cast<std::int32_t>(e)}] =
              static_cast<std::int32_t>(tracks_.size());
          const std::string_view engine = isa::engineName(isa::kAllEngines[e]);
          tracks_.push_back(Json{{"name", prefix + std::string(engine)}, {"kind", "engine"}});
        }
      }
      for (const std::int32_t queue : queues) {
        trackIds_[{lane, kQueueKey + queue}] = static_cast<std::int32_t>(tracks_.size());
        tracks_.push_back(
            Json{{"name", fmt::format("{}dma q{}", prefix, queue)}, {"kind", "queue"}});
      }
    }
  }

  /// The critical path across each pair of runs that ran together (PageRun::offset).
  Status findGroupPaths() {
    std::map<std::int64_t, std::vector<std::size_t>> members;
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      members[runs_[i].offset.count()].push_back(i);
    }
    for (const auto& [offset, runs] : members) {
      if (runs.size() != 2) {
        continue;
      }
      std::vector<const isa::Program*> programs;
      std::vector<const core::RunStats*> cores;
      for (const std::size_t i : runs) {
        programs.push_back(runs_[i].program);
        cores.push_back(runs_[i].stats);
      }
      TRN_ASSIGN_OR_RETURN(CriticalPath path, findCriticalPath(programs, cores));
      groups_.push_back(std::make_unique<GroupPath>(GroupPath{runs, std::move(path)}));
      for (std::size_t k = 0; k < runs.size(); ++k) {
        groupOf_[runs[k]] = {groups_.back().get(), static_cast<std::int32_t>(k)};
      }
    }
    return {};
  }

  /// The track of `engine` in the lane of run `index`.
  std::int32_t engineTrack(std::size_t index, isa::Engine engine) const {
    const PageRun& run = runs_[index];
    const auto found = trackIds_.find(
        {run.lane.empty() ? run.name : run.lane, static_cast<std::int32_t>(engine)});
    return found == trackIds_.end() ? -1 : found->second;
  }

  /// An arrow on the critical path where it changes core: from the last core's arrival at a
  /// barrier or sendrecv to the instruction it released on another core.
  void crossCoreArrows() {
    for (const std::unique_ptr<GroupPath>& group : groups_) {
      const std::vector<PathSegment>& segments = group->path.segments;
      for (std::size_t k = 1; k < segments.size(); ++k) {
        const PathSegment& s = segments[k];
        const PathSegment& before = segments[k - 1];
        if (s.cause != PathCause::kCrossCore || before.core == s.core) {
          continue;
        }
        const std::size_t from = group->runs[static_cast<std::size_t>(before.core)];
        const std::size_t to = group->runs[static_cast<std::size_t>(s.core)];
        const std::int32_t fromTrack = engineTrack(from, before.engine);
        const std::int32_t toTrack = engineTrack(to, s.engine);
        if (fromTrack >= 0 && toTrack >= 0 && arrows_.size() < options_.maxArrows) {
          arrows_.push_back(Json::array({fromTrack, ns3(runs_[from].offset + s.start), toTrack,
                                         ns3(runs_[to].offset + s.end), 1}));
        }
      }
    }
  }

  /// Key of a queue's track among a lane's engines.
  static constexpr std::int32_t kQueueKey = 1000;

  /// Row of the static instruction table for `record` of run `run`.
  std::int64_t instrRow(std::size_t run, const core::InstructionRecord& r) {
    const std::uint64_t key = (static_cast<std::uint64_t>(run) << 40) |
                              (static_cast<std::uint64_t>(r.engine) << 32) | r.index;
    const auto found = instrRows_.find(key);
    if (found != instrRows_.end()) {
      return found->second;
    }
    const isa::Program& program = *runs_[run].program;
    const isa::InstructionStream& stream = program.stream(r.engine);
    const std::string_view file = stream.locationFile(r.index);
    const std::string location =
        file.empty() ? std::string()
                     : fmt::format("{}:{}", paths_.relative(file), stream.locationLine(r.index));
    instrs_.push_back(Json::array({std::string(stream.info(r.index).mnemonic),
                                   isa::formatInstruction(stream[r.index], program, false),
                                   waitsText(stream.waits(r.index)),
                                   updatesText(stream.updates(r.index)), location}));
    const auto row = static_cast<std::int64_t>(instrs_.size() - 1);
    instrRows_.emplace(key, row);
    return row;
  }

  Result<Json> analyseRun(std::size_t index) {
    const PageRun& run = runs_[index];
    const core::RunStats& stats = *run.stats;
    RunData data;
    TRN_ASSIGN_OR_RETURN(data.deps, findDependencies(*run.program, stats));
    data.path = findCriticalPath(stats, data.deps);
    data.outline = data.path.segments;
    if (const auto found = groupOf_.find(index); found != groupOf_.end()) {
      data.outline.clear();
      for (const PathSegment& s : found->second.first->path.segments) {
        if (s.core == found->second.second) {
          data.outline.push_back(s);
        }
      }
    }
    const Report report = makeReport(stats, chip_);
    const Verdict verdict = decideVerdict(verdictFigures(report, stats, chip_, &data.path));
    summary_.verdicts.emplace_back(run.name, verdict.headline);
    end_ = std::max(end_, run.offset + stats.total);
    peak_ = std::max(peak_, report.dmaPeakBytesPerSecond);

    const std::string lane = run.lane.empty() ? run.name : run.lane;
    data.engineTrack.assign(isa::kNumEngines, -1);
    for (std::size_t e = 0; e < data.engineTrack.size(); ++e) {
      const auto found = trackIds_.find({lane, static_cast<std::int32_t>(e)});
      data.engineTrack[e] = found == trackIds_.end() ? -1 : found->second;
    }
    for (const core::TransferRecord& t : stats.transfers) {
      data.queueTrack[t.queue] = trackIds_.at({lane, kQueueKey + t.queue});
    }
    collectSlices(index, data);
    collectArrows(index, data);
    collectLines(index);
    collectBandwidth(run);
    TRN_ASSIGN_OR_RETURN(MemoryUse use, memoryUse(*run.program, stats));
    for (MemoryUseSample& sample : use.samples) {
      sample.time += run.offset;
    }
    memory_.push_back(std::move(use));

    Json engines = Json::array();
    for (const EngineUsage& e : report.engines) {
      if (e.instructions == 0) {
        continue;
      }
      engines.push_back(Json{{"engine", isa::engineName(e.engine)},
                             {"instructions", e.instructions},
                             {"busy_ns", ns3(e.busy)},
                             {"waiting_ns", ns3(e.waiting)},
                             {"idle_ns", ns3(e.idle)},
                             {"busy", e.busyFraction},
                             {"waiting", e.waitingFraction},
                             {"idle", e.idleFraction}});
    }
    const CriticalPath& p = data.path;
    Json compute = Json::object();
    for (std::size_t e = 0; e < p.compute.size(); ++e) {
      if (p.compute[e].count() > 0) {
        compute[std::string(isa::engineName(isa::kAllEngines[e]))] = ns3(p.compute[e]);
      }
    }
    return Json{
        {"name", run.name},
        {"lane", lane},
        {"offset_ns", ns3(run.offset)},
        {"total_ns", ns3(stats.total)},
        {"mode", core::runModeName(stats.mode)},
        {"instructions", stats.instructions},
        {"unrecorded", stats.unrecorded},
        {"flops", stats.flops},
        {"tflops", report.achievedTflops},
        {"pe_utilisation", report.peUtilisation},
        {"dma", Json{{"transfers", stats.dma.transfers},
                     {"bytes", stats.dma.bytes},
                     {"hbm_bytes", stats.dma.hbmBytes},
                     {"busy", report.dma.busyFraction},
                     {"efficiency", report.dma.efficiency},
                     {"peak_gbps", report.dmaPeakBytesPerSecond / 1e9}}},
        {"engines", std::move(engines)},
        {"verdict", Json{{"bound", boundName(verdict.bound)},
                         {"subject", verdict.subject},
                         {"headline", verdict.headline},
                         {"evidence", verdict.evidence},
                         {"remedies", verdict.remedies}}},
        {"path", Json{{"length_ns", ns3(p.length)},
                      {"compute_ns", std::move(compute)},
                      {"completion_ns", ns3(p.completion)},
                      {"semaphore_ns", ns3(p.semaphore)},
                      {"dma_issue_ns", ns3(p.dmaIssue)},
                      {"dma_data_ns", ns3(p.dmaData)},
                      {"dispatch_ns", ns3(p.dispatch)},
                      {"handoffs", p.handoffs},
                      {"transfers", p.transfers}}}};
  }

  void collectSlices(std::size_t index, const RunData& data) {
    const PageRun& run = runs_[index];
    const core::RunStats& stats = *run.stats;
    std::vector<bool> criticalRecord(stats.records.size(), false);
    std::vector<bool> criticalTransfer(stats.transfers.size(), false);
    for (const PathSegment& s : data.outline) {
      if (s.cause == PathCause::kCompute && s.record >= 0) {
        criticalRecord[static_cast<std::size_t>(s.record)] = true;
      }
      if (s.cause == PathCause::kDmaData && s.transfer >= 0) {
        criticalTransfer[static_cast<std::size_t>(s.transfer)] = true;
      }
    }
    for (std::size_t i = 0; i < stats.records.size(); ++i) {
      const core::InstructionRecord& r = stats.records[i];
      Slice s;
      s.track = data.engineTrack[static_cast<std::size_t>(r.engine)];
      s.start = run.offset + r.start;
      s.end = run.offset + r.end;
      s.run = static_cast<std::uint32_t>(index);
      s.record = static_cast<std::uint32_t>(i);
      s.waited = r.start - r.ready;
      s.cycles = r.cycles;
      s.critical = criticalRecord[i];
      slices_.push_back(s);
    }
    for (std::size_t i = 0; i < stats.transfers.size(); ++i) {
      const core::TransferRecord& t = stats.transfers[i];
      Slice s;
      s.track = data.queueTrack.at(t.queue);
      s.start = run.offset + t.start;
      s.end = run.offset + t.end;
      s.run = static_cast<std::uint32_t>(index);
      s.record = t.instruction;
      s.waited = t.start - t.issued;
      s.bytes = t.bytes;
      s.critical = criticalTransfer[i];
      s.transfer = true;
      slices_.push_back(s);
    }
  }

  /// Point of a dependency's start: the transfer's queue track, or the instruction's engine.
  void collectArrows(std::size_t index, const RunData& data) {
    const PageRun& run = runs_[index];
    const core::RunStats& stats = *run.stats;
    std::set<std::int64_t> onPath;
    for (const PathSegment& s : data.outline) {
      if (s.cause == PathCause::kSemaphore) {
        onPath.insert(s.record);
      }
    }
    auto arrow = [&](const Dependency& d) {
      const core::InstructionRecord& to = stats.records[static_cast<std::size_t>(d.to)];
      const std::int32_t from =
          d.fromTransfer >= 0
              ? data.queueTrack.at(stats.transfers[static_cast<std::size_t>(d.fromTransfer)].queue)
              : data.engineTrack[static_cast<std::size_t>(
                    stats.records[static_cast<std::size_t>(d.fromRecord)].engine)];
      arrows_.push_back(Json::array({from, ns3(run.offset + d.signalled),
                                     data.engineTrack[static_cast<std::size_t>(to.engine)],
                                     ns3(run.offset + to.start), onPath.contains(d.to) ? 1 : 0}));
    };
    for (const Dependency& d : data.deps) {
      if (d.blocked && onPath.contains(d.to) && arrows_.size() < options_.maxArrows) {
        arrow(d);
      }
    }
    for (const Dependency& d : data.deps) {
      if (d.blocked && !onPath.contains(d.to) && arrows_.size() < options_.maxArrows) {
        arrow(d);
      }
    }
  }

  struct Line {
    std::array<std::int64_t, isa::kNumEngines + 1> busy{};  ///< engines, then DMA
    std::int64_t waited = 0;
    std::int64_t count = 0;
  };

  void collectLines(std::size_t index) {
    const PageRun& run = runs_[index];
    const isa::Program& program = *run.program;
    auto locate = [&](const core::InstructionRecord& r) {
      const isa::InstructionStream& stream = program.stream(r.engine);
      const std::string_view file = stream.locationFile(r.index);
      return file.empty() ? std::string("(no source line)")
                          : fmt::format("{}:{}", paths_.relative(file),
                                        stream.locationLine(r.index));
    };
    std::unordered_map<std::uint64_t, Line*> cache;  ///< per static instruction
    auto lineOf = [&](const core::InstructionRecord& r) -> Line& {
      const std::uint64_t key = (static_cast<std::uint64_t>(r.engine) << 32) | r.index;
      auto found = cache.find(key);
      if (found == cache.end()) {
        found = cache.emplace(key, &lines_[locate(r)]).first;
      }
      return *found->second;
    };
    for (const core::InstructionRecord& r : run.stats->records) {
      Line& line = lineOf(r);
      line.busy[static_cast<std::size_t>(r.engine)] += (r.end - r.start).count();
      line.waited += (r.start - r.ready).count();
      ++line.count;
    }
    for (const core::TransferRecord& t : run.stats->transfers) {
      lineOf(run.stats->records[t.instruction]).busy[isa::kNumEngines] += (t.end - t.start).count();
    }
  }

  void collectBandwidth(const PageRun& run) {
    for (const core::TransferRecord& t : run.stats->transfers) {
      transfers_.push_back({run.offset + t.start, run.offset + t.end, t.bytes});
    }
  }

  /// The slices, aggregated past maxSlices (slice_groups.h).
  Json slicesJson() {
    std::stable_sort(slices_.begin(), slices_.end(), [](const Slice& a, const Slice& b) {
      return std::tie(a.track, a.start) < std::tie(b.track, b.start);
    });
    std::vector<TimedSlice> timed;
    timed.reserve(slices_.size());
    for (const Slice& s : slices_) {
      timed.push_back({s.track, s.start.count(), s.end.count()});
    }
    std::vector<std::size_t> groups =
        groupSlices(timed, end_.count(), tracks_.size(), options_.maxSlices);
    groups.push_back(slices_.size());
    Json track = Json::array(), start = Json::array(), dur = Json::array(), instr = Json::array(),
         count = Json::array(), waited = Json::array(), cycles = Json::array(),
         bytes = Json::array(), critical = Json::array();
    for (std::size_t g = 0; g + 1 < groups.size(); ++g) {
      const std::size_t i = groups[g];
      const std::size_t n = groups[g + 1] - i;
      Picoseconds busy;
      Picoseconds groupEnd = slices_[i].end;
      std::int64_t groupBytes = 0;
      bool groupCritical = false;
      for (std::size_t k = i; k < i + n; ++k) {
        busy += slices_[k].end - slices_[k].start;
        groupEnd = std::max(groupEnd, slices_[k].end);
        groupBytes += slices_[k].bytes;
        groupCritical = groupCritical || slices_[k].critical;
      }
      const Slice& s = slices_[i];
      track.push_back(s.track);
      start.push_back(ns3(s.start));
      dur.push_back(ns3(groupEnd - s.start));
      // Only slices shown one by one need their instruction's text.
      instr.push_back(n == 1 ? instrRow(s.run, runs_[s.run].stats->records[s.record]) : -1);
      count.push_back(n);
      // One slice: time it waited (instruction) or from issue to first byte (transfer); an
      // aggregate: the busy time of its members.
      waited.push_back(n == 1 ? ns3(s.waited) : ns3(busy));
      cycles.push_back(n == 1 ? s.cycles : 0);
      bytes.push_back(groupBytes);
      critical.push_back(groupCritical ? 1 : 0);
      ++summary_.slices;
      summary_.aggregated += n > 1 ? 1 : 0;
    }
    return Json{{"track", track},   {"start", start},   {"dur", dur},
                {"instr", instr},   {"count", count},   {"waited", waited},
                {"cycles", cycles}, {"bytes", bytes},   {"critical", critical},
                {"total_records", slices_.size()}};
  }

  Json linesJson() {
    std::int64_t total = 0;
    for (const auto& [location, line] : lines_) {
      for (const std::int64_t b : line.busy) {
        total += b;
      }
    }
    std::vector<std::pair<std::int64_t, const std::string*>> order;
    for (const auto& [location, line] : lines_) {
      std::int64_t sum = 0;
      for (const std::int64_t b : line.busy) {
        sum += b;
      }
      order.emplace_back(sum, &location);
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    Json out = Json::array();
    for (const auto& [sum, location] : order) {
      const Line& line = lines_.at(*location);
      Json busy = Json::array();
      for (const std::int64_t b : line.busy) {
        busy.push_back(ns3(Picoseconds(b)));
      }
      out.push_back(Json{{"location", *location},
                         {"total_ns", ns3(Picoseconds(sum))},
                         {"share", guardedRatio(static_cast<double>(sum),
                                                static_cast<double>(total))},
                         {"busy_ns", std::move(busy)},
                         {"waited_ns", ns3(Picoseconds(line.waited))},
                         {"executions", line.count}});
    }
    return out;
  }

  /// DMA bytes per bin of the page's timeline, each transfer's bytes spread evenly over its
  /// data-moving time, as GB/s.
  Json bandwidthJson() {
    const std::size_t bins = std::max<std::size_t>(1, options_.bandwidthBins);
    const double width =
        std::max(1.0, static_cast<double>(end_.count()) / static_cast<double>(bins));
    std::vector<double> bytes(bins, 0.0);
    for (const auto& [start, end, moved] : transfers_) {
      const double s = static_cast<double>(start.count());
      const double e = std::max(s + 1, static_cast<double>(end.count()));
      const double rate = static_cast<double>(moved) / (e - s);
      const auto first = static_cast<std::size_t>(s / width);
      for (std::size_t b = first; b < bins && static_cast<double>(b) * width < e; ++b) {
        const double lo = std::max(s, static_cast<double>(b) * width);
        const double hi = std::min(e, static_cast<double>(b + 1) * width);
        bytes[b] += rate * std::max(0.0, hi - lo);
      }
    }
    Json gbps = Json::array();
    for (const double b : bytes) {
      gbps.push_back(std::round(b / width * 1e3 * 10) / 10);  // bytes per ps -> GB/s
    }
    std::size_t concurrent = 0;
    std::map<std::int64_t, std::size_t> atOffset;
    for (const PageRun& run : runs_) {
      concurrent = std::max(concurrent, ++atOffset[run.offset.count()]);
    }
    return Json{{"bin_ns", width / 1e3},
                {"gbps", std::move(gbps)},
                {"peak_gbps", peak_ * static_cast<double>(concurrent) / 1e9}};
  }

  /// SBUF and PSUM in use (memory_use.h): per bin of the page, the largest over the runs (the
  /// fullest core), in KiB, with the core's capacities.
  Json memoryJson() {
    const std::size_t bins = std::max<std::size_t>(1, options_.bandwidthBins);
    std::vector<std::pair<std::int64_t, std::int64_t>> peak(bins, {0, 0});
    for (const MemoryUse& use : memory_) {
      const auto run = peakPerBin(use, end_, bins);
      for (std::size_t b = 0; b < bins; ++b) {
        peak[b].first = std::max(peak[b].first, run[b].first);
        peak[b].second = std::max(peak[b].second, run[b].second);
      }
    }
    Json sbuf = Json::array();
    Json psum = Json::array();
    for (const auto& [s, p] : peak) {
      sbuf.push_back(static_cast<double>(s) / 1024.0);
      psum.push_back(static_cast<double>(p) / 1024.0);
    }
    const spec::Core& core = chip_.core;
    return Json{{"bin_ns", static_cast<double>(end_.count()) / static_cast<double>(bins) / 1e3},
                {"sbuf_kib", std::move(sbuf)},
                {"psum_kib", std::move(psum)},
                {"sbuf_capacity_kib", static_cast<double>(core.sbuf.partitions) *
                                          static_cast<double>(core.sbuf.partitionBytes.count()) /
                                          1024.0},
                {"psum_capacity_kib", static_cast<double>(core.psum.partitions) *
                                          static_cast<double>(core.psum.partitionBytes.count()) /
                                          1024.0}};
  }

  const std::vector<PageRun>& runs_;
  const spec::ChipSpec& chip_;
  const PageOptions& options_;
  SourcePaths paths_{std::span<const std::string>()};
  Picoseconds end_;
  double peak_ = 0;
  Json tracks_ = Json::array();
  Json instrs_ = Json::array();
  Json arrows_ = Json::array();
  std::unordered_map<std::uint64_t, std::int64_t> instrRows_;
  std::map<std::pair<std::string, std::int32_t>, std::int32_t> trackIds_;
  std::vector<Slice> slices_;
  std::map<std::string, Line> lines_;
  std::vector<std::tuple<Picoseconds, Picoseconds, std::int64_t>> transfers_;
  std::vector<MemoryUse> memory_;
  PageSummary summary_;
  struct GroupPath {
    std::vector<std::size_t> runs;  ///< the page's runs, in the order of the path's cores
    CriticalPath path;
  };
  std::vector<std::unique_ptr<GroupPath>> groups_;
  std::map<std::size_t, std::pair<const GroupPath*, std::int32_t>> groupOf_;  ///< run -> group
};

}  // namespace

Result<nlohmann::ordered_json> makePageData(const std::vector<PageRun>& runs,
                                            const spec::ChipSpec& chip, const PageOptions& options,
                                            PageSummary* summary) {
  return Builder(runs, chip, options).build(summary);
}

}  // namespace trn::profile
