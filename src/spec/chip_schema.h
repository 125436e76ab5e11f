// The schema of a chip description: the single declaration of every YAML key of
// configs/chips/*.yaml (see chip_schema.cpp).
#pragma once

#include "schema.h"

namespace trn::spec::detail {

/// The root schema; every struct of chip_spec.h is reachable from it.
const Schema<ChipSpec>& chipSchema();

/// The schema of the `costs` section (cost_schema.cpp).
const Schema<CostModel>& costModelSchema();

}  // namespace trn::spec::detail
