#include "trn/fabric/collective_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

namespace trn::fabric {
namespace {

/// Picoseconds as the format's microseconds, exactly (six decimals).
std::string micros(std::int64_t ps) {
  return fmt::format("{}.{:06}", ps / 1'000'000, ps % 1'000'000);
}

/// A resource's name without its chip ("chip 3 x+" -> "x+").
std::string trackName(const Topology& topology, ResourceId r) {
  const std::string full = topology.resourceName(r);
  const std::string prefix = fmt::format("chip {} ", topology.chipOf(r));
  return full.starts_with(prefix) ? full.substr(prefix.size()) : full;
}

std::string eventName(const Plan& plan, const PlanOp& op) {
  if (op.move == kNoMove) {
    return "transfer";
  }
  const DataMove& m = plan.moves()[op.move];
  std::string to;
  for (const Access& w : plan.writesOf(m)) {
    to += fmt::format("{}chip {}", to.empty() ? "" : " + ", w.place);
  }
  if (m.kind == DataMove::Kind::kReduce) {
    return fmt::format("reduce {} inputs into {}", m.readCount, to);
  }
  return to == fmt::format("chip {}", m.issuer) ? fmt::format("copy on chip {}", m.issuer)
                                                : fmt::format("chip {} -> {}", m.issuer, to);
}

}  // namespace

Status writeCollectiveTrace(std::ostream& out, const Plan& plan, const PlanTiming& timing,
                            const CollectiveRequest& request, Algorithm algorithm) {
  const Topology& topology = plan.topology();
  const std::vector<PlanOp>& ops = plan.ops();
  if (timing.opStart.size() != ops.size() || timing.opEnd.size() != ops.size()) {
    return invalidArgument(fmt::format("the timing has {} operations but the plan {}",
                                       timing.opStart.size(), ops.size()));
  }
  std::map<std::int64_t, std::size_t> rankOf;
  for (std::size_t i = 0; i < request.group.size(); ++i) {
    rankOf[request.group[i]] = i;
  }
  // Operations in start order; each resource's lanes hold the end of their last event.
  std::vector<OpId> order(ops.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](OpId a, OpId b) { return timing.opStart[a] < timing.opStart[b]; });
  std::map<ResourceId, std::vector<std::int64_t>> laneEnds;
  std::map<std::pair<ResourceId, std::size_t>, int> tidOf;
  std::map<std::int64_t, int> tracksOfChip;
  std::map<std::int64_t, std::vector<std::int64_t>> coreFreeAt;  // per chip, per collective core
  std::map<std::pair<std::int64_t, std::size_t>, int> coreTid;
  std::string events;
  // A track of chip `chip` named `track`, numbered after the chip's earlier tracks.
  auto newTrack = [&](std::int64_t chip, const std::string& track) {
    const int tid = tracksOfChip[chip]++;
    events += fmt::format(
        ",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},"
        "\"args\":{{\"name\":\"{}\"}}}}",
        chip, tid, track);
    return tid;
  };
  for (const OpId id : order) {
    const PlanOp& op = ops[id];
    if (op.resourceCount == 0 || op.bytes <= 0) {
      continue;
    }
    const std::int64_t start = timing.opStart[id];
    const std::int64_t end = timing.opEnd[id];
    const std::string name = eventName(plan, op);
    for (const ResourceId r : plan.resourcesOf(op)) {
      std::vector<std::int64_t>& lanes = laneEnds[r];
      std::size_t lane = 0;
      while (lane < lanes.size() && lanes[lane] > start) {
        ++lane;
      }
      if (lane == lanes.size()) {
        lanes.push_back(end);
      } else {
        lanes[lane] = end;
      }
      const std::int64_t chip = topology.chipOf(r);
      auto [it, added] = tidOf.try_emplace({r, lane}, 0);
      if (added) {
        it->second =
            newTrack(chip, lane == 0 ? trackName(topology, r)
                                     : fmt::format("{} #{}", trackName(topology, r), lane + 1));
      }
      events += fmt::format(
          ",\n{{\"ph\":\"X\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
          "\"args\":{{\"operation\":{},\"bytes\":{}}}}}",
          name, chip, it->second, micros(start), micros(end - start), id, op.bytes);
    }
    if (op.issuer >= 0 && topology.collectiveCores() > 0) {
      // It holds one of its chip's collective cores from its start to its last byte
      // (flow_simulator.h): drawn on the lowest-numbered core free when it starts.
      const std::int64_t chip = topology.physicalChipOf(op.issuer);
      const std::int64_t lastByte = end - op.endDelay;
      std::vector<std::int64_t>& cores = coreFreeAt[chip];
      std::size_t core = 0;
      while (core < cores.size() && cores[core] > start) {
        ++core;
      }
      if (core == cores.size()) {
        cores.push_back(lastByte);
      } else {
        cores[core] = lastByte;
      }
      auto [it, added] = coreTid.try_emplace({chip, core}, 0);
      if (added) {
        it->second = newTrack(chip, fmt::format("collective core {}", core + 1));
      }
      events += fmt::format(
          ",\n{{\"ph\":\"X\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
          "\"args\":{{\"operation\":{},\"bytes\":{}}}}}",
          name, chip, it->second, micros(start), micros(lastByte - start), id, op.bytes);
    }
  }
  out << fmt::format(
      "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"collective\":\"{}\",\"algorithm\":\"{}\","
      "\"bytes\":{},\"ranks\":{},\"makespan_ps\":{}}},\n\"traceEvents\":[",
      opName(request.op), algorithmName(algorithm), request.bytes, request.group.size(),
      timing.makespan);
  bool first = true;
  for (const auto& [chip, tracks] : tracksOfChip) {
    const auto rank = rankOf.find(chip);
    const std::string label = rank == rankOf.end()
                                  ? fmt::format("chip {} (forwarding)", chip)
                                  : fmt::format("chip {} (rank {})", chip, rank->second);
    out << (first ? "\n" : ",\n")
        << fmt::format(
               "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":\"{}\"}}}}",
               chip, label)
        << fmt::format(
               ",\n{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},"
               "\"args\":{{\"sort_index\":{}}}}}",
               chip, chip);
    first = false;
  }
  out << events << "\n]}\n";
  if (!out) {
    return ioError("could not write the collective trace");
  }
  return {};
}

Status writeCollectiveTraceFile(const std::string& path, const Plan& plan, const PlanTiming& timing,
                                const CollectiveRequest& request, Algorithm algorithm) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    return ioError(fmt::format("cannot open '{}' for the collective trace", path));
  }
  TRN_RETURN_IF_ERROR(writeCollectiveTrace(file, plan, timing, request, algorithm));
  file.close();
  if (!file) {
    return ioError(fmt::format("cannot write the collective trace to '{}'", path));
  }
  return {};
}

}  // namespace trn::fabric
