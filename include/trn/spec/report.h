// Views of a loaded ChipSpec derived from its schema: a flat list of every value with its unit,
// documentation and provenance (used by `trnsim spec show`), the differences between two chips
// (`trnsim spec diff`), and the schema itself (`trnsim spec schema`, docs/spec.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trn/spec/chip_spec.h"

namespace trn::spec {

/// One value of a loaded description.
struct SpecEntry {
  std::string path;             ///< full key path, e.g. "core.sbuf.partition_bytes"
  std::string value;            ///< rendered with its unit, e.g. "224KiB", "64 cycles"
  std::string kind;             ///< e.g. "size", "integer", "frequency"
  std::string doc;              ///< one-line meaning
  Provenance provenance;        ///< source, alternative, file and line
  std::string record;           ///< path of the enclosing record ("" if none)
  bool meta = false;            ///< name/description/version/base: not hardware data
  std::optional<Ratio> number;  ///< the value as a number, for integer and ratio fields
};

/// One key of the schema; record collections appear as `<name>` or `[]` in the path.
struct SchemaEntry {
  std::string path;   ///< e.g. "costs.classes.<class>.variants.<variant>.cycles"
  std::string kind;   ///< type and unit, e.g. "size (B, KiB, ...)", "integer (cycles)"
  std::string range;  ///< allowed range, e.g. ">= 1", "" when unrestricted
  std::string doc;
  bool required = true;
  bool sourced = true;  ///< written as {value, source} (false for meta keys and record fields)
};

/// A key whose value differs between two chips; "(absent)" when only one has it.
struct SpecDifference {
  std::string path;
  std::string left;
  std::string right;
};

/// A value computed from the description, with the arithmetic that produced it.
struct DerivedValue {
  std::string name;     ///< e.g. "per-core dense BF16 peak"
  std::string value;    ///< e.g. "78.6432 TFLOPS"
  std::string formula;  ///< e.g. "core.pe.rows 128 x core.pe.columns 128 x 2 x 2.4GHz"
};

/// Per-core dense BF16 peak from the PE geometry: rows x columns x 2 FLOP x clock, in TFLOPS.
Result<Ratio> peBf16PeakTflops(const ChipSpec& spec);

/// Figures derived from `spec` (peaks from geometry and clocks, aggregate bandwidths).
std::vector<DerivedValue> derivedValues(const ChipSpec& spec);

/// Every value of `spec` in schema order.
std::vector<SpecEntry> describeChip(const ChipSpec& spec);

/// Every key of the schema in order.
std::vector<SchemaEntry> describeSchema();

/// Values of two descriptions' entries (describeChip, describeSystem) that differ, by path; meta
/// keys excluded.
std::vector<SpecDifference> diffEntries(const std::vector<SpecEntry>& left,
                                        const std::vector<SpecEntry>& right);

/// Hardware values that differ between `left` and `right` (meta keys excluded).
std::vector<SpecDifference> diffChips(const ChipSpec& left, const ChipSpec& right);

/// The integer or ratio value at `path`, if there is one.
std::optional<Ratio> numberAt(const ChipSpec& spec, std::string_view path);

/// The readable, grouped description printed by `trnsim spec show`.
std::string formatChip(const ChipSpec& spec);

/// The table of `diffs` between two descriptions (`trnsim spec diff`, `trnsim system diff`).
std::string formatDifferences(std::string_view leftName, std::string_view leftFile,
                              std::string_view rightName, std::string_view rightFile,
                              const std::vector<SpecDifference>& diffs);

/// The table printed by `trnsim spec diff`.
std::string formatDiff(const ChipSpec& left, const ChipSpec& right);

/// The schema as a Markdown table, printed by `trnsim spec schema`.
std::string formatSchemaMarkdown();

}  // namespace trn::spec
