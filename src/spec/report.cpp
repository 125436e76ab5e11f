#include "trn/spec/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "chip_schema.h"

namespace trn::spec {
namespace {

constexpr std::int64_t kTera = 1'000'000'000'000;

std::string ratioText(const Result<Ratio>& r, std::string_view unit) {
  if (!r.ok()) {
    return "(overflow)";
  }
  return fmt::format("{:.4g} {}", r->toDouble(), unit);
}

/// bandwidth x count, or nullopt on overflow.
std::optional<BytesPerSecond> scaled(BytesPerSecond bw, std::int64_t count) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(bw.count(), count, &out)) {
    return std::nullopt;
  }
  return BytesPerSecond(out);
}

std::string bandwidthText(std::optional<BytesPerSecond> bw) {
  return bw ? toString(*bw) : "(overflow)";
}

/// A value's cited source, and the file it was inherited from when that is not the chip's own
/// (a what-if chip, or a generation that carries its predecessor's figures, with `base:`).
std::string cited(const Provenance& p, const ChipSpec& spec) {
  if (p.file.empty() || p.file == spec.file) {
    return p.source;
  }
  return fmt::format("{}; inherited from {}", p.source,
                     std::filesystem::path(p.file).filename().string());
}

}  // namespace

std::vector<SpecEntry> describeChip(const ChipSpec& spec) {
  std::vector<SpecEntry> out;
  detail::FlattenContext ctx{spec.provenance, out, ""};
  detail::chipSchema().flatten(spec, "", ctx);
  return out;
}

std::vector<SchemaEntry> describeSchema() {
  std::vector<SchemaEntry> out;
  detail::chipSchema().describe("", false, out);
  return out;
}

std::optional<Ratio> numberAt(const ChipSpec& spec, std::string_view path) {
  for (const SpecEntry& entry : describeChip(spec)) {
    if (entry.path == path) {
      return entry.number;
    }
  }
  return std::nullopt;
}

std::vector<SpecDifference> diffEntries(const std::vector<SpecEntry>& a,
                                        const std::vector<SpecEntry>& b) {
  std::map<std::string_view, const SpecEntry*> rightByPath;
  for (const SpecEntry& entry : b) {
    rightByPath.emplace(entry.path, &entry);
  }
  std::map<std::string_view, bool> seen;
  std::vector<SpecDifference> out;
  for (const SpecEntry& entry : a) {
    if (entry.meta) {
      continue;
    }
    seen[entry.path] = true;
    const auto it = rightByPath.find(entry.path);
    if (it == rightByPath.end()) {
      out.push_back({entry.path, entry.value, "(absent)"});
    } else if (it->second->value != entry.value) {
      out.push_back({entry.path, entry.value, it->second->value});
    }
  }
  for (const SpecEntry& entry : b) {
    if (!entry.meta && !seen.contains(entry.path)) {
      out.push_back({entry.path, "(absent)", entry.value});
    }
  }
  return out;
}

std::vector<SpecDifference> diffChips(const ChipSpec& left, const ChipSpec& right) {
  return diffEntries(describeChip(left), describeChip(right));
}

Result<Ratio> peBf16PeakTflops(const ChipSpec& spec) {
  const TensorEngine& pe = spec.core.pe;
  TRN_ASSIGN_OR_RETURN(Ratio macs, multiply(Ratio(pe.rows), Ratio(pe.columns)));
  TRN_ASSIGN_OR_RETURN(Ratio flops, multiply(macs, Ratio(2)));
  TRN_ASSIGN_OR_RETURN(Ratio clockTera, Ratio::make(pe.clock.count(), kTera));
  return multiply(flops, clockTera);
}

