// The auto-cast pass of --auto-cast all: weights rounded to bf16, every fp32 value bf16, Cast
// nodes to fp32 retargeted, and the model's fp32 interface kept by casts on entry and exit; the
// model compiled from it computes in bf16 (checked against float64 within bf16's rounding).
#include "trn/graph/auto_cast.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "graph_builder.h"
#include "trn/graph/model.h"
#include "trn/graph/shape_inference.h"

namespace trn::graph {
namespace {

/// y = (x * w) cast to fp32 (a no-op Cast PyTorch exports for `.float()`), x [160, 64] fp32 and
/// w [64] of values 1 + i/256 (bf16 keeps 8 significant bits: 1 + i/256 rounds to the nearest
/// multiple of 2/256, ties to even).
Graph scaledModel() {
  fixtures::GraphBuilder b;
  b.input("x", {160, 64});
  b.weight("w", {64});
  Graph& g = b.graph();
  std::vector<float> w(64);
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = 1.0f + static_cast<float>(i) / 256.0f;
  }
  auto bytes = std::make_shared<std::vector<std::byte>>(w.size() * sizeof(float));
  std::memcpy(bytes->data(), w.data(), bytes->size());
  g.initializers["w"].bytes = bytes;
  b.node("Mul", {"x", "w"}, {"p"});
  b.node("Cast", {"p"}, {"y"}, {fixtures::attr("to", std::int64_t{1})}).output("y");
  EXPECT_TRUE(inferShapes(g, {}).ok());
  return std::move(g);
}

TEST(GraphAutoCast, EverythingInsideComputesInBf16AndTheInterfaceStaysFp32) {
  Graph g = scaledModel();
  ASSERT_TRUE(castAll(g, ElementType::kBf16).ok());
  EXPECT_EQ(g.initializer("w")->type, ElementType::kBf16);
  EXPECT_EQ(g.initializer("w")->data().size(), 128u);
  EXPECT_EQ(g.value("x")->type, ElementType::kFp32);
  EXPECT_EQ(g.value("y")->type, ElementType::kFp32);
  EXPECT_EQ(g.value("p")->type, ElementType::kBf16);
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes.front().opType, "Cast");  // x on entry
  EXPECT_EQ(g.nodes.front().inputs[0], "x");
  EXPECT_EQ(g.nodes[1].inputs[0], g.nodes.front().outputs[0]);
  EXPECT_EQ(g.nodes[2].intAttribute("to"), 16);  // the model's own cast now to bf16
  EXPECT_EQ(g.nodes.back().opType, "Cast");      // y back to fp32 on exit
  EXPECT_EQ(g.nodes.back().outputs[0], "y");
  EXPECT_EQ(g.nodes.back().intAttribute("to"), 1);
}

TEST(GraphAutoCast, EverythingComputesInBf16Only) {
  for (const ElementType type : {ElementType::kFp16, ElementType::kFp8E4m3}) {
    Graph g = scaledModel();
    const Status refused = castAll(g, type);
    EXPECT_EQ(refused.code(), ErrorCode::kUnsupported);
    EXPECT_NE(refused.message().find(fmt::format("in bf16 here, not {}", elementTypeName(type))),
              std::string::npos)
        << refused.toString();
    EXPECT_EQ(g.initializer("w")->type, ElementType::kFp32);  // untouched
  }
}

TEST(GraphAutoCast, TheCompiledModelRoundsAsBf16Does) {
  Graph g = scaledModel();
  ASSERT_TRUE(castAll(g, ElementType::kBf16).ok());
  Result<runtime::Session> session = runtime::Session::open("trn2");
  ASSERT_TRUE(session.ok());
  Result<CompiledModel> model = compileGraph(*session, std::move(g));
  ASSERT_TRUE(model.ok()) << model.status().toString();
  std::vector<float> xs(160 * 64);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i] = 1.0f + static_cast<float>(i % 128) / 128.0f;  // exact in bf16
  }
  const runtime::NpyArray x = runtime::floatArray({160, 64}, xs);
  Result<ModelRun> run = runModel(*session, *model, {&x, 1}, {});
  ASSERT_TRUE(run.ok()) << run.status().toString();
  const std::vector<float> y = runtime::floatValues(run->outputs.at(0));
  ASSERT_EQ(y.size(), xs.size());
  int inexact = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const std::size_t c = i % 64;
    const double w = 1.0 + 2.0 * std::nearbyint(static_cast<double>(c) / 2.0) / 256.0;
    const double exact = static_cast<double>(xs[i]) * w;
    // The product rounded to bf16 (8 significant bits): within half a bf16 ulp of exact.
    const double ulp = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(exact))) - 7);
    ASSERT_LE(std::fabs(y[i] - exact), ulp / 2) << i;
    inexact += y[i] != exact ? 1 : 0;
  }
  EXPECT_GT(inexact, 0);  // the products really were rounded to bf16
}

}  // namespace
}  // namespace trn::graph
