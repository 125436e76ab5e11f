// Test support for compiled models: the trn2 session and the test models' paths the tests
// compile with, a graph compiled and run functionally, and the largest difference between a run's
// output and the reference a test reads (PyTorch's output saved beside the model, or a float64
// computation).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "trn/graph/model.h"
#include "trn/runtime/npy.h"
#include "trn/runtime/session.h"

namespace trn::graph::fixtures {

/// A session on trn2 (a failed expectation if the chip does not load).
inline runtime::Session trn2() {
  Result<runtime::Session> s = runtime::Session::open("trn2");
  EXPECT_TRUE(s.ok()) << s.status().toString();
  return std::move(s).value();
}

/// The path of `file` in tests/graph/models.
inline std::string modelPath(const std::string& file) {
  return std::string(TRN_SOURCE_DIR) + "/tests/graph/models/" + file;
}

/// `graph` compiled for trn2 (with `compile`, on `lnc` cores) and run functionally on `inputs`:
/// its first output as floats (empty, with a failed expectation, when it does not compile or run).
inline std::vector<float> runFunctional(Graph graph, const std::vector<runtime::NpyArray>& inputs,
                                        const kernel::CompileOptions& compile = {}, int lnc = 1) {
  Result<runtime::Session> opened = runtime::Session::open("trn2");
  EXPECT_TRUE(opened.ok()) << opened.status().toString();
  if (!opened.ok()) {
    return {};
  }
  Result<CompiledModel> model =
      compileGraph(*opened, std::move(graph), compile, Placement{.lnc = lnc});
  EXPECT_TRUE(model.ok()) << model.status().toString();
  if (!model.ok()) {
    return {};
  }
  runtime::RunOptions options;
  options.mode = core::RunMode::kFunctionalOnly;
  Result<ModelRun> result = runModel(*opened, *model, inputs, options);
  EXPECT_TRUE(result.ok()) << result.status().toString();
  return result.ok() ? runtime::floatValues(result->outputs.at(0)) : std::vector<float>{};
}

/// max |got - want| over the elements (+infinity, with a failed expectation, when the element
/// counts differ).
template <typename Want>
double worstError(const std::vector<float>& got, const std::vector<Want>& want) {
  EXPECT_EQ(got.size(), want.size());
  if (got.size() != want.size()) {
    return INFINITY;
  }
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])));
  }
  return worst;
}

/// max |got - want| over the elements of two arrays (+infinity, with a failed expectation, when
/// the shapes differ).
inline double worstError(const runtime::NpyArray& got, const runtime::NpyArray& want) {
  EXPECT_EQ(got.shape, want.shape);
  if (got.shape != want.shape) {
    return INFINITY;
  }
  return worstError(runtime::floatValues(got), runtime::floatValues(want));
}

}  // namespace trn::graph::fixtures
