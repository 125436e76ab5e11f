// Every key of a system description, declared once: YAML name, member, type/unit, allowed range
// and a one-line meaning. Cross-field rules are in system_loader.cpp.
#include "system_schema.h"

#include "chip_ranges.h"

namespace trn::spec::detail {
namespace {

/// Chips along one dimension (the loader bounds the product).
constexpr std::int64_t kMaxDimensionSize = 1 << 20;

const Schema<LinkSpec>& linkSchema() {
  static const Schema<LinkSpec> s = [] {
    Schema<LinkSpec> t;
    t.leaf("name", &LinkSpec::name, "the name dimensions use for it");
    t.leaf("bandwidth", &LinkSpec::bandwidth, "bandwidth of one link, per direction")
        .range(BytesPerSecond(1), kMaxBandwidth);
    t.leaf("latency", &LinkSpec::latency, "per hop: first byte sent to first byte at the next chip")
        .range(Picoseconds(0), kMaxLatency);
    t.leaf("message_overhead", &LinkSpec::messageOverhead,
           "per message sent over it (host proxy, network setup)")
        .range(Picoseconds(0), kMaxLatency);
    return t;
  }();
  return s;
}

const Schema<Dimension>& dimensionSchema() {
  static const Schema<Dimension> s = [] {
    Schema<Dimension> t;
    t.leaf("name", &Dimension::name, "e.g. x, y, z, node");
    t.leaf("size", &Dimension::size, "chips along it").range(1, kMaxDimensionSize);
    t.leaf("kind", &Dimension::kind, "ring, line or switch");
    t.leaf("link", &Dimension::link, "the name of its links' class (links[].name)");
    return t;
  }();
  return s;
}

}  // namespace

const Schema<SystemSpec>& systemSchema() {
  static const Schema<SystemSpec> s = [] {
    Schema<SystemSpec> t;
    t.leaf("version", &SystemSpec::version, "format version of the file").range(1, 1).plain();
    t.leaf("name", &SystemSpec::name, "system name").plain();
    t.leaf("description", &SystemSpec::description, "one-line description").plain().optional();
    t.leaf("chip", &SystemSpec::chip, "the chip (configs/chips/<chip>.yaml) at every point");
    t.recordList("links", &SystemSpec::links, linkSchema(), "the kinds of link between chips");
    t.recordList("dimensions", &SystemSpec::dimensions, dimensionSchema(),
                 "the grid of chips, innermost dimension first");
    return t;
  }();
  return s;
}

}  // namespace trn::spec::detail
