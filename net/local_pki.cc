#include "net/local_pki.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "net/digest.h"
#include "openssl/bio.h"
#include "openssl/bn.h"
#include "openssl/evp.h"
#include "openssl/pem.h"
#include "openssl/rand.h"
#include "openssl/x509.h"
#include "openssl/x509v3.h"

namespace taso::net {
namespace {

namespace fs = std::filesystem;

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

constexpr long kValidSeconds = 60L * 60 * 24 * 825;  // what browsers accept for a leaf; ample for a local cluster

// Writes `bytes` to `path` with `mode`, replacing it.
absl::Status WriteFile(const std::string& path, const std::string& bytes, mode_t mode) {
  unlink(path.c_str());
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  const bool ok = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  close(fd);
  return ok ? absl::OkStatus() : absl::DataLossError(absl::StrCat("writing ", path, " failed"));
}

// PEM text through a memory BIO.
template <typename Write>
std::string Pem(Write write) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!write(bio.get())) return "";
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return absl::InternalError(absl::StrCat("openssl: extension ", value));
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok ? absl::OkStatus() : absl::InternalError("openssl: adding an extension");
}

// A certificate for `key` named `cn`, signed by `issuer_key` (self-signed
// when `issuer` is null: the CA).
absl::StatusOr<Cert> MakeCert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key) {
  Cert cert(X509_new());
  if (!cert) return absl::InternalError("openssl: X509_new");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof(serial)) != 1) return absl::InternalError("openssl: no randomness");
  serial[0] &= 0x7f;  // positive
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn(BN_bin2bn(serial, sizeof(serial), nullptr), BN_free);
  BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get()));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), kValidSeconds);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                             0);
  const bool is_ca = issuer == nullptr;
  X509* signer = is_ca ? cert.get() : issuer;
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  const std::vector<std::pair<int, const char*>> extensions =
      is_ca ? std::vector<std::pair<int, const char*>>{{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                                                        {NID_key_usage, "critical,keyCertSign,cRLSign"},
                                                        {NID_subject_key_identifier, "hash"}}
            : std::vector<std::pair<int, const char*>>{{NID_basic_constraints, "critical,CA:FALSE"},
                                                        {NID_key_usage, "critical,digitalSignature"},
                                                        {NID_ext_key_usage, "serverAuth,clientAuth"},
                                                        {NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"},
                                                        {NID_authority_key_identifier, "keyid"}};
  for (const auto& [nid, value] : extensions) {
    if (absl::Status s = AddExtension(cert.get(), signer, nid, value); !s.ok()) return s;
  }
  if (X509_sign(cert.get(), is_ca ? key : issuer_key, EVP_sha256()) == 0) return absl::InternalError("openssl: signing");
  return cert;
}

absl::StatusOr<Key> MakeKey() {
  Key key(EVP_EC_gen("P-256"));
  if (!key) return absl::InternalError("openssl: making a P-256 key");
  return key;
}

std::string KeyPem(EVP_PKEY* key) {
  return Pem([&](BIO* b) { return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr) == 1; });
}
std::string CertPem(X509* cert) {
  return Pem([&](BIO* b) { return PEM_write_bio_X509(b, cert) == 1; });
}

LocalPki Paths(const std::string& dir, const std::vector<std::string>& services) {
  LocalPki pki;
  pki.dir = dir;
  pki.ca_cert = dir + "/ca.pem";
  for (const std::string& s : services) pki.servers[s] = {dir + "/" + s + ".pem", dir + "/" + s + ".key"};
  pki.tokens_file = dir + "/tokens";
  for (const std::string& role : LocalPkiRoles()) pki.token_files[role] = dir + "/" + role + ".token";
  return pki;
}

bool Complete(const LocalPki& pki) {
  std::vector<std::string> files = {pki.ca_cert, pki.dir + "/ca.key", pki.tokens_file};
  for (const auto& [name, server] : pki.servers) {
    files.push_back(server.cert);
    files.push_back(server.key);
  }
  for (const auto& [role, file] : pki.token_files) files.push_back(file);
  for (const std::string& f : files) {
    std::error_code error;
    if (!fs::is_regular_file(f, error)) return false;
  }
  return true;
}

}  // namespace

const std::vector<std::string>& LocalPkiRoles() {
  static const auto* roles = new std::vector<std::string>{"admin", "worker", "optimize", "read"};
  return *roles;
}

absl::StatusOr<LocalPki> EnsureLocalPki(const std::string& dir, const std::vector<std::string>& services) {
  LocalPki pki = Paths(dir, services);
  if (Complete(pki)) return pki;
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return absl::PermissionDeniedError(absl::StrCat("cannot create ", dir, ": ", error.message()));
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, error);
  auto ca_key = MakeKey();
  if (!ca_key.ok()) return ca_key.status();
  auto ca = MakeCert(ca_key->get(), "taso local cluster CA", nullptr, nullptr);
  if (!ca.ok()) return ca.status();
  if (auto s = WriteFile(dir + "/ca.key", KeyPem(ca_key->get()), 0600); !s.ok()) return s;
  if (auto s = WriteFile(pki.ca_cert, CertPem(ca->get()), 0644); !s.ok()) return s;
  for (const auto& [name, server] : pki.servers) {
    auto key = MakeKey();
    if (!key.ok()) return key.status();
    auto cert = MakeCert(key->get(), "taso " + name, ca->get(), ca_key->get());
    if (!cert.ok()) return cert.status();
    if (auto s = WriteFile(server.key, KeyPem(key->get()), 0600); !s.ok()) return s;
    if (auto s = WriteFile(server.cert, CertPem(cert->get()), 0644); !s.ok()) return s;
  }
  std::string tokens = "# taso up: one line per role, the SHA-256 of its token (the tokens are in ROLE.token)\n";
  for (const auto& [role, file] : pki.token_files) {
    unsigned char raw[24];
    if (RAND_bytes(raw, sizeof(raw)) != 1) return absl::InternalError("openssl: no randomness");
    const std::string token = absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(raw), sizeof(raw)));
    if (auto s = WriteFile(file, token + "\n", 0600); !s.ok()) return s;
    absl::StrAppend(&tokens, role, " ", Sha256Hex(token), "\n");
  }
  if (auto s = WriteFile(pki.tokens_file, tokens, 0600); !s.ok()) return s;
  return pki;
}

}  // namespace taso::net
