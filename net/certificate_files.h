// A TLS server's certificate, key and client CA as gRPC serves them: checked
// copies in a private directory, which gRPC's file watcher reads again every
// few seconds. The originals are checked again every `reload_seconds`, and a
// renewal (cert-manager rewriting its Secret's files, an operator replacing
// them) is copied in only when each file parses and the key is the
// certificate's, so new connections get a renewed certificate without a
// restart, and a half-written or wrong renewal leaves the last good one
// served (logged once until it changes).
#ifndef TASO_NET_CERTIFICATE_FILES_H_
#define TASO_NET_CERTIFICATE_FILES_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace taso::net {

// Makes a new private (0700) directory for `purpose` and returns its path.
// A binary hands in core/scratch_dir.h's MakePrivateTempDir, which also
// removes the directories of processes that no longer run: the copies hold
// the private key, and a killed server cannot remove its own.
using PrivateDirMaker = absl::StatusOr<std::string> (*)(absl::string_view purpose);

struct CertificateSources {
  std::string cert;       // --tls_cert
  std::string key;        // --tls_key
  std::string client_ca;  // --tls_client_ca; may be empty
  int reload_seconds = 60;
  // Where the copies go; null: a new mkdtemp directory under the system's
  // temporary directory, which a killed process leaves behind.
  PrivateDirMaker make_private_dir = nullptr;
};

class CertificateFiles {
 public:
  using Log = std::function<void(const std::string&)>;
  // Checks the files now (errors name the flag to fix), copies them, and
  // watches them from then on.
  static absl::StatusOr<std::unique_ptr<CertificateFiles>> Watch(const CertificateSources& sources, Log log);
  ~CertificateFiles();  // stops watching and removes the copies

  // The copies gRPC reads.
  std::string cert_path() const { return dir_ + "/tls.crt"; }
  std::string key_path() const { return dir_ + "/tls.key"; }
  std::string client_ca_path() const { return sources_.client_ca.empty() ? "" : dir_ + "/ca.crt"; }

  // Reads and checks the originals, and copies them in when they changed;
  // the error says what is wrong with them (the copies are left alone).
  absl::Status CopyIfGood();

 private:
  CertificateFiles(CertificateSources sources, std::string dir, Log log)
      : sources_(std::move(sources)), dir_(std::move(dir)), log_(std::move(log)) {}
  void WatchLoop();

  const CertificateSources sources_;
  const std::string dir_;
  const Log log_;
  std::string copied_;      // what was copied last (the three files' contents)
  std::string last_error_;  // logged once until it changes
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread watcher_;
};

}  // namespace taso::net

#endif  // TASO_NET_CERTIFICATE_FILES_H_
