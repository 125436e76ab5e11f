#include "passes/ir_printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trn/isa/program_text.h"

namespace trn::kernel {

std::string printIR(const KernelIR& ir) {
  std::string out = fmt::format("kernel {} ({} buffers, {} instructions)\n", ir.name,
                                ir.buffers.size(), ir.ops.size());
  isa::Program names;
  for (std::size_t b = 0; b < ir.buffers.size(); ++b) {
    const Buffer& buf = ir.buffers[b];
    names.tensors.push_back(isa::TensorDecl{buf.name, buf.hbmKind, buf.dtype, buf.shape});
    std::string where;
    if (buf.memory == isa::Memory::kHbm) {
      where =
          isa::EnumTable<isa::TensorKind>::kEntries[static_cast<std::size_t>(buf.hbmKind)].second;
    } else if (buf.placement) {
      where = fmt::format("at partition {} byte {}", buf.placement->partition, buf.placement->byte);
    } else if (buf.address) {
      where =
          fmt::format("pinned at partition {} byte {}", buf.address->partition, buf.address->byte);
    }
    out += fmt::format("  %{} {} '{}' [{}] {} {}  # {}\n", b, isa::memoryName(buf.memory), buf.name,
                       fmt::join(buf.shape, ", "), dtypeName(buf.dtype), where,
                       formatLocation(ir, buf.site));
  }
  for (std::size_t i = 0; i < ir.ops.size(); ++i) {
    const Op& op = ir.ops[i];
    isa::Instruction shown = op.instr;
    isa::SemaphoreUpdate signal;
    const isa::SyncView sync = ir.semaphores.of(i, signal);
    shown.sync.waits.assign(sync.waits.begin(), sync.waits.end());
    shown.sync.updates.assign(sync.updates.begin(), sync.updates.end());
    out += fmt::format("  [{}] {}{}  # {}\n", i, isa::formatInstruction(shown, names),
                       op.origin == EngineOrigin::kPinned ? " (engine pinned)" : "",
                       formatLocation(ir, op.site));
  }
  return out;
}

}  // namespace trn::kernel
