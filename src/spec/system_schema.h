// Internal to the spec module: the schema of a system description (configs/systems/*.yaml),
// declared once in system_schema.cpp like the chip's.
#pragma once

#include "schema.h"
#include "trn/spec/system_spec.h"

namespace trn::spec::detail {

const Schema<SystemSpec>& systemSchema();

}  // namespace trn::spec::detail
