#include "trn/isa/instrs/gpsimd_engine.h"
