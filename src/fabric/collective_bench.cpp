#include "trn/fabric/collective_bench.h"

#include <fmt/format.h>

#include <cctype>
#include <numeric>

namespace trn::fabric {

Result<std::int64_t> parseSize(std::string_view text) {
  std::int64_t value = 0;
  std::size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0; ++i) {
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, text[i] - '0', &value)) {
      return invalidArgument(fmt::format("size '{}' is too large", text));
    }
  }
  if (i == 0) {
    return invalidArgument(fmt::format("size '{}' does not start with a number", text));
  }
  const std::string_view suffix = text.substr(i);
  int shift = 0;
  if (suffix == "K" || suffix == "k") {
    shift = 10;
  } else if (suffix == "M" || suffix == "m") {
    shift = 20;
  } else if (suffix == "G" || suffix == "g") {
    shift = 30;
  } else if (!suffix.empty() && suffix != "B") {
    return invalidArgument(
        fmt::format("size '{}' has an unknown suffix '{}' (K, M or G)", text, suffix));
  }
  if (value > (std::int64_t{1} << (62 - shift))) {
    return invalidArgument(fmt::format("size '{}' is too large", text));
  }
  return value << shift;
}

namespace {

bool reduces(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter;
}

}  // namespace

Result<std::vector<std::int64_t>> parseSizes(std::string_view text) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) {
      break;
    }
    start = colon + 1;
  }
  if (parts.size() > 3) {
    return invalidArgument(
        fmt::format("sizes '{}': expected SIZE, FIRST:LAST or "
                    "FIRST:LAST:FACTOR",
                    text));
  }
  TRN_ASSIGN_OR_RETURN(const std::int64_t first, parseSize(parts[0]));
  std::int64_t last = first;
  if (parts.size() > 1) {
    TRN_ASSIGN_OR_RETURN(last, parseSize(parts[1]));
  }
  std::int64_t factor = 2;
  if (parts.size() > 2) {
    TRN_ASSIGN_OR_RETURN(factor, parseSize(parts[2]));
  }
  if (first < 1 || last < first || factor < 2) {
    return invalidArgument(
        fmt::format("sizes '{}': need 1 <= FIRST <= LAST and FACTOR >= 2", text));
  }
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = first; s <= last; s *= factor) {
    sizes.push_back(s);
    if (s > last / factor) {
      break;
    }
  }
  return sizes;
}

Result<std::vector<BenchRow>> benchCollective(const Topology& topology,
                                              const BenchRequest& request) {
  if (request.ranks < 1 || request.ranks > topology.chips()) {
    return invalidArgument(fmt::format("{} ranks: the system has {} chips (one rank per chip)",
                                       request.ranks, topology.chips()));
  }
  if (reduces(request.op) && request.dtype != DType::kFp32 && request.dtype != DType::kBf16) {
    return invalidArgument(fmt::format("{} reduces in fp32 or bf16, not {}", opName(request.op),
                                       dtypeName(request.dtype)));
  }
  CollectiveRequest c;
  c.op = request.op;
  c.group.resize(static_cast<std::size_t>(request.ranks));
  std::iota(c.group.begin(), c.group.end(), 0);
  c.elementBytes = byteSize(request.dtype);
  c.variable = request.variable;
  const bool split = c.op == CollectiveOp::kAllReduce || c.op == CollectiveOp::kAllGather ||
                     c.op == CollectiveOp::kReduceScatter || c.op == CollectiveOp::kAllToAll;
  const std::int64_t unit = c.elementBytes * (split ? request.ranks : 1);
  std::vector<BenchRow> rows;
  for (const std::int64_t size : request.sizes) {
    c.bytes = size / unit * unit;
    if (c.bytes == 0) {
      return invalidArgument(fmt::format("size {} is below one {} element per rank ({} bytes)",
                                         size, dtypeName(request.dtype), unit));
    }
    TRN_ASSIGN_OR_RETURN(CollectiveResult result, runCollective(topology, c, request.algorithm));
    BenchRow row;
    row.request = c;
    row.bytes = c.bytes;
    row.count = c.bytes / c.elementBytes;
    const double seconds = static_cast<double>(result.picoseconds) * 1e-12;
    row.algorithmGBps = seconds > 0 ? static_cast<double>(c.bytes) / seconds * 1e-9 : 0;
    row.busGBps = row.algorithmGBps * busBandwidthFactor(c.op, request.ranks);
    row.result = std::move(result);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string benchTable(const BenchRequest& request, const std::vector<BenchRow>& rows) {
  std::string out = fmt::format("# {} over {} ranks, {}\n", opName(request.op), request.ranks,
                                dtypeName(request.dtype));
  out += fmt::format("{:>14} {:>14} {:>9} {:>12} {:>12} {:>12}  {}\n", "size(B)", "count(elems)",
                     "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algorithm");
  for (const BenchRow& r : rows) {
    out += fmt::format("{:>14} {:>14} {:>9} {:>12.2f} {:>12.2f} {:>12.2f}  {}\n", r.bytes, r.count,
                       dtypeName(request.dtype), static_cast<double>(r.result.picoseconds) * 1e-6,
                       r.algorithmGBps, r.busGBps, algorithmName(r.result.algorithm));
  }
  return out;
}

}  // namespace trn::fabric
