#include "trn/isa/instrs/vector_special.h"
