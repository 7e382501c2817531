#include "net/certificate_files.h"

#include <filesystem>
#include <fstream>
#include <vector>

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

}  // namespace
}  // namespace taso::net
