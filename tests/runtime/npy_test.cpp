#include "trn/runtime/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>

namespace trn::runtime {
namespace {

// Files written by numpy 1.24 (np.save), byte for byte.
const std::string kNumpyFloat32x2x3("\x93""NUMPY\x01""\x00""v\x00""{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }                                                          \x0a""\x00""\x00""\x00""\x00""\x00""\x00""\x80""?\x00""\x00""\x00""@\x00""\x00""@@\x00""\x00""\x80""@\x00""\x00""\xa0""@", 152);
const std::string kNumpyInt16x3("\x93""NUMPY\x01""\x00""v\x00""{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }                                                            \x0a""\x01""\x00""\xfe""\xff""\x03""\x00""", 134);
const std::string kNumpyUInt8Scalar("\x93""NUMPY\x01""\x00""v\x00""{'descr': '|u1', 'fortran_order': False, 'shape': (), }                                                              \x0a""\x07""", 129);

std::span<const std::byte> bytesOf(const std::string& s) { return std::as_bytes(std::span(s)); }

template <typename T>
std::vector<T> valuesOf(const NpyArray& a) {
  std::vector<T> v(a.data.size() / sizeof(T));
  std::memcpy(v.data(), a.data.data(), a.data.size());
  return v;
}

TEST(Npy, ReadsFilesWrittenByNumpy) {
  const Result<NpyArray> f = parseNpy(bytesOf(kNumpyFloat32x2x3), "f.npy");
  ASSERT_TRUE(f.ok()) << f.status().toString();
  EXPECT_EQ(f->type, NpyType::kFloat32);
  EXPECT_EQ(f->shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(valuesOf<float>(*f), (std::vector<float>{0, 1, 2, 3, 4, 5}));

  const Result<NpyArray> i = parseNpy(bytesOf(kNumpyInt16x3), "i.npy");
  ASSERT_TRUE(i.ok()) << i.status().toString();
  EXPECT_EQ(i->type, NpyType::kInt16);
  EXPECT_EQ(i->shape, (std::vector<std::int64_t>{3}));
  EXPECT_EQ(valuesOf<std::int16_t>(*i), (std::vector<std::int16_t>{1, -2, 3}));

  const Result<NpyArray> s = parseNpy(bytesOf(kNumpyUInt8Scalar), "s.npy");
  ASSERT_TRUE(s.ok()) << s.status().toString();
  EXPECT_TRUE(s->shape.empty());
  EXPECT_EQ(s->elementCount(), std::optional<std::int64_t>(1));
  EXPECT_EQ(static_cast<int>(s->data.at(0)), 7);
}

TEST(Npy, WritesExactlyWhatNumpyWrites) {
  for (const std::string* golden : {&kNumpyFloat32x2x3, &kNumpyInt16x3, &kNumpyUInt8Scalar}) {
    const NpyArray parsed = parseNpy(bytesOf(*golden), "golden").value();
    const std::vector<std::byte> written = serializeNpy(parsed).value();
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(written.data()), written.size()), *golden);
  }
}

TEST(Npy, RoundTripsEveryTypeThroughAFile) {
  const auto path = std::filesystem::temp_directory_path() / "trnsim_npy_test.npy";
  for (const NpyType type :
       {NpyType::kBool, NpyType::kInt8, NpyType::kUInt8, NpyType::kInt16, NpyType::kUInt16,
        NpyType::kFloat16, NpyType::kInt32, NpyType::kUInt32, NpyType::kFloat32, NpyType::kInt64,
        NpyType::kUInt64, NpyType::kFloat64}) {
    NpyArray a;
    a.type = type;
    a.shape = {3, 0, 2};
    ASSERT_TRUE(writeNpy(path.string(), a).ok());
    a.shape = {4, 5};
    a.data.resize(20 * npyItemSize(type));
    for (std::size_t k = 0; k < a.data.size(); ++k) {
      a.data[k] = static_cast<std::byte>(k * 37 + 11);
    }
    ASSERT_TRUE(writeNpy(path.string(), a).ok());
    const Result<NpyArray> back = readNpy(path.string());
    ASSERT_TRUE(back.ok()) << back.status().toString();
    EXPECT_EQ(back->type, type);
    EXPECT_EQ(back->shape, a.shape);
    EXPECT_EQ(back->data, a.data);
    const auto raw = serializeNpy(a).value();
    const std::size_t headerEnd = raw.size() - a.data.size();
    EXPECT_EQ(headerEnd % 64, 0U) << "data must start 64-byte aligned";
  }
  std::filesystem::remove(path);
}

void expectError(const std::string& bytes, const std::string& fragment) {
  const Result<NpyArray> r = parseNpy(bytesOf(bytes), "bad.npy");
  ASSERT_FALSE(r.ok()) << "accepted a bad file; expected: " << fragment;
  EXPECT_NE(r.status().message().find("bad.npy"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
}

std::string withHeader(const std::string& dict, const std::string& data = "") {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

TEST(Npy, RejectsMalformedFilesWithAClearMessage) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  ASSERT_TRUE(parseNpy(bytesOf(withHeader(ok, std::string(8, 'x'))), "ok").ok());

  expectError("PK\x03\x04 not numpy", "missing the \\x93NUMPY magic");
  expectError(std::string("\x93NUMPY\x04\x00", 8) + "xx", "version 4.0 is not supported");
  expectError(withHeader(ok, std::string(7, 'x')), "needs 8 data bytes but the file has 7");
  expectError(withHeader(ok, std::string(9, 'x')), "needs 8 data bytes but the file has 9");
  expectError(withHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }"),
              "element type '>f4' is not supported");
  expectError(withHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }"),
              "element type '<c8' is not supported");
  expectError(withHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }"),
              "Fortran-ordered");
  expectError(withHeader("{'descr': '<f4', 'shape': (2,), }"), "missing key 'fortran_order'");
  expectError(withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}"),
              "unexpected key 'x'");
  expectError(withHeader("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}"),
              "appears twice");
  expectError(withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }"),
              "expected a non-negative dimension size");
  expectError(withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }"),
              "one-dimensional shape is written '(n,)'");
  expectError(withHeader("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }"),
              "expected True or False");
  expectError(withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, "
                         "99999999999, 99999999999), }"),
              "shape (99999999999, 99999999999, 99999999999) of <f4 is too large: its size in "
              "bytes does not fit in 64 bits");
  std::string longLength = withHeader(ok);
  longLength[8] = '\xff';
  longLength[9] = '\x7f';
  expectError(longLength, "runs past the end");
}

