#include "net/certificate_files.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "net/tokens.h"

namespace taso::net {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

std::unique_ptr<BIO, BioFree> MemoryBio(const std::string& pem) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::unique_ptr<X509, X509Free> FirstCertificate(const std::string& pem) {
  auto bio = MemoryBio(pem);
  return std::unique_ptr<X509, X509Free>(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

// `content` written to `path` whole or not at all, readable by this user only.
absl::Status WriteAtomically(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".new";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot write ", temporary));
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n <= 0) {
      ::close(fd);
      return absl::InternalError(absl::StrCat("cannot write ", temporary));
    }
    written += static_cast<size_t>(n);
  }
  ::close(fd);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) return absl::InternalError(absl::StrCat("cannot rename ", temporary));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CertificateFiles>> CertificateFiles::Watch(const CertificateSources& sources, Log log) {
  if (sources.reload_seconds < 1) return absl::InvalidArgumentError("--tls_reload_s must be at least 1");
  std::string dir;
  if (sources.make_private_dir != nullptr) {
    absl::StatusOr<std::string> made = sources.make_private_dir("tls");
    if (!made.ok()) return made.status();
    dir = *std::move(made);
  } else {
    dir = (std::filesystem::temp_directory_path() / "taso-tls-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) return absl::InternalError("cannot make a private directory for the TLS files");
  }
  std::unique_ptr<CertificateFiles> files(new CertificateFiles(sources, dir, std::move(log)));
  if (absl::Status s = files->CopyIfGood(); !s.ok()) return s;  // the destructor removes the directory
  files->watcher_ = std::thread([f = files.get()] { f->WatchLoop(); });
  return files;
}

CertificateFiles::~CertificateFiles() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

absl::Status CertificateFiles::CopyIfGood() {
  absl::StatusOr<std::string> cert = ReadSecretFile(sources_.cert, "--tls_cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadSecretFile(sources_.key, "--tls_key");
  if (!key.ok()) return key.status();
  std::string ca;
  if (!sources_.client_ca.empty()) {
    absl::StatusOr<std::string> read = ReadSecretFile(sources_.client_ca, "--tls_client_ca");
    if (!read.ok()) return read.status();
    ca = *std::move(read);
  }
  const std::string contents = absl::StrCat(*cert, "\n--\n", *key, "\n--\n", ca);
  if (contents == copied_) return absl::OkStatus();
  auto certificate = FirstCertificate(*cert);
  if (!certificate) {
    return absl::InvalidArgumentError(absl::StrCat("--tls_cert ", sources_.cert, " holds no PEM certificate"));
  }
  auto bio = MemoryBio(*key);
  std::unique_ptr<EVP_PKEY, KeyFree> private_key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!private_key) {
    return absl::InvalidArgumentError(absl::StrCat("--tls_key ", sources_.key, " holds no PEM private key"));
  }
  if (X509_check_private_key(certificate.get(), private_key.get()) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("--tls_key ", sources_.key, " is not the key of --tls_cert ",
                                                   sources_.cert));
  }
  if (!sources_.client_ca.empty() && !FirstCertificate(ca)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_client_ca ", sources_.client_ca, " holds no PEM certificate"));
  }
  // The key first: gRPC's watcher re-reads both when either changes.
  for (const auto& [path, content] :
       {std::pair<std::string, const std::string*>{key_path(), &*key}, {cert_path(), &*cert}}) {
    if (absl::Status s = WriteAtomically(path, *content); !s.ok()) return s;
  }
  if (!sources_.client_ca.empty()) {
    if (absl::Status s = WriteAtomically(client_ca_path(), ca); !s.ok()) return s;
  }
  copied_ = contents;
  return absl::OkStatus();
}

void CertificateFiles::WatchLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, std::chrono::seconds(sources_.reload_seconds), [this] { return stop_; })) {
    const std::string before = copied_;
    absl::Status s = CopyIfGood();
    if (!s.ok()) {
      const std::string message = absl::StrCat("warning: keeping the certificate in use: ", s.message());
      if (message != last_error_ && log_) log_(message);
      last_error_ = message;
      continue;
    }
    last_error_.clear();
    if (copied_ != before && log_) log_(absl::StrCat("serving the renewed certificate ", sources_.cert));
  }
}

}  // namespace taso::net
