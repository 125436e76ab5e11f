#include "trn/profile/dependencies.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <tuple>
#include <unordered_map>

namespace trn::profile {
namespace {

/// One semaphore update as replayed: when, the value after it, and who made it.
struct Update {
  Picoseconds time;
  std::int64_t order = 0;  ///< tie-break: the record's position, so replays are deterministic
  std::int32_t value = 0;  ///< the semaphore's value after the update
  std::int64_t record = -1;
  std::int64_t transfer = -1;
};

/// How far back from the waiter's start a wait looks for the update that made its condition
/// hold. A condition that held for longer than this many updates (an `s >= 0`) has no releaser
/// worth drawing.
constexpr std::size_t kMaxLookBack = 64;

bool holds(isa::WaitCompare compare, std::int32_t value, std::int32_t target) {
  return compare == isa::WaitCompare::kEqual ? value == target : value >= target;
}

std::int32_t apply(isa::SemaphoreUpdateOp op, std::int32_t value, std::int32_t operand) {
  switch (op) {
    case isa::SemaphoreUpdateOp::kAdd:
      return static_cast<std::int32_t>(static_cast<std::int64_t>(value) + operand);
    case isa::SemaphoreUpdateOp::kSubtract:
      return static_cast<std::int32_t>(static_cast<std::int64_t>(value) - operand);
    case isa::SemaphoreUpdateOp::kSet:
      return operand;
  }
  return value;
}

Status checkRecords(const isa::Program& program, const core::RunStats& stats) {
  for (std::size_t i = 0; i < stats.records.size(); ++i) {
    const core::InstructionRecord& r = stats.records[i];
    if (static_cast<int>(r.engine) >= isa::kNumEngines ||
        r.index >= program.stream(r.engine).size()) {
      return invalidArgument(fmt::format(
          "instruction record {} names {} instruction {}, which the program does not have", i,
          static_cast<int>(r.engine), r.index));
    }
  }
  for (std::size_t i = 0; i < stats.transfers.size(); ++i) {
    if (stats.transfers[i].instruction >= stats.records.size()) {
      return invalidArgument(fmt::format(
          "transfer record {} was issued by instruction record {}, but the run has {} records", i,
          stats.transfers[i].instruction, stats.records.size()));
    }
  }
  return {};
}

}  // namespace

std::vector<std::int64_t> transferOfRecord(const core::RunStats& stats) {
  std::vector<std::int64_t> of(stats.records.size(), -1);
  for (std::size_t t = 0; t < stats.transfers.size(); ++t) {
    const std::uint32_t issuer = stats.transfers[t].instruction;
    if (issuer < of.size()) {
      of[issuer] = static_cast<std::int64_t>(t);
    }
  }
  return of;
}

Result<std::vector<Dependency>> findDependencies(const isa::Program& program,
                                                 const core::RunStats& stats) {
  TRN_RETURN_IF_ERROR(checkRecords(program, stats));
  const std::vector<std::int64_t> transferOf = transferOfRecord(stats);

  // Every update, grouped by semaphore, in the order the run applied them.
  std::unordered_map<std::int32_t, std::vector<Update>> updates;
  for (std::size_t i = 0; i < stats.records.size(); ++i) {
    const core::InstructionRecord& r = stats.records[i];
    const isa::InstructionStream& stream = program.stream(r.engine);
    const auto list = stream.updates(r.index);
    if (list.empty()) {
      continue;
    }
    Update update;
    update.order = static_cast<std::int64_t>(i);
    update.record = static_cast<std::int64_t>(i);
    update.time = r.complete;
    if (stream.info(r.index).viaDma && transferOf[i] >= 0) {
      update.transfer = transferOf[i];
      update.time = stats.transfers[static_cast<std::size_t>(transferOf[i])].end;
    }
    for (const isa::SemaphoreUpdate& u : list) {
      Update one = update;
      one.value = u.value;  // the operand until the replay turns it into the value after
      updates[u.semaphore].push_back(one);
    }
  }
  // Replay: the operand of each update becomes the semaphore's value after it. The operation is
  // looked up again from the record, as an update list may touch one semaphore twice.
  for (auto& [semaphore, list] : updates) {
    std::stable_sort(list.begin(), list.end(), [](const Update& a, const Update& b) {
      return std::tie(a.time, a.order) < std::tie(b.time, b.order);
    });
    std::int32_t value = 0;
    std::int64_t lastRecord = -1;
    std::size_t position = 0;  ///< which of the record's updates of this semaphore comes next
    for (Update& u : list) {
      const core::InstructionRecord& r = stats.records[static_cast<std::size_t>(u.record)];
      const auto ops = program.stream(r.engine).updates(r.index);
      position = u.record == lastRecord ? position + 1 : 0;
      lastRecord = u.record;
      std::size_t seen = 0;
      for (const isa::SemaphoreUpdate& op : ops) {
        if (op.semaphore == semaphore && seen++ == position) {
          value = apply(op.op, value, op.value);
          break;
        }
      }
      u.value = value;
    }
  }

  std::vector<Dependency> out;
  for (std::size_t i = 0; i < stats.records.size(); ++i) {
    const core::InstructionRecord& r = stats.records[i];
    for (const isa::SemaphoreWait& wait : program.stream(r.engine).waits(r.index)) {
      const auto found = updates.find(wait.semaphore);
      if (found == updates.end()) {
        continue;
      }
      const std::vector<Update>& list = found->second;
      // The last update applied no later than the waiter's start...
      auto after = std::upper_bound(list.begin(), list.end(), r.start,
                                    [](Picoseconds t, const Update& u) { return t < u.time; });
      if (after == list.begin()) {
        continue;
      }
      auto releaser = std::prev(after);
      if (!holds(wait.compare, releaser->value, wait.value)) {
        continue;
      }
      // ...walked back to the first of the updates the condition has held across since.
      for (std::size_t steps = 0; steps < kMaxLookBack && releaser != list.begin(); ++steps) {
        const auto before = std::prev(releaser);
        if (!holds(wait.compare, before->value, wait.value)) {
          break;
        }
        releaser = before;
      }
      if (releaser == list.begin() && holds(wait.compare, 0, wait.value)) {
        continue;  // held from the start of the run
      }
      Dependency d;
      d.fromRecord = releaser->record;
      d.fromTransfer = releaser->transfer;
      d.to = static_cast<std::int64_t>(i);
      d.semaphore = wait.semaphore;
      d.signalled = releaser->time;
      d.blocked = r.ready <= releaser->time;
      out.push_back(d);
    }
  }
  return out;
}

}  // namespace trn::profile