// Every truncation and many random corruptions of valid files either parse or fail with a
// message; none crashes, hangs or reads out of bounds (run under ASan in the asan preset).
TEST(Npy, SurvivesTruncationAndCorruption) {
  std::mt19937 rng(12345);
  for (const std::string* golden : {&kNumpyFloat32x2x3, &kNumpyInt16x3, &kNumpyUInt8Scalar}) {
    for (std::size_t n = 0; n < golden->size(); ++n) {
      EXPECT_FALSE(parseNpy(bytesOf(golden->substr(0, n)), "cut").ok()) << "length " << n;
    }
    for (int trial = 0; trial < 3000; ++trial) {
      std::string mutated = *golden;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        mutated[rng() % mutated.size()] = static_cast<char>(rng());
      }
      const Result<NpyArray> r = parseNpy(bytesOf(mutated), "fuzz");
      if (!r.ok()) {
        EXPECT_FALSE(r.status().message().empty());
      } else {
        EXPECT_EQ(r->data.size(),
                  static_cast<std::size_t>(r->elementCount().value()) * npyItemSize(r->type));
      }
    }
  }
}

TEST(Npy, ReportsMissingFilesAndBadArrays) {
  const Result<NpyArray> missing = readNpy("/nonexistent/dir/a.npy");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kIoError);
  EXPECT_NE(missing.status().message().find("/nonexistent/dir/a.npy"), std::string::npos);

  NpyArray wrongSize;
  wrongSize.type = NpyType::kFloat32;
  wrongSize.shape = {3};
  wrongSize.data.resize(8);
  EXPECT_FALSE(serializeNpy(wrongSize).ok());
}

TEST(Npy, ReadNpyReadsAtMostWhatItsCallerCanUse) {
  const auto path = std::filesystem::temp_directory_path() / "trnsim_npy_bounded.npy";
  NpyArray a{NpyType::kFloat32, {4, 4}, std::vector<std::byte>(64)};
  ASSERT_TRUE(writeNpy(path.string(), a).ok());
  EXPECT_TRUE(readNpy(path.string(), 64).ok());
  EXPECT_EQ(readNpy(path.string(), 63).status().message(),
            path.string() + ": shape (4, 4) of <f4 holds 64 data bytes, more than the 63 that can "
                            "be used here");

  // A file larger than the data limit plus the largest header is not read at all.
  a.shape = {300000};
  a.data.resize(1200000);
  ASSERT_TRUE(writeNpy(path.string(), a).ok());
  EXPECT_EQ(readNpy(path.string(), 1000).status().message(),
            path.string() + ": 1200128 bytes is larger than the largest .npy file trnsim reads "
                            "(1049588 bytes)");
  std::filesystem::remove(path);

  EXPECT_EQ(readNpy("/dev/zero").status().message(),
            "/dev/zero: not a regular file; a .npy file is read from a regular file");
}

TEST(Npy, ShapesWhoseSizeWrapsAreRefused) {
  // The shape of issue 13: [2^62 + 1, 4] fp32 wraps to 16 bytes in 64-bit arithmetic.
  NpyArray wrapped{NpyType::kFloat32, {(std::int64_t{1} << 62) + 1, 4}, std::vector<std::byte>(16)};
  EXPECT_EQ(wrapped.elementCount(), std::nullopt);
  EXPECT_EQ(serializeNpy(wrapped).status().message(),
            "shape (4611686018427387905, 4) of <f4 is too large: its size in bytes does not fit "
            "in 64 bits");
  NpyArray negative{NpyType::kUInt8, {-1}, {}};
  EXPECT_EQ(negative.elementCount(), std::nullopt);
  EXPECT_EQ(serializeNpy(negative).status().message(), "negative dimension -1 in shape");
  NpyArray deep{NpyType::kUInt8, std::vector<std::int64_t>(33, 1), std::vector<std::byte>(1)};
  EXPECT_EQ(serializeNpy(deep).status().message(), "33 dimensions; a .npy array has at most 32");
  NpyArray empty{NpyType::kFloat64, {std::int64_t{1} << 40, 0}, {}};
  EXPECT_EQ(empty.elementCount(), std::optional<std::int64_t>(0));
  EXPECT_TRUE(serializeNpy(empty).ok());
}

}  // namespace
}  // namespace trn::runtime