std::vector<DerivedValue> derivedValues(const ChipSpec& spec) {
  const Core& core = spec.core;
  const TensorEngine& pe = core.pe;
  const std::int64_t cores = spec.chip.neuronCores;
  const Result<Ratio> bf16 = peBf16PeakTflops(spec);
  const std::int64_t fp8Factor = pe.doubleRowFp8.supported ? pe.doubleRowFp8.throughputFactor : 1;
  const auto times = [&](std::int64_t n) { return bf16.ok() ? multiply(*bf16, Ratio(n)) : bf16; };
  const auto over = [&](std::int64_t n) { return bf16.ok() ? divide(*bf16, Ratio(n)) : bf16; };
  std::vector<DerivedValue> out;
  out.push_back({"per-core dense BF16 peak", ratioText(bf16, "TFLOPS"),
                 fmt::format("core.pe.rows {} x core.pe.columns {} x 2 FLOP x core.pe.clock {}",
                             pe.rows, pe.columns, toString(pe.clock))});
  out.push_back({"per-core dense FP8 peak", ratioText(times(fp8Factor), "TFLOPS"),
                 fmt::format("BF16 peak x double-row factor {}", fp8Factor)});
  out.push_back({"per-core dense FP32 peak", ratioText(over(pe.fp32CostFactor), "TFLOPS"),
                 fmt::format("BF16 peak / core.pe.fp32_cost_factor {}", pe.fp32CostFactor)});
  out.push_back({"chip dense BF16 peak", ratioText(times(cores), "TFLOPS"),
                 fmt::format("per-core BF16 peak x chip.neuron_cores {} (documented: {} TFLOPS)",
                             cores, spec.chip.peakTflops.bf16.toString())});
  std::int64_t sbufChip = 0;
  out.push_back(
      {"SBUF per chip",
       __builtin_mul_overflow(core.sbuf.totalBytes.count(), cores, &sbufChip)
           ? "(overflow)"
           : toString(Bytes(sbufChip)),
       fmt::format("core.sbuf.total_bytes {} x {} cores", toString(core.sbuf.totalBytes), cores)});
  const auto dmaCore = scaled(core.dma.engineBandwidth, core.dma.enginesPerCore);
  out.push_back({"DMA bandwidth per core", bandwidthText(dmaCore),
                 fmt::format("core.dma.engines_per_core {} x engine_bandwidth {}",
                             core.dma.enginesPerCore, toString(core.dma.engineBandwidth))});
  out.push_back({"DMA bandwidth per chip",
                 bandwidthText(dmaCore ? scaled(*dmaCore, cores) : std::nullopt),
                 fmt::format("per-core DMA bandwidth x {} cores (documented: {})", cores,
                             toString(spec.chip.dmaBandwidth))});
  out.push_back({"HBM bandwidth per stack",
                 toString(BytesPerSecond(spec.hbm.bandwidth.count() / spec.hbm.stacks)),
                 fmt::format("hbm.bandwidth {} / hbm.stacks {}", toString(spec.hbm.bandwidth),
                             spec.hbm.stacks)});
  return out;
}

