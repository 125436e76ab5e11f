// The engines as the ISA names them: the same enum and helpers as spec/engine.h, which owns them,
// so that instructions, chip cost classes and the core speak of one Engine type.
#pragma once

#include "trn/spec/engine.h"

namespace trn::isa {

using spec::Engine;
using spec::engineName;
using spec::EngineSet;
using spec::kAllEngines;
using spec::kNumEngines;
using spec::parseEngine;

}  // namespace trn::isa
