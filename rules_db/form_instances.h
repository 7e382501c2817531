// Forms that are instances of other forms of the same job: the same law with
// some variables merged (core/rule_form.h, IsInstanceOf). Finalizing a job
// collects each form's first pair and every pair's place; the pairs of an
// instance form then name the rule of a most general form it is an instance
// of (CandidatePair.renaming_of), so the store leases only that form and
// derives the rest from its proof, as it does for renamings.
#ifndef TASO_RULES_DB_FORM_INSTANCES_H_
#define TASO_RULES_DB_FORM_INSTANCES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/hash.h"

namespace taso::rules_db {

class FormInstances {
 public:
  // A form by a 128-bit hash of its renaming key.
  using FormHash = std::pair<uint64_t, uint64_t>;

  // The first pair of form `form`: its renaming key, the key read the other
  // way (records::PairCheck) and its rule id. False if a key is not one.
  bool AddForm(FormHash form, const std::string& key, const std::string& reversed_key, const std::string& rule_id);
  // A pair of form `form`, pair `index` of the class with `fingerprint`.
  void AddPair(FormHash form, const std::string& fingerprint, int index);

  // What to rewrite: class fingerprint -> (pair index, the rule id its
  // renaming_of names). Each instance form's pairs name the same rule, of a
  // form that is an instance of no other; ties go to the smaller rule id.
  // `instance_forms`, if given, receives the forms rewritten.
  std::map<std::string, std::vector<std::pair<int, std::string>>> Resolve(
      absl::flat_hash_set<FormHash>* instance_forms = nullptr);

  // A form key as kept here: its skeleton's hash and its packed pattern.
  struct Reading {
    Hash128 skeleton;
    std::string pattern;  // PackPattern
  };
  // `key`'s reading; nullopt if it is not a FormKey.
  static std::optional<Reading> ReadingOf(const std::string& key);
  // After Resolve: a form of the job that is an instance of no other and of
  // which `reading` is an instance (itself included), read either way, for
  // which `usable` holds; ties as in Resolve. For the smaller pairs a rule
  // follows from, which need not be a pair's form in the job.
  std::optional<FormHash> GeneralOf(const Reading& reading,
                                    const std::function<bool(const FormHash&)>& usable) const;

 private:
  struct FormEntry {
    Reading readings[2];  // as keyed, and the other way
    int variables = 0;
    std::string rule_id;
    FormHash hash;
    bool instance = false;  // an instance of another form (after Resolve)
  };
  struct Place {
    FormHash form;
    std::string fingerprint;
    int index;
  };
  // The rule id of the form each instance form takes its proof from; marks
  // the instance forms.
  absl::flat_hash_map<FormHash, std::string> Generals();
  // Whether `e` is a better general form than `best` (null: none yet).
  static bool Better(const FormEntry& e, const FormEntry* best);

  std::vector<FormEntry> forms_;
  absl::flat_hash_map<FormHash, int> form_index_;
  std::vector<Place> places_;
  // Every form under the skeleton of each of its readings (form, reading).
  absl::flat_hash_map<Hash128, std::vector<std::pair<int, int>>, Hash128Hasher> by_skeleton_;
};

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_FORM_INSTANCES_H_