std::string formatChip(const ChipSpec& spec) {
  constexpr std::size_t kKeyColumn = 38;
  constexpr std::size_t kValueColumn = 22;
  std::string out = fmt::format("{}: {}\nfile: {}\n", spec.name, spec.description, spec.file);
  if (!spec.base.empty()) {
    out += fmt::format("base: {}\n", spec.base);
  }
  std::vector<std::string> open;  // section path components printed so far
  for (const SpecEntry& e : describeChip(spec)) {
    if (e.meta) {
      continue;
    }
    std::vector<std::string> parts;
    for (std::size_t start = 0; start <= e.path.size();) {
      const std::size_t dot = std::min(e.path.find('.', start), e.path.size());
      parts.push_back(e.path.substr(start, dot - start));
      start = dot + 1;
    }
    const std::string leaf = parts.back();
    parts.pop_back();
    std::size_t common = 0;
    while (common < open.size() && common < parts.size() && open[common] == parts[common]) {
      ++common;
    }
    if (common == 0) {
      out += "\n";
    }
    std::string sectionPath;
    std::string enclosingSource;  // source of the innermost record above this section
    for (std::size_t i = 0; i < parts.size(); ++i) {
      sectionPath = i == 0 ? parts[i] : fmt::format("{}.{}", sectionPath, parts[i]);
      const auto record = spec.provenance.find(sectionPath);
      const bool isRecord = record != spec.provenance.end();
      const bool repeatsSource = isRecord && record->second.source == enclosingSource;
      enclosingSource = isRecord ? record->second.source : enclosingSource;
      if (i < common) {
        continue;
      }
      std::string header = fmt::format("{:{}}{}", "", 2 * i, parts[i]);
      if (isRecord && !repeatsSource) {
        header = fmt::format("{:<{}}  [{}]", header, kKeyColumn + kValueColumn,
                             cited(record->second, spec));
        if (!record->second.alternative.empty()) {
          header += fmt::format("\n{:{}}alternative: {}", "", kKeyColumn + kValueColumn + 2,
                                record->second.alternative);
        }
      }
      out += header + "\n";
    }
    open = parts;
    const Provenance* recordSource = e.record.empty() ? nullptr : spec.provenanceOf(e.record);
    const bool ownSource = recordSource == nullptr || recordSource->source != e.provenance.source;
    std::string line =
        fmt::format("{:<{}}{:<{}}", fmt::format("{:{}}{}", "", 2 * parts.size(), leaf), kKeyColumn,
                    e.value, kValueColumn);
    if (ownSource) {
      line += fmt::format("  [{}]", cited(e.provenance, spec));
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    out += line + "\n";
    if (ownSource && !e.provenance.alternative.empty()) {
      out += fmt::format("{:{}}alternative: {}\n", "", kKeyColumn + kValueColumn + 2,
                         e.provenance.alternative);
    }
  }
  out += "\nderived (computed from the values above)\n";
  for (const DerivedValue& d : derivedValues(spec)) {
    out += fmt::format("  {:<26}  {:<16}  = {}\n", d.name, d.value, d.formula);
  }
  return out;
}

std::string formatDifferences(std::string_view leftName, std::string_view leftFile,
                              std::string_view rightName, std::string_view rightFile,
                              const std::vector<SpecDifference>& diffs) {
  std::string out = fmt::format("{} ({}) vs {} ({}): {} value{} differ{}\n", leftName, leftFile,
                                rightName, rightFile, diffs.size(), diffs.size() == 1 ? "" : "s",
                                diffs.size() == 1 ? "s" : "");
  if (diffs.empty()) {
    return out;
  }
  std::size_t keyWidth = std::string_view("key").size();
  std::size_t leftWidth = leftName.size();
  for (const SpecDifference& d : diffs) {
    keyWidth = std::max(keyWidth, d.path.size());
    leftWidth = std::max(leftWidth, std::min<std::size_t>(d.left.size(), 32));
  }
  out += fmt::format("\n{:<{}}  {:<{}}  {}\n", "key", keyWidth, leftName, leftWidth, rightName);
  for (const SpecDifference& d : diffs) {
    out += fmt::format("{:<{}}  {:<{}}  {}\n", d.path, keyWidth, d.left, leftWidth, d.right);
  }
  return out;
}

std::string formatDiff(const ChipSpec& left, const ChipSpec& right) {
  return formatDifferences(left.name, left.file, right.name, right.file, diffChips(left, right));
}

std::string formatSchemaMarkdown() {
  std::string out = "| key | type (unit) | range | required | meaning |\n|---|---|---|---|---|\n";
  for (const SchemaEntry& e : describeSchema()) {
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", e.path, e.kind, e.range,
                       e.required ? (e.sourced ? "yes, sourced" : "yes") : "no", e.doc);
  }
  out +=
      "\nCost-formula variables (filled per instruction by the timing model):\n\n"
      "| variable | meaning |\n|---|---|\n";
  for (int i = 0; i < static_cast<int>(CostVariable::kCount); ++i) {
    const auto v = static_cast<CostVariable>(i);
    out += fmt::format("| `{}` | {} |\n", costVariableName(v), costVariableDoc(v));
  }
  return out;
}

}  // namespace trn::spec
