#include "net/certificate_files.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "net/local_pki.h"
#include "net/test_files.h"

namespace taso::net {
namespace {

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A renewal is copied in only when whole and matching; anything else leaves
// the last good certificate where gRPC reads it, with an error saying why.
TEST(CertificateFilesTest, CopiesARenewalOnlyWhenTheKeyIsTheCertificates) {
  auto pki = EnsureLocalPki(TestPath("pki"), {"first", "second"});
  ASSERT_TRUE(pki.ok()) << pki.status();
  const LocalPki::Server& first = pki->servers.at("first");
  const LocalPki::Server& second = pki->servers.at("second");
  const std::string live = TestPath("live");
  std::filesystem::create_directories(live);
  Write(live + "/tls.crt", ReadText(first.cert));
  Write(live + "/tls.key", ReadText(first.key));

  std::vector<std::string> log;
  auto files = CertificateFiles::Watch({live + "/tls.crt", live + "/tls.key", pki->ca_cert, 1},
                                       [&](const std::string& line) { log.push_back(line); });
  ASSERT_TRUE(files.ok()) << files.status();
  const std::string copies = std::filesystem::path((*files)->cert_path()).parent_path();
  EXPECT_EQ(ReadText((*files)->cert_path()), ReadText(first.cert));
  EXPECT_EQ(ReadText((*files)->key_path()), ReadText(first.key));
  EXPECT_EQ(ReadText((*files)->client_ca_path()), ReadText(pki->ca_cert));
  EXPECT_EQ(std::filesystem::status(copies).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);

  Write(live + "/tls.crt", ReadText(second.cert));  // half a renewal: the new certificate, the old key
  absl::Status half = (*files)->CopyIfGood();
  EXPECT_EQ(half.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(half.message().find("is not the key of --tls_cert"), std::string::npos) << half;
  EXPECT_EQ(ReadText((*files)->cert_path()), ReadText(first.cert));

  Write(live + "/tls.crt", "not a certificate\n");
  absl::Status garbage = (*files)->CopyIfGood();
  EXPECT_NE(garbage.message().find("holds no PEM certificate"), std::string::npos) << garbage;
  EXPECT_EQ(ReadText((*files)->cert_path()), ReadText(first.cert));

  Write(live + "/tls.crt", ReadText(second.cert));
  Write(live + "/tls.key", ReadText(second.key));
  ASSERT_TRUE((*files)->CopyIfGood().ok());
  EXPECT_EQ(ReadText((*files)->cert_path()), ReadText(second.cert));
  EXPECT_EQ(ReadText((*files)->key_path()), ReadText(second.key));

  files->reset();
  EXPECT_FALSE(std::filesystem::exists(copies)) << "the copies outlived the server";

  auto missing = CertificateFiles::Watch({live + "/none.crt", live + "/tls.key", "", 1}, nullptr);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("--tls_cert"), std::string::npos);
}

// Stands in for core/scratch_dir.h's MakePrivateTempDir (net does not see core).
absl::StatusOr<std::string> MakeDirForTest(absl::string_view purpose) {
  const std::string dir = TestPath(absl::StrCat("made-", purpose));
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  return dir;
}

absl::StatusOr<std::string> CannotMakeDir(absl::string_view) {
  return absl::PermissionDeniedError("TMPDIR is not writable");
}

TEST(CertificateFilesTest, CopiesGoWhereTheBinarysDirectoryMakerSays) {
  auto pki = EnsureLocalPki(TestPath("pki-made"), {"only"});
  ASSERT_TRUE(pki.ok()) << pki.status();
  const LocalPki::Server& only = pki->servers.at("only");
  CertificateSources sources{only.cert, only.key, "", 1, &MakeDirForTest};
  auto files = CertificateFiles::Watch(sources, nullptr);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ((*files)->key_path(), TestPath("made-tls") + "/tls.key");
  EXPECT_EQ(ReadText((*files)->key_path()), ReadText(only.key));
  files->reset();
  EXPECT_FALSE(std::filesystem::exists(TestPath("made-tls"))) << "the copies outlived the server";

  sources.make_private_dir = &CannotMakeDir;
  auto refused = CertificateFiles::Watch(sources, nullptr);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied) << refused.status();
}

}  // namespace
}  // namespace taso::net
