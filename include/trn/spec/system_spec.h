// SystemSpec: a deployment of chips (an instance, an UltraServer, a cluster of either over EFA),
// loaded from configs/systems/<name>.yaml by system_loader.h with the chip descriptions'
// conventions: every number cites its source, unknown keys are rejected, errors are located.
//
// The model it describes: the chips sit at the points of a grid whose dimensions are
// `dimensions`, innermost first, and chip (c0, c1, ...) is numbered c0 + size0 * (c1 + size1 *
// (...)). Along a dimension, chips whose other coordinates are equal are joined:
//   - ring: each chip to its two neighbours (the last to the first), one link of the dimension's
//     link class in each direction to each (a ring of 2 has two links between the pair);
//   - line: the same without the link from the last chip to the first;
//   - switch: each chip has one link to a non-blocking switch, in each direction, and any two
//     chips talk through it (one hop: the sender's uplink, then the receiver's downlink).
// A trn2.48xlarge is a 4 x 4 torus (two rings of NeuronLink); an UltraServer adds a ring of 4
// over the Z links; a cluster adds a switch dimension of nodes over EFA, each chip with its share
// of its node's EFA.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trn/base/units.h"
#include "trn/spec/chip_spec.h"
#include "trn/spec/enums.h"

namespace trn::spec {

/// A kind of chip-to-chip link (YAML: a record in the `links` list).
struct LinkSpec {
  std::string name;          ///< e.g. "neuronlink", "z", "efa"
  BytesPerSecond bandwidth;  ///< per direction
  Picoseconds latency;       ///< per hop: from sending the first byte to the next chip having it
  Picoseconds
      messageOverhead;  ///< per message sent over it (host proxy, EFA setup); 0 on NeuronLink
};

/// One dimension of the grid (YAML: a record in the `dimensions` list).
struct Dimension {
  std::string name;       ///< e.g. "x", "y", "z", "node"
  std::int64_t size = 1;  ///< chips along the dimension
  DimensionKind kind = DimensionKind::kRing;
  std::string link;  ///< the LinkSpec name of its links
};

/// The whole description of one system.
struct SystemSpec {
  std::int64_t version = 0;
  std::string name;
  std::string description;
  std::string chip;  ///< a chip name for loadChip (configs/chips/<chip>.yaml)
  std::vector<LinkSpec> links;
  std::vector<Dimension> dimensions;  ///< innermost first

  std::string file;          ///< the file it was loaded from
  ProvenanceMap provenance;  ///< by full key path, for every value and record

  /// Chips in the system: the product of the dimension sizes (the loader keeps it in range).
  [[nodiscard]] std::int64_t chips() const;
  /// The link class named `name`, or null.
  [[nodiscard]] const LinkSpec* link(std::string_view name) const;
  /// The provenance of `path`, or of its nearest ancestor that has one; null if none.
  [[nodiscard]] const Provenance* provenanceOf(std::string_view path) const;
};

}  // namespace trn::spec
