#include "net/certificate_files.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "gtest/gtest.h"
#include "net/local_pki.h"

namespace taso::net {
namespace {

std::string Dir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A renewal is copied in only when whole and matching; anything else leaves
// the last good certificate where gRPC reads it, with an error saying why.
TEST(CertificateFilesTest, CopiesARenewalOnlyWhenTheKeyIsTheCertificates) {
  auto pki = EnsureLocalPki(Dir("pki"), {"first", "second"});
  ASSERT_TRUE(pki.ok()) << pki.status();
  const LocalPki::Server& first = pki->servers.at("first");
  const LocalPki::Server& second = pki->servers.at("second");
  const std::string live = Dir("live");
  std::filesystem::create_directories(live);
  Write(live + "/tls.crt", Read(first.cert));
  Write(live + "/tls.key", Read(first.key));

  std::vector<std::string> log;
  auto files = CertificateFiles::Watch({live + "/tls.crt", live + "/tls.key", pki->ca_cert, 1},
                                       [&](const std::string& line) { log.push_back(line); });
  ASSERT_TRUE(files.ok()) << files.status();
  const std::string copies = std::filesystem::path((*files)->cert_path()).parent_path();
  EXPECT_EQ(Read((*files)->cert_path()), Read(first.cert));
  EXPECT_EQ(Read((*files)->key_path()), Read(first.key));
  EXPECT_EQ(Read((*files)->client_ca_path()), Read(pki->ca_cert));
  EXPECT_EQ(std::filesystem::status(copies).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);

  Write(live + "/tls.crt", Read(second.cert));  // half a renewal: the new certificate, the old key
  absl::Status half = (*files)->CopyIfGood();
  EXPECT_EQ(half.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(half.message().find("is not the key of --tls_cert"), std::string::npos) << half;
  EXPECT_EQ(Read((*files)->cert_path()), Read(first.cert));

  Write(live + "/tls.crt", "not a certificate\n");
  absl::Status garbage = (*files)->CopyIfGood();
  EXPECT_NE(garbage.message().find("holds no PEM certificate"), std::string::npos) << garbage;
  EXPECT_EQ(Read((*files)->cert_path()), Read(first.cert));

  Write(live + "/tls.crt", Read(second.cert));
  Write(live + "/tls.key", Read(second.key));
  ASSERT_TRUE((*files)->CopyIfGood().ok());
  EXPECT_EQ(Read((*files)->cert_path()), Read(second.cert));
  EXPECT_EQ(Read((*files)->key_path()), Read(second.key));

  files->reset();
  EXPECT_FALSE(std::filesystem::exists(copies)) << "the copies outlived the server";

  auto missing = CertificateFiles::Watch({live + "/none.crt", live + "/tls.key", "", 1}, nullptr);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("--tls_cert"), std::string::npos);
}

}  // namespace
}  // namespace taso::net
