// Reading chip files: only regular files of at most 16 MiB are read (through readFileBounded),
// whether named directly or by a `base:` of an overlay, and a base chain can neither recurse nor
// grow past eight files.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scratch_dir.h"
#include "test_util.h"

namespace trn::spec {
namespace {

namespace fs = std::filesystem;

/// Chip files in a scratch directory of the test's own.
class ChipFiles : public ::testing::Test {
 protected:
  /// Writes `text` to `name` in the directory; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    return scratch_.write(name, text);
  }

  trn::testing::ScratchDir scratch_;
  const fs::path& dir_ = scratch_.path();
};

TEST_F(ChipFiles, ADirectoryIsNotAChipFile) {
  const fs::path path = dir_ / "dir.yaml";
  fs::create_directory(path);
  const Result<ChipSpec> spec = loadChip(path.string());
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), ErrorCode::kIoError);
  EXPECT_EQ(spec.status().message(),
            path.string() + ": not a regular file; a chip description is read from a regular file");
}

TEST_F(ChipFiles, AFifoIsRejectedWithoutWaitingForAWriter) {
  const fs::path path = dir_ / "pipe.yaml";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const Result<ChipSpec> spec = loadChip(path.string());
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            path.string() + ": not a regular file; a chip description is read from a regular file");
}

TEST_F(ChipFiles, AFileOver16MiBIsRejectedBeforeItIsRead) {
  const std::string path = write("huge.yaml", "version: 1\n");
  fs::resize_file(path, (std::uintmax_t{16} << 20) + 1);  // sparse: nothing is written
  const Result<ChipSpec> spec = loadChip(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(spec.status().message(),
            path + ": 16777217 bytes is larger than the largest chip description trnsim reads "
                   "(16777216 bytes)");
}

TEST_F(ChipFiles, ABaseGoesThroughTheSameReader) {
  ASSERT_EQ(::mkfifo((dir_ / "pipe.yaml").c_str(), 0600), 0);
  const std::string overlay = write("o.yaml", "version: 1\nname: o\nbase: pipe.yaml\n");
  const Result<ChipSpec> spec = loadChip(overlay);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(), (dir_ / "pipe.yaml").string() +
                                         ": not a regular file; a chip description is read "
                                         "from a regular file");
}

TEST_F(ChipFiles, ABaseCannotBeTheFileItself) {
  const std::string self = write("self.yaml", "version: 1\nname: s\nbase: self.yaml\n");
  const Result<ChipSpec> spec = loadChip(self);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            fmt::format("{0}:3:7: base: inheritance cycle: {0} -> {0}", self));
}

TEST_F(ChipFiles, ABaseChainStopsAfterEightFiles) {
  // c<i> overrides c<i-1> and c0 overrides trn2: c6 is a chain of eight files, c7 of nine.
  write("c0.yaml", "version: 1\nname: c0\nbase: trn2\n");
  for (int i = 1; i <= 7; ++i) {
    write(fmt::format("c{}.yaml", i),
          fmt::format("version: 1\nname: c{}\nbase: c{}.yaml\n", i, i - 1));
  }
  const Result<ChipSpec> eight = loadChip((dir_ / "c6.yaml").string());
  EXPECT_TRUE(eight.ok()) << eight.status().toString();
  const Result<ChipSpec> nine = loadChip((dir_ / "c7.yaml").string());
  ASSERT_FALSE(nine.ok());
  EXPECT_EQ(nine.status().message(),
            fmt::format("{}:3:7: base: more than {} levels of base: files",
                        (dir_ / "c0.yaml").string(), kMaxBaseDepth));
}

}  // namespace
}  // namespace trn::spec
