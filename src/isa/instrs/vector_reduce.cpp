#include "trn/isa/instrs/vector_reduce.h"
