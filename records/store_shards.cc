#include "records/store_shards.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "net/credentials.h"
#include "proto/rules_db.grpc.pb.h"

namespace taso::records {

int StoreShardFor(const std::string& fingerprint_bytes, int num_stores) {
  uint64_t top = 0;
  for (int i = 0; i < 8 && i < static_cast<int>(fingerprint_bytes.size()); ++i) {
    top = (top << 8) | static_cast<unsigned char>(fingerprint_bytes[i]);
  }
  return static_cast<int>(top % static_cast<uint64_t>(num_stores));
}

absl::Status CheckBatchRouting(const rules_db::StoreInfo& self, int batch_index, int batch_count) {
  if (batch_count == 0) {
    if (self.store_count() == 1) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "the batch carries no store routing, but this is store ", self.store_index(), " of ", self.store_count(),
        ": update the generator, which must order its --store list by each store's index"));
  }
  if (batch_index == self.store_index() && batch_count == self.store_count()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the batch was routed for store ", batch_index, " of ", batch_count, ", but this is store ",
      self.store_index(), " of ", self.store_count(),
      ": the sender ordered its store list differently; list every store of the job (any order) so the "
      "client can order them by index"));
}

absl::StatusOr<std::vector<std::string>> OrderStores(const std::vector<std::string>& addresses,
                                                     const std::vector<rules_db::StoreInfo>& infos) {
  if (addresses.empty()) return absl::InvalidArgumentError("no store address given");
  const int count = infos[0].store_count();
  std::vector<std::string> ordered(addresses.size());
  for (size_t i = 0; i < addresses.size(); ++i) {
    const rules_db::StoreInfo& info = infos[i];
    if (info.store_count() != count) {
      return absl::FailedPreconditionError(absl::StrCat("store ", addresses[0], " is one of ", count, " stores but ",
                                                        addresses[i], " is one of ", info.store_count()));
    }
    if (info.store_count() != static_cast<int>(addresses.size())) {
      return absl::FailedPreconditionError(absl::StrCat("the stores are ", count, " shards, but ", addresses.size(),
                                                        " were listed (", absl::StrJoin(addresses, ","),
                                                        "): list every store"));
    }
    if (info.store_index() < 0 || info.store_index() >= count) {
      return absl::FailedPreconditionError(
          absl::StrCat("store ", addresses[i], " reports index ", info.store_index(), " of ", count));
    }
    std::string& slot = ordered[info.store_index()];
    if (!slot.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("stores ", slot, " and ", addresses[i], " both are store ",
                                                        info.store_index(), " of ", count));
    }
    slot = addresses[i];
  }
  return ordered;
}

std::vector<std::string> SplitStoreList(const std::string& list) {
  std::vector<std::string> out;
  for (absl::string_view a : absl::StrSplit(list, ',', absl::SkipEmpty())) out.emplace_back(a);
  return out;
}

absl::StatusOr<std::vector<StoreShard>> ConnectStoreShards(const std::vector<std::string>& addresses,
                                                           const grpc::ChannelArguments& args,
                                                           absl::Duration deadline) {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<rules_db::StoreInfo> infos;
  for (const std::string& address : addresses) {
    auto channel = taso::net::NewChannel(address, args);
    auto stub = rules_db::HashStore::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(deadline));
    rules_db::StoreInfo info;
    grpc::Status s = stub->GetStoreInfo(&context, rules_db::GetStoreInfoRequest(), &info);
    if (!s.ok()) {
      if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
        return absl::FailedPreconditionError(
            absl::StrCat("store ", address, ": ", s.error_message(), " (a store too old to know its index)"));
      }
      return absl::UnavailableError(absl::StrCat("store ", address, " is unreachable: ", s.error_message()));
    }
    channels.push_back(channel);
    infos.push_back(info);
  }
  auto ordered = OrderStores(addresses, infos);
  if (!ordered.ok()) return ordered.status();
  std::vector<StoreShard> shards(addresses.size());
  for (size_t i = 0; i < addresses.size(); ++i) {
    shards[infos[i].store_index()] = StoreShard{addresses[i], channels[i]};
  }
  return shards;
}

}  // namespace taso::records
