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
  const Result<FileBytes> bytes = readFileBounded(path, 5, "test file");
  ASSERT_TRUE(bytes.ok()) << bytes.status().toString();
  ASSERT_EQ(bytes->size(), 5u);
  EXPECT_EQ((*bytes)[2], std::byte{0});
  EXPECT_EQ((*bytes)[4], std::byte{'d'});
}

TEST_F(FileReaderTest, RejectsAFileAboveTheLimitBeforeReadingIt) {
  const std::string path = write("big.bin", std::string(100, 'x'));
  const Result<FileBytes> bytes = readFileBounded(path, 99, "test file");
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), ErrorCode::kOutOfRange);
  EXPECT_NE(bytes.status().message().find("100 bytes"), std::string::npos);
  EXPECT_NE(bytes.status().message().find("99 bytes"), std::string::npos);
}

TEST_F(FileReaderTest, RejectsDevicesDirectoriesAndFifos) {
  for (const std::string& path : {std::string("/dev/zero"), std::string("/dev/urandom"),
                                 dir_.string()}) {
    const Result<FileBytes> bytes = readFileBounded(path, 1 << 20, "program");
    ASSERT_FALSE(bytes.ok()) << path;
    EXPECT_NE(bytes.status().message().find("not a regular file"), std::string::npos)
        << bytes.status().message();
  }
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Result<FileBytes> bytes = readFileBounded(fifo, 1 << 20, "program");
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("not a regular file"), std::string::npos);
}

TEST_F(FileReaderTest, NamesAMissingFile) {
  const Result<FileBytes> bytes = readFileBounded((dir_ / "missing").string(), 10, "program");
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), ErrorCode::kIoError);
  EXPECT_NE(bytes.status().message().find("missing: cannot open"), std::string::npos);
}

TEST_F(FileReaderTest, ReadsRangesAndNamesAFileThatShrankSinceItWasOpened) {
  const std::string path = write("r.bin", "0123456789");
  Result<std::unique_ptr<BoundedFile>> file = BoundedFile::open(path, 10, "program");
  ASSERT_TRUE(file.ok()) << file.status().toString();
  EXPECT_EQ((*file)->size(), 10u);
  FileBytes buffer;
  const Result<std::span<const std::byte>> middle = (*file)->read(3, 4, buffer);
  ASSERT_TRUE(middle.ok()) << middle.status().toString();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(middle->data()), middle->size()), "3456");
  std::filesystem::resize_file(path, 6);
  const Result<std::span<const std::byte>> tail = (*file)->read(4, 6, buffer);
  ASSERT_FALSE(tail.ok());
  EXPECT_EQ(tail.status().code(), ErrorCode::kIoError);
  EXPECT_NE(tail.status().message().find("the file shrank while it was read (6 of 10 bytes)"),
            std::string::npos)
      << tail.status().message();
}

TEST(MemoryByteSource, ViewsTheBytesItWasGiven) {
  const std::vector<std::byte> bytes = {std::byte{1}, std::byte{2}, std::byte{3}};
  const MemoryByteSource source(bytes);
  FileBytes unused;
  const Result<std::span<const std::byte>> view = source.read(1, 2, unused);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->data(), bytes.data() + 1);
  EXPECT_EQ(view->size(), 2u);
  EXPECT_TRUE(unused.empty());
}

}  // namespace
}  // namespace trn
