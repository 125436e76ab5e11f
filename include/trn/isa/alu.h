// Element-wise arithmetic shared by the Vector, Scalar and GpSimd instructions: the fp32 ALU
// operators and the activation functions. Engines compute in fp32 (hardware-trn2.md §10);
// comparisons yield 1.0 or 0.0; bitwise operators act on the value converted to a 32-bit integer
// (exact for the integer inputs they are meant for) and convert back.
#pragma once

#include <span>

#include "trn/isa/enums.h"

namespace trn::isa {

/// a <op> b in fp32.
float applyAlu(AluOp op, float a, float b);

/// a[i] = a[i] <op> b[i] for every i (spans of equal size): applyAlu's results, dispatched once
/// for the whole span so that the loop vectorises.
void applyAluElementwise(AluOp op, std::span<float> a, std::span<const float> b);

/// data[i] = data[i] <op> operand, or operand <op> data[i] when `reverse`, for every i.
void applyAluWithScalar(AluOp op, std::span<float> data, float operand, bool reverse);

/// True for operators that treat their inputs as integers (bitwise and shifts).
bool isBitwise(AluOp op);

/// f(x) in fp32 for a ScalarE activation function. `alpha` is the prelu slope. The hardware uses
/// piecewise-polynomial approximations; trnsim evaluates each function in double precision and
/// rounds once to fp32 (documented in docs/isa.md).
float applyActivation(ActivationFunction f, float x, float alpha = 0.0f);

/// out[i] = applyActivation(f, in[i] * scale + bias, alpha) for every i (spans of equal size,
/// the same span or apart), the product and sum in fp32 (ScalarE's affine input stage),
/// dispatched once for the row. Simple functions (copy,
/// square, relu, abs, ...) vectorise; the transcendental ones still call the C library's double
/// functions per element, which is what keeps results bit-identical to applyActivation.
void applyActivationRow(ActivationFunction f, std::span<const float> in, std::span<float> out,
                        float scale, float bias, float alpha = 0.0f);

}  // namespace trn::isa
