#include "trn/base/file_reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "scratch_dir.h"

namespace trn {
namespace {

class FileReaderTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& contents) const {
    return scratch_.write(name, contents);
  }

  trn::testing::ScratchDir scratch_;
  const std::filesystem::path& dir_ = scratch_.path();
};

TEST_F(FileReaderTest, ReadsARegularFileExactly) {
  const std::string path = write("a.bin", std::string("ab\0cd", 5));
  const Result<std::vector<std::byte>> bytes = readFileBounded(path, 5, "test file");
  ASSERT_TRUE(bytes.ok()) << bytes.status().toString();
  ASSERT_EQ(bytes->size(), 5u);
  EXPECT_EQ((*bytes)[2], std::byte{0});
  EXPECT_EQ((*bytes)[4], std::byte{'d'});
}

TEST_F(FileReaderTest, RejectsAFileAboveTheLimitBeforeReadingIt) {
  const std::string path = write("big.bin", std::string(100, 'x'));
  const Result<std::vector<std::byte>> bytes = readFileBounded(path, 99, "test file");
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), ErrorCode::kOutOfRange);
  EXPECT_NE(bytes.status().message().find("100 bytes"), std::string::npos);
  EXPECT_NE(bytes.status().message().find("99 bytes"), std::string::npos);
}

TEST_F(FileReaderTest, RejectsDevicesDirectoriesAndFifos) {
  for (const std::string& path : {std::string("/dev/zero"), std::string("/dev/urandom"),
                                 dir_.string()}) {
    const Result<std::vector<std::byte>> bytes = readFileBounded(path, 1 << 20, "program");
    ASSERT_FALSE(bytes.ok()) << path;
    EXPECT_NE(bytes.status().message().find("not a regular file"), std::string::npos)
        << bytes.status().message();
  }
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Result<std::vector<std::byte>> bytes = readFileBounded(fifo, 1 << 20, "program");
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("not a regular file"), std::string::npos);
}

TEST_F(FileReaderTest, NamesAMissingFile) {
  const Result<std::vector<std::byte>> bytes =
      readFileBounded((dir_ / "missing").string(), 10, "program");
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), ErrorCode::kIoError);
  EXPECT_NE(bytes.status().message().find("missing: cannot open"), std::string::npos);
}

}  // namespace
}  // namespace trn
