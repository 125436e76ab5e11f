// The compiled-model file (.trnx): a model saved and read back runs as the compiled one does, bit
// for bit and cycle for cycle; a damaged file is an error naming what is wrong, never a crash.
#include "trn/graph/model_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "model_check.h"
#include "scratch_dir.h"
#include "trn/graph/node_profile.h"
#include "trn/runtime/npy.h"

namespace trn::graph {
namespace {

using fixtures::modelPath;
using fixtures::trn2;

using Json = nlohmann::json;

CompiledModel compiled(const runtime::Session& session, const std::string& file, std::int64_t batch,
                       int lnc) {
  PipelineOptions pipeline;
  if (batch > 0) {
    pipeline.shapes.symbols = {{"batch", batch}};
  }
  Result<CompiledModel> model = compileModel(session, modelPath(file), pipeline, {},
                                             {.partition = Partition::kAuto, .lnc = lnc});
  EXPECT_TRUE(model.ok()) << model.status().toString();
  return std::move(model).value();
}

std::vector<std::byte> readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

void writeBytes(const std::string& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

struct ModelCase {
  std::string file;
  std::int64_t batch = 0;
  int lnc = 1;
};

void PrintTo(const ModelCase& c, std::ostream* out) { *out << c.file << " at LNC=" << c.lnc; }

class SavedModel : public ::testing::TestWithParam<ModelCase> {};

TEST_P(SavedModel, RunsAsTheCompiledModelDoes) {
  const runtime::Session session = trn2();
  const CompiledModel model = compiled(session, GetParam().file, GetParam().batch, GetParam().lnc);
  const testing::ScratchDir dir;
  ASSERT_TRUE(saveModel(model, "trn2", dir.file("m.trnx")).ok());
  Result<LoadedModel> loaded = loadModel(dir.file("m.trnx"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().toString();
  EXPECT_EQ(loaded->chip, "trn2");
  EXPECT_EQ(loaded->model.lnc, GetParam().lnc);
  EXPECT_EQ(loaded->model.parts.size(), model.parts.size());
  EXPECT_EQ(loaded->model.kernels, model.kernels);
  EXPECT_EQ(loaded->model.launchedInstructions(), model.launchedInstructions());
  EXPECT_EQ(loaded->model.nodeLowerings(), model.nodeLowerings());

  const Shape shape = *model.graph->value(model.graph->inputs[0])->shape;
  std::vector<float> values(static_cast<std::size_t>(shape.elementCount().value()));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : values) {
    v = uniform(rng);
  }
  const runtime::NpyArray x = runtime::floatArray(shape.sizes(), values);
  runtime::RunOptions options;
  options.record = true;
  Result<ModelRun> want = runModel(session, model, {&x, 1}, options);
  Result<ModelRun> got = runModel(session, loaded->model, {&x, 1}, options);
  ASSERT_TRUE(want.ok() && got.ok()) << want.status().toString() << got.status().toString();
  ASSERT_EQ(got->outputs.size(), want->outputs.size());
  for (std::size_t i = 0; i < got->outputs.size(); ++i) {
    EXPECT_EQ(got->outputs[i].shape, want->outputs[i].shape);
    EXPECT_EQ(got->outputs[i].data, want->outputs[i].data);
  }
  EXPECT_EQ(got->stats.total, want->stats.total);
  EXPECT_EQ(got->stats.instructions, want->stats.instructions);
  const std::vector<NodeTime> a = profileNodes(model, *want);
  const std::vector<NodeTime> b = profileNodes(loaded->model, *got);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t n = 0; n < a.size(); ++n) {
    EXPECT_EQ(a[n].node, b[n].node);
    EXPECT_EQ(a[n].instructions, b[n].instructions);
    EXPECT_EQ(a[n].last, b[n].last);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SavedModel,
                         ::testing::Values(ModelCase{"torch_stack.onnx", 2, 1},
                                           ModelCase{"torch_stack.onnx", 2, 2},
                                           ModelCase{"torch_cnn.onnx", 0, 1},
                                           ModelCase{"mlp.onnx", 4, 2}));

/// A saved model split into its header, manifest and blobs, to damage and write back.
struct Parts {
  std::vector<std::byte> header;
  Json manifest;
  std::vector<std::byte> blobs;

  static Parts of(const std::vector<std::byte>& file) {
    Parts p;
    p.header.assign(file.begin(), file.begin() + 24);
    std::uint64_t length = 0;
    std::memcpy(&length, file.data() + 16, 8);
    p.manifest = Json::parse(reinterpret_cast<const char*>(file.data()) + 24,
                             reinterpret_cast<const char*>(file.data()) + 24 + length);
    p.blobs.assign(file.begin() + 24 + static_cast<std::ptrdiff_t>(length), file.end());
    return p;
  }

  [[nodiscard]] std::vector<std::byte> bytes() const {
    const std::string text = manifest.dump();
    std::vector<std::byte> out = header;
    const std::uint64_t length = text.size();
    std::memcpy(out.data() + 16, &length, 8);
    for (const char c : text) {
      out.push_back(static_cast<std::byte>(c));
    }
    out.insert(out.end(), blobs.begin(), blobs.end());
    return out;
  }
};

class DamagedModel : public ::testing::Test {
 protected:
  void SetUp() override {
    const runtime::Session session = trn2();
    ASSERT_TRUE(saveModel(compiled(session, "torch_stack.onnx", 2, 1), "trn2", path_).ok());
    file_ = readBytes(path_);
  }

  /// The error loading `bytes` gives (empty if it loads).
  std::string loadError(std::span<const std::byte> bytes) {
    writeBytes(damaged_, bytes);
    Result<LoadedModel> loaded = loadModel(damaged_);
    return loaded.ok() ? std::string() : loaded.status().toString();
  }

  std::string edited(const std::function<void(Json&)>& edit) {
    Parts p = Parts::of(file_);
    edit(p.manifest);
    return loadError(p.bytes());
  }

  testing::ScratchDir dir_;
  std::string path_ = dir_.file("m.trnx");
  std::string damaged_ = dir_.file("damaged.trnx");
  std::vector<std::byte> file_;
};

TEST_F(DamagedModel, HeaderErrorsNameTheProblem) {
  EXPECT_NE(loadError(std::span(file_).first(10)).find("shorter than its 24-byte header"),
            std::string::npos);
  std::vector<std::byte> bad = file_;
  bad[0] = std::byte{'X'};
  EXPECT_NE(loadError(bad).find("no TRNXMODL magic"), std::string::npos);
  bad = file_;
  bad[8] = std::byte{9};
  EXPECT_NE(loadError(bad).find("format version 9"), std::string::npos);
  bad = file_;
  bad[23] = std::byte{0x7f};
  EXPECT_NE(loadError(bad).find("manifest length"), std::string::npos);
  bad = file_;
  bad[24] = std::byte{'!'};
  EXPECT_NE(loadError(bad).find("not a JSON object"), std::string::npos);
  EXPECT_NE(loadError(std::span(file_).first(file_.size() / 2)).find("beyond the end of the file"),
            std::string::npos);
}

TEST_F(DamagedModel, ManifestErrorsNameTheProblem) {
  EXPECT_NE(edited([](Json& m) {
              m["parts"][1]["inputs"][0]["value"] = "ghost";
            }).find("reads 'ghost', which neither the graph inputs"),
            std::string::npos);
  EXPECT_NE(edited([](Json& m) { m["parts"][0]["kernel"] = 7; }).find("runs kernel 7 of 1"),
            std::string::npos);
  EXPECT_NE(edited([](Json& m) {
              m["parts"][0]["nodes"] = {0, 100000};
            }).find("outside the model's"),
            std::string::npos);
  EXPECT_NE(edited([](Json& m) {
              m["parts"][0]["inputs"][0]["shape"] = {3};
            }).find("input 0 ('x') is not input 0 of its kernel"),
            std::string::npos);
  EXPECT_NE(edited([](Json& m) { m["lnc"] = 2; }).find("compiled for LNC 2"), std::string::npos);
  EXPECT_NE(edited([](Json& m) {
              m["blobs"][0]["length"] = 1ull << 40;
            }).find("beyond the end of the file"),
            std::string::npos);
  EXPECT_NE(edited([](Json& m) {
              m["graph"]["inputs"][0]["type"] = "fp128";
            }).find("unknown type 'fp128'"),
            std::string::npos);
  EXPECT_NE(edited([](Json& m) { m["graph"]["outputs"] = Json::array(); }).find("outputs"),
            std::string::npos);
  EXPECT_NE(edited([](Json& m) { m.erase("chip"); }).find("has no 'chip'"), std::string::npos);
  EXPECT_NE(edited([](Json& m) { m["parts"] = 3; }).find("malformed"), std::string::npos);
  // Every error names the file.
  const std::string error = edited([](Json& m) { m["parts"][0]["kernel"] = 7; });
  EXPECT_NE(error.find(damaged_), std::string::npos) << error;
}

// Any byte changed: an error or a model that runs (to completion or to a run error), never a
// crash; run under the sanitizers, also never an out-of-bounds read.
TEST_F(DamagedModel, AnyByteChangedIsAnErrorOrAModelThatRuns) {
  const runtime::Session session = trn2();
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::size_t> position(0, file_.size() - 1);
  std::uniform_int_distribution<int> value(0, 255);
  runtime::RunOptions options;
  options.mode = core::RunMode::kTimingOnly;
  int loads = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<std::byte> bad = file_;
    bad[position(rng)] = static_cast<std::byte>(value(rng));
    writeBytes(damaged_, bad);
    Result<LoadedModel> loaded = loadModel(damaged_);
    if (loaded.ok()) {
      ++loads;
      (void)runModel(session, loaded->model, {}, options);
    }
  }
  EXPECT_GT(loads, 0);  // some bytes (weights' values, names) change nothing the reader checks
}

}  // namespace
}  // namespace trn::graph
