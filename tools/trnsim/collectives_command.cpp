#include "collectives_command.h"

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "messages.h"
#include "trn/fabric/collective_bench.h"
#include "trn/spec/loader.h"
#include "trn/spec/system_loader.h"

namespace trn::tools {
namespace {

struct BenchOptions {
  std::string system = "trn2.48xlarge";
  std::string op = "all_reduce";
  std::int64_t ranks = 0;  // 0: every chip
  std::string sizes = "8K:1G";
  std::string dtype = "bf16";
  std::string algorithm = "auto";
  bool json = false;
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

Status runBench(const BenchOptions& o) {
  TRN_ASSIGN_OR_RETURN(const spec::SystemSpec system, spec::loadSystem(o.system));
  TRN_ASSIGN_OR_RETURN(const spec::ChipSpec chip, spec::loadChip(system.chip));
  TRN_ASSIGN_OR_RETURN(const fabric::Topology topology, fabric::Topology::create(system, chip));
  fabric::BenchRequest request;
  TRN_ASSIGN_OR_RETURN(request.op, fabric::parseOp(o.op));
  TRN_ASSIGN_OR_RETURN(request.sizes, fabric::parseSizes(o.sizes));
  TRN_ASSIGN_OR_RETURN(request.dtype, parseDType(o.dtype));
  request.ranks = o.ranks == 0 ? topology.chips() : o.ranks;
  if (o.algorithm != "auto") {
    TRN_ASSIGN_OR_RETURN(request.algorithm, fabric::parseAlgorithm(o.algorithm));
  }
  TRN_ASSIGN_OR_RETURN(const std::vector<fabric::BenchRow> rows,
                       fabric::benchCollective(topology, request));
  if (o.json) {
    fmt::print("{}\n", toJson(request, system.name, rows).dump(2));
  } else {
    fmt::print("# {} ({} chips of {})\n{}", system.name, topology.chips(), system.chip,
               fabric::benchTable(request, rows));
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
  bench->add_option("--system", options->system, "system name or YAML path")->capture_default_str();
  bench
      ->add_option("--op", options->op,
                   "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, permute")
      ->capture_default_str();
  bench->add_option("--ranks", options->ranks, "ranks, one per chip: the first N chips (0: all)")
      ->check(CLI::NonNegativeNumber);
  bench->add_option("--sizes", options->sizes, "SIZE, FIRST:LAST or FIRST:LAST:FACTOR (K, M, G)")
      ->capture_default_str();
  bench->add_option("--dtype", options->dtype, "element type (reductions: fp32 or bf16)")
      ->capture_default_str();
  bench
      ->add_option("--algorithm", options->algorithm,
                   "auto (the fastest the model finds), ring, mesh, rdh or torus")
      ->capture_default_str();
  bench->add_flag("--json", options->json, "print JSON, with every algorithm's time");
  bench->callback([options, &exitCode] {
    if (Status status = runBench(*options); !status.ok()) {
      printError(status.message());
      exitCode = 1;
      return;
    }
    exitCode = 0;
  });
}

}  // namespace trn::tools
