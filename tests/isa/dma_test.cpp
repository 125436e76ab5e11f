// Golden tests of the instructions in this family against float64 references.
#include <gtest/gtest.h>
