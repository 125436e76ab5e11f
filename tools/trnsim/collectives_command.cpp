#include "collectives_command.h"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <string>

#include "exit_codes.h"
#include "messages.h"
#include "trn/base/rng.h"
#include "trn/fabric/all_to_allv.h"
#include "trn/fabric/collective_bench.h"
#include "trn/fabric/collective_trace.h"
#include "trn/fabric/functional_collective.h"
#include "trn/numerics/convert.h"
#include "trn/profile/html_report.h"
#include "trn/spec/loader.h"
#include "trn/spec/system_loader.h"

namespace trn::tools {
namespace {

/// What `collectives bench` and `collectives run` both take.
struct CollectiveOptions {
  std::string system = "trn2.48xlarge";
  std::string op = "all_reduce";
  std::int64_t ranks = 0;  // 0: every chip
  std::string dtype = "bf16";
  std::string algorithm = "auto";
  std::string report;  // file for the offline HTML report of the one size run
  std::string counts;          // all_to_allv: what each rank sends each rank
  std::string expectedCounts;  // all_to_allv: what each rank expects from each rank
};

/// Without --ranks: a rank per row of an all_to_allv's counts, else every place.
std::int64_t defaultRanks(const fabric::Topology& topology, const fabric::VariableCounts& v) {
  std::int64_t n = 0;
  while (n * n < static_cast<std::int64_t>(v.counts.size())) {
    ++n;
  }
  return n > 0 ? n : topology.chips();
}

/// The exchange --counts (and --expected-counts) give, packed in order.
Result<fabric::VariableCounts> variableCountsOf(const CollectiveOptions& o,
                                                fabric::CollectiveOp op) {
  if (op != fabric::CollectiveOp::kAllToAllV) {
    if (!o.counts.empty() || !o.expectedCounts.empty()) {
      return invalidArgument(fmt::format("--counts and --expected-counts are for --op all_to_allv, "
                                         "not {}",
                                         fabric::opName(op)));
    }
    return fabric::VariableCounts{};
  }
  if (o.counts.empty()) {
    return invalidArgument(
        "all_to_allv needs --counts: what each rank sends each rank, in elements, rows '/' and "
        "columns ',' (0,512/1K,0 on 2 ranks)");
  }
  TRN_ASSIGN_OR_RETURN(const auto sends, fabric::parseCountMatrix(o.counts));
  std::vector<std::vector<std::int64_t>> expected;
  if (!o.expectedCounts.empty()) {
    TRN_ASSIGN_OR_RETURN(expected, fabric::parseCountMatrix(o.expectedCounts));
  }
  return fabric::packedVariableCounts(sends, expected);
}

void addCollectiveOptions(CLI::App* command, CollectiveOptions& o) {
  command->add_option("--system", o.system, "system name or YAML path")->capture_default_str();
  command
      ->add_option("--op", o.op,
                   "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, permute, "
                   "all_to_allv")
      ->capture_default_str();
  command->add_option("--ranks", o.ranks,
                      "ranks: the first N chips (0: all), or N / chips logical cores per chip")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--dtype", o.dtype, "element type (reductions: fp32 or bf16)")
      ->capture_default_str();
  command
      ->add_option("--algorithm", o.algorithm,
                   "auto (the fastest the model finds), ring, mesh, rdh, torus, kangaring or chipmesh")
      ->capture_default_str();
  command->add_option("--counts", o.counts,
                      "all_to_allv: elements rank i sends rank j, row i, column j; rows '/', "
                      "columns ',' (K, M, G): 0,512/1K,0; packed in order in each buffer");
  command->add_option("--expected-counts", o.expectedCounts,
                      "all_to_allv: elements rank j expects from rank i, row j, column i (checked "
                      "against --counts)");
  command->add_option("--report", o.report,
                      "write the offline HTML report of the run (one size): verdict, every "
                      "algorithm's time, timeline of links and HBM, link load; open it in a "
                      "browser");
}

struct BenchOptions : CollectiveOptions {
  std::string sizes;  // empty: 8K:1G, or for all_to_allv the buffers its counts need
  bool json = false;
  std::string trace;  // file for the Chrome trace of the one size run
};

nlohmann::json toJson(const fabric::BenchRequest& request, const std::string& system,
                      const std::vector<fabric::BenchRow>& rows) {
  nlohmann::json out;
  out["system"] = system;
  out["op"] = fabric::opName(request.op);
  out["ranks"] = request.ranks;
  out["type"] = dtypeName(request.dtype);
  out["rows"] = nlohmann::json::array();
  for (const fabric::BenchRow& r : rows) {
    nlohmann::json row;
    row["size_bytes"] = r.bytes;
    row["count"] = r.count;
    row["time_us"] = static_cast<double>(r.result.picoseconds) * 1e-6;
    row["algbw_gbps"] = r.algorithmGBps;
    row["busbw_gbps"] = r.busGBps;
    row["algorithm"] = fabric::algorithmName(r.result.algorithm);
    row["messages"] = r.result.messages;
    nlohmann::json candidates = nlohmann::json::object();
    for (const fabric::Candidate& c : r.result.candidates) {
      candidates[std::string(fabric::algorithmName(c.algorithm))] =
          c.picoseconds ? nlohmann::json(static_cast<double>(*c.picoseconds) * 1e-6)
                        : nlohmann::json(c.skipped);
    }
    row["candidates_time_us"] = candidates;
    out["rows"].push_back(row);
  }
  return out;
}

/// A system, its chip and its fabric.
struct LoadedSystem {
  spec::SystemSpec system;
  spec::ChipSpec chip;
  fabric::Topology topology;
};

/// `ranks` more than the chips are logical cores (fabric::Topology::forRanks); 0: one per chip.
Result<LoadedSystem> loadSystem(const std::string& name, std::int64_t ranks) {
  TRN_ASSIGN_OR_RETURN(spec::SystemSpec system, spec::loadSystem(name));
  TRN_ASSIGN_OR_RETURN(spec::ChipSpec chip, spec::loadChip(system.chip));
  TRN_ASSIGN_OR_RETURN(fabric::Topology topology,
                       fabric::Topology::forRanks(system, chip, ranks));
  return LoadedSystem{std::move(system), std::move(chip), std::move(topology)};
}

/// A subcommand's callback: runs `body`, printing its error and setting the exit code.
template <typename Options>
void runReportingErrors(Status (*body)(const Options&), const Options& options, int& exitCode) {
  if (Status status = body(options); !status.ok()) {
    exitCode = reportError(status);
    return;
  }
  exitCode = 0;
}

/// A plan of the algorithm taken and its timing.
struct TimedPlan {
  fabric::Plan plan;
  fabric::PlanTiming timing;
};

Result<TimedPlan> timePlan(const fabric::Topology& topology,
                           const fabric::CollectiveRequest& request, fabric::Algorithm algorithm) {
  TRN_ASSIGN_OR_RETURN(fabric::Plan plan, fabric::buildPlan(topology, request, algorithm));
  TRN_ASSIGN_OR_RETURN(fabric::PlanTiming timing, fabric::simulate(plan));
  return TimedPlan{std::move(plan), std::move(timing)};
}

/// Writes the HTML report of `result` (of `request`) and prints its verdict and size, on
/// stderr when stdout carries JSON.
Status writeReport(const std::string& path, const LoadedSystem& loaded,
                   const fabric::CollectiveRequest& request, const fabric::CollectiveResult& result,
                   const TimedPlan& timed, bool toStderr) {
  profile::CollectiveRun run;
  run.system = loaded.system.name;
  run.request = &request;
  run.result = &result;
  run.plan = &timed.plan;
  run.timing = &timed.timing;
  profile::CollectivePageOptions options;
  options.title = fmt::format("trnsim: {} of {} B over {} ranks of {}", fabric::opName(request.op),
                              request.bytes, request.group.size(), loaded.system.name);
  profile::PageSummary summary;
  TRN_RETURN_IF_ERROR(profile::writeCollectiveReportFile(path, run, options, &summary));
  std::FILE* out = toStderr ? stderr : stdout;
  for (const auto& [name, headline] : summary.verdicts) {
    fmt::print(out, "verdict: {}\n", headline);
  }
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(path, error);
  fmt::print(out,
             "report: {} ({} KiB, {} timeline slices{}, {} of {} chips on the timeline; open it "
             "in a browser)\n",
             path, error ? 0 : bytes / 1024, summary.slices,
             summary.aggregated > 0 ? fmt::format(", {} of them merged", summary.aggregated)
                                    : std::string(),
             summary.chipsShown, summary.chipsUsed);
  return {};
}

Status runBench(const BenchOptions& o) {
  TRN_ASSIGN_OR_RETURN(const LoadedSystem loaded, loadSystem(o.system, o.ranks));
  const spec::SystemSpec& system = loaded.system;
  const fabric::Topology& topology = loaded.topology;
  fabric::BenchRequest request;
  TRN_ASSIGN_OR_RETURN(request.op, fabric::parseOp(o.op));
  TRN_ASSIGN_OR_RETURN(request.dtype, parseDType(o.dtype));
  TRN_ASSIGN_OR_RETURN(request.variable, variableCountsOf(o, request.op));
  if (o.sizes.empty() && request.op == fabric::CollectiveOp::kAllToAllV) {
    // The buffers that hold the counts.
    request.sizes = {std::max<std::int64_t>(1, fabric::variableExtent(request.variable)) *
                     byteSize(request.dtype)};
  } else {
    TRN_ASSIGN_OR_RETURN(request.sizes, fabric::parseSizes(o.sizes.empty() ? "8K:1G" : o.sizes));
  }
  request.ranks = o.ranks == 0 ? defaultRanks(topology, request.variable) : o.ranks;
  if (o.algorithm != "auto") {
    TRN_ASSIGN_OR_RETURN(request.algorithm, fabric::parseAlgorithm(o.algorithm));
  }
  for (const auto& [option, path] :
       {std::pair{"--trace traces", &o.trace}, std::pair{"--report reports", &o.report}}) {
    if (!path->empty() && request.sizes.size() != 1) {
      return invalidArgument(
          fmt::format("{} one size; --sizes {} gives {}", option, o.sizes, request.sizes.size()));
    }
  }
  TRN_ASSIGN_OR_RETURN(const std::vector<fabric::BenchRow> rows,
                       fabric::benchCollective(topology, request));
  // The one size's plan, timed again for its trace and report.
  const fabric::BenchRow& row = rows.front();
  std::optional<TimedPlan> timed;
  if (!o.trace.empty() || !o.report.empty()) {
    TRN_ASSIGN_OR_RETURN(timed, timePlan(topology, row.request, row.result.algorithm));
  }
  if (!o.trace.empty()) {
    TRN_RETURN_IF_ERROR(fabric::writeCollectiveTraceFile(o.trace, timed->plan, timed->timing,
                                                         row.request, row.result.algorithm));
  }
  if (o.json) {
    fmt::print("{}\n", toJson(request, system.name, rows).dump(2));
  } else {
    fmt::print("# {} ({} chips of {}{})\n{}", system.name,
               topology.chips() / topology.ranksPerChip(), system.chip,
               topology.ranksPerChip() == 1
                   ? ""
                   : fmt::format(", {} ranks per chip", topology.ranksPerChip()),
               fabric::benchTable(request, rows));
  }
  if (!o.report.empty()) {
    TRN_RETURN_IF_ERROR(writeReport(o.report, loaded, row.request, row.result, *timed, o.json));
  }
  return {};
}

struct RunOptions : CollectiveOptions {
  std::string size;  // empty: 1M, or for all_to_allv the buffers its counts need
  std::string reduce = "sum";
  std::uint64_t seed = 1;
};

/// Functional runs keep every rank's buffers in host memory.
constexpr std::int64_t kMaxFunctionalBytes = std::int64_t{2} << 30;

/// Rank `rank`'s input: `bytes` of `dtype` values uniform in [-1, 1) from (seed, rank).
std::vector<std::byte> randomInput(std::int64_t bytes, DType dtype, std::uint64_t seed,
                                   std::int64_t rank) {
  const CounterRng rng(seed, static_cast<std::uint64_t>(rank));
  std::vector<float> values(static_cast<std::size_t>(bytes / byteSize(dtype)));
  for (std::size_t e = 0; e < values.size(); e += 4) {
    const std::array<std::uint32_t, 4> words = rng.block(e / 4);
    for (std::size_t j = 0; j < 4 && e + j < values.size(); ++j) {
      values[e + j] = static_cast<float>(words[j] >> 8) * 0x1p-23F - 1.0F;
    }
  }
  std::vector<std::byte> out(static_cast<std::size_t>(bytes));
  convertFromFloat(values, dtype, out);
  return out;
}

Status runFunctional(const RunOptions& o) {
  TRN_ASSIGN_OR_RETURN(const LoadedSystem loaded, loadSystem(o.system, o.ranks));
  const spec::SystemSpec& system = loaded.system;
  const fabric::Topology& topology = loaded.topology;
  fabric::CollectiveRequest request;
  TRN_ASSIGN_OR_RETURN(request.op, fabric::parseOp(o.op));
  TRN_ASSIGN_OR_RETURN(const DType dtype, parseDType(o.dtype));
  TRN_ASSIGN_OR_RETURN(const fabric::ReduceOp reduce, fabric::parseReduceOp(o.reduce));
  TRN_ASSIGN_OR_RETURN(request.variable, variableCountsOf(o, request.op));
  const bool fitCounts = o.size.empty() && request.op == fabric::CollectiveOp::kAllToAllV;
  TRN_ASSIGN_OR_RETURN(
      const std::vector<std::int64_t> sizes,
      fitCounts ? Result<std::vector<std::int64_t>>(std::vector<std::int64_t>{
                      std::max<std::int64_t>(1, fabric::variableExtent(request.variable)) *
                      byteSize(dtype)})
                : fabric::parseSizes(o.size.empty() ? "1M" : o.size));
  if (sizes.size() != 1) {
    return invalidArgument(fmt::format("--size takes one size, not '{}'", o.size));
  }
  const std::int64_t ranks = o.ranks == 0 ? defaultRanks(topology, request.variable) : o.ranks;
  if (ranks < 1 || ranks > topology.chips()) {
    return invalidArgument(fmt::format("{} ranks: {} has {} places for ranks", ranks,
                                       system.name, topology.chips()));
  }
  if (sizes[0] > kMaxFunctionalBytes / ranks) {
    return invalidArgument(fmt::format(
        "a functional run keeps every rank's data in host memory: {} ranks x {} bytes is more "
        "than {} bytes; use `collectives bench` for timing alone",
        ranks, sizes[0], kMaxFunctionalBytes));
  }
  std::optional<fabric::Algorithm> algorithm;
  if (o.algorithm != "auto") {
    TRN_ASSIGN_OR_RETURN(algorithm, fabric::parseAlgorithm(o.algorithm));
  }
  request.group.resize(static_cast<std::size_t>(ranks));
  std::iota(request.group.begin(), request.group.end(), 0);
  request.elementBytes = byteSize(dtype);
  request.bytes = sizes[0];
  TRN_RETURN_IF_ERROR(fabric::checkRequest(topology, request));  // before sizing the inputs
  std::vector<std::vector<std::byte>> inputs;
  for (std::int64_t r = 0; r < ranks; ++r) {
    inputs.push_back(randomInput(fabric::inputBytes(request), dtype, o.seed, r));
  }
  TRN_ASSIGN_OR_RETURN(const fabric::DataCollectiveResult result,
                       fabric::runCollectiveOnData(topology, loaded.chip, request, dtype, reduce,
                                                   inputs, algorithm));
  TRN_ASSIGN_OR_RETURN(const fabric::ReferenceCheck check,
                       fabric::checkAgainstFloat64(request, dtype, reduce, inputs, result.outputs));
  fmt::print(
      "# {} over {} ranks of {}: {} bytes of {} ({} elements), {}, inputs uniform in "
      "[-1, 1) from seed {}\n",
      fabric::opName(request.op), ranks, system.name, request.bytes, dtypeName(dtype),
      request.bytes / request.elementBytes, fabric::reduceOpName(reduce), o.seed);
  fmt::print("algorithm {}: {:.2f} us, {} messages\n",
             fabric::algorithmName(result.timing.algorithm),
             static_cast<double>(result.timing.picoseconds) * 1e-6, result.timing.messages);
  fmt::print("against float64: {} of {} exact output elements differ", check.mismatches,
             check.elements);
  if (reduce == fabric::ReduceOp::kSum && (request.op == fabric::CollectiveOp::kAllReduce ||
                                           request.op == fabric::CollectiveOp::kReduceScatter)) {
    fmt::print("; sums: max |error| {:.3g}, max |error| / sum |x| {:.3g}", check.maxError,
               check.maxRelative);
  }
  fmt::print("\n");
  if (!o.report.empty()) {
    TRN_ASSIGN_OR_RETURN(const TimedPlan timed,
                         timePlan(topology, request, result.timing.algorithm));
    TRN_RETURN_IF_ERROR(writeReport(o.report, loaded, request, result.timing, timed, false));
  }
  return {};
}

}  // namespace

void registerCollectivesCommands(CLI::App& app, int& exitCode) {
  CLI::App* group = app.add_subcommand(
      "collectives", "Collective communication over a system of chips (configs/systems)");
  group->require_subcommand(1);
  auto options = std::make_shared<BenchOptions>();
  CLI::App* bench = group->add_subcommand(
      "bench", "time a collective over a range of sizes (timing only), as nccom-test reports it");
  addCollectiveOptions(bench, *options);
  bench->add_option("--sizes", options->sizes,
                    "SIZE, FIRST:LAST or FIRST:LAST:FACTOR (K, M, G); default 8K:1G, or for "
                    "all_to_allv each rank's buffer, the least that holds --counts");
  bench->add_flag("--json", options->json, "print JSON, with every algorithm's time");
  bench->add_option("--trace", options->trace,
                    "write the chosen algorithm's Chrome trace (one size): chips as processes, "
                    "links and HBM as tracks");
  bench->callback([options, &exitCode] { runReportingErrors(runBench, *options, exitCode); });

  auto run = std::make_shared<RunOptions>();
  CLI::App* runCommand = group->add_subcommand(
      "run", "run a collective on data in the chips' HBM and check it against float64");
  addCollectiveOptions(runCommand, *run);
  runCommand->add_option("--size", run->size,
                         "bytes (K, M, G), as nccom-test counts them; default 1M, or for "
                         "all_to_allv each rank's buffer, the least that holds --counts");
  runCommand->add_option("--reduce", run->reduce, "sum, max or min")->capture_default_str();
  runCommand->add_option("--seed", run->seed, "seed of the random inputs")->capture_default_str();
  runCommand->callback([run, &exitCode] { runReportingErrors(runFunctional, *run, exitCode); });
}

}  // namespace trn::tools
