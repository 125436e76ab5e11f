// ONNX import: the committed models (tests/graph/models, written by scripts/make_test_models.py)
// load with their weights, and bad files fail with messages that say where.
#include "trn/graph/onnx_import.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "scratch_dir.h"
#include "trn/base/file_reader.h"
#include "trn/graph/shape_inference.h"

namespace trn::graph {
namespace {

std::string model(const std::string& name) {
  return std::string(TRN_SOURCE_DIR) + "/tests/graph/models/" + name + ".onnx";
}

std::vector<std::byte> bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

TEST(OnnxImport, MlpHasItsNodesWeightsAndSymbolicBatch) {
  Result<Graph> g = importOnnx(model("mlp"));
  ASSERT_TRUE(g.ok()) << g.status().toString();
  EXPECT_EQ(g->name, "mlp");
  EXPECT_EQ(g->opsetVersion, 17);
  ASSERT_EQ(g->nodes.size(), 4u);
  EXPECT_EQ(g->nodes[0].opType, "Gemm");
  EXPECT_EQ(g->nodes[0].name, "fc1");
  EXPECT_EQ(g->nodes[0].intAttribute("transB"), 1);
  EXPECT_EQ(g->inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g->outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(g->value("x")->shape->toString(), "[batch, 16]");
  EXPECT_EQ(g->initializers.size(), 4u);
  EXPECT_EQ(g->parameterCount(), 32 * 16 + 32 + 32 * 8 + 8);
  EXPECT_EQ(g->parameterBytes(), 808 * 4);
  EXPECT_EQ(g->initializer("w1")->shape.toString(), "[32, 16]");
  EXPECT_EQ(deviceDType(g->initializer("w1")->type), DType::kFp32);
}

TEST(OnnxImport, IntegerInitializersAreNotParameters) {
  Result<Graph> g = importOnnx(model("attention"));
  ASSERT_TRUE(g.ok()) << g.status().toString();
  EXPECT_EQ(g->parameterCount(), 4 * 32 * 32 + 1);  // four projections and the scale
  EXPECT_EQ(g->initializer("heads_shape")->toInt64(), (std::vector<std::int64_t>{2, 8, 4, 8}));
}

TEST(OnnxImport, TruncatedFileIsAParseErrorNamingTheFile) {
  const std::vector<std::byte> bytes = bytesOf(model("mlp"));
  ASSERT_GT(bytes.size(), 1000u);
  testing::ScratchDir dir;
  const std::string path = dir.file("truncated.onnx");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size() / 2));
  Result<Graph> g = importOnnx(path);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), ErrorCode::kParseError);
  EXPECT_NE(g.status().message().find(path + ": not a valid ONNX model"), std::string::npos)
      << g.status().message();
  // Every cut inside the first tensor's data fails too, never crashes.
  for (std::size_t cut = 1; cut < bytes.size(); cut += 97) {
    (void)importOnnxBytes(std::span(bytes.data(), cut), "cut");
  }
}

TEST(OnnxImport, MissingInputNamesTheNodeAndTheInput) {
  Result<Graph> g = importOnnx(model("missing_input"));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(g.status().message(),
            model("missing_input") +
                ": node 'add_ghost' (Add) with inputs 'x': fp32[2, 3], 'ghost' (undefined): input "
                "'ghost' is not a graph input, an initializer or the output of an earlier node");
}

TEST(OnnxImport, FilesAreBoundedAndMustExist) {
  Result<Graph> small = importOnnx(model("mlp"), ImportOptions{.maxFileBytes = 100});
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("mlp.onnx"), std::string::npos);
  Result<Graph> none = importOnnx(model("no_such_model"));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no_such_model.onnx"), std::string::npos);
}

TEST(OnnxImport, GarbageIsNotAModel) {
  const std::string text = "this is not a protobuf message at all \xff\xff\xff\xff";
  Result<Graph> g = importOnnxBytes(
      std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()), "garbage.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("garbage.onnx"), std::string::npos);
}

TEST(OnnxImport, CorruptedModelsFailCleanly) {
  // Random byte changes in every model: import and shape inference either succeed or return an
  // error; neither crashes nor trips an internal check.
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int imported = 0;
  for (const char* name : {"mlp", "attention", "conv_bn_relu", "layer_norm"}) {
    const std::vector<std::byte> original = bytesOf(model(name));
    for (int round = 0; round < 400; ++round) {
      std::vector<std::byte> bytes = original;
      for (int k = 0; k < 1 + round % 4; ++k) {
        bytes[next() % bytes.size()] = static_cast<std::byte>(next());
      }
      Result<Graph> g = importOnnxBytes(bytes, name);
      if (g.ok()) {
        ++imported;
        (void)inferShapes(*g, {.symbols = {{"batch", 3}}});
      }
    }
  }
  EXPECT_GT(imported, 0);
}

}  // namespace
}  // namespace trn::graph
