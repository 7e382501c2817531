// SHA-256 of bytes and of files: the digests users recompute with sha256sum.
#include "net/digest.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace taso::net {
namespace {

TEST(DigestTest, BytesMatchTheKnownDigest) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// A file read a block at a time digests as its bytes do, across blocks.
TEST(DigestTest, AFileDigestsAsItsBytes) {
  std::string bytes;
  for (int i = 0; i < 3 * (1 << 20) + 17; ++i) bytes.push_back(static_cast<char>(i * 7 % 251));
  const std::string path = ::testing::TempDir() + "/digest_test.bin";
  std::ofstream(path, std::ios::binary) << bytes;
  auto digest = FileSha256Hex(path);
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(*digest, Sha256Hex(bytes));
  std::ofstream(path, std::ios::binary | std::ios::trunc).flush();
  EXPECT_EQ(*FileSha256Hex(path), Sha256Hex(""));
  EXPECT_EQ(FileSha256Hex(path + ".missing").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace taso::net
