// How many of a job's proofs were of an exact renaming of another rule: reads
// the job's proved and pruned rules, as exported by
//   taso rules export --status proved,pruned --format proto -o FILE --db DIR
// and groups them by verifier::RuleRenamingKey (both sides' skeleton and
// variable pattern, read in either direction: rules with one key are one
// Z3 query up to the names of its variables). Prints the rules, the keys, and
// the rules in groups of each size; rules - keys is what proving once per
// renaming class would save.
// Then the forms that are an instance of another form in the file (its
// variables merged, core/rule_form.h IsInstanceOf, read either way): proving
// the general form would prove them too. Export every status
// (--status proved,pruned,unknown,timeout,refuted) to count these right.
//   bazel run -c opt //bench:renaming_classes -- --rules FILE
#include <iostream>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "core/rule_form.h"
#include "optimizer/rule_source.h"
#include "proto/rules.pb.h"
#include "verifier/pruning.h"

namespace {

bool Proved(taso::rules::RuleStatus s) {
  return s == taso::rules::RULE_STATUS_PROVED || s == taso::rules::RULE_STATUS_PRUNED;
}

// One form: its first rule's form read in the direction its key is written
// in, and whether that rule is proved.
struct FormEntry {
  taso::Form form;
  bool proved;
};

// Forms that are an instance of another (more general) form, by whether the
// general one and the instance are proved.
void CountInstances(const taso::rules::RuleCollection& collection) {
  std::map<std::string, FormEntry> forms;  // renaming key -> form
  std::unordered_map<std::string, std::vector<const FormEntry*>> by_skeleton;
  std::vector<std::pair<const FormEntry*, taso::Form>> reversed;  // each form read the other way
  for (const taso::rules::Rule& rule : collection.rules()) {
    auto d = taso::DecodeRule(rule);
    if (!d) continue;
    taso::Form forward = taso::MakeForm(d->View());
    taso::Form backward = taso::MakeForm(d->View().Reversed());
    const bool keyed_forward = taso::FormKey(forward) <= taso::FormKey(backward);
    const std::string key = taso::FormKey(keyed_forward ? forward : backward);
    if (forms.count(key) > 0) continue;
    auto it = forms.emplace(key, FormEntry{keyed_forward ? forward : backward, Proved(rule.status())}).first;
    by_skeleton[it->second.form.skeleton].push_back(&it->second);
    reversed.emplace_back(&it->second, keyed_forward ? std::move(backward) : std::move(forward));
  }
  // general proved, instance proved -> forms
  std::map<std::pair<bool, bool>, int64_t> instances;
  for (const auto& [entry, other_way] : reversed) {
    const FormEntry* general = nullptr;
    for (const taso::Form* mine : {&entry->form, &other_way}) {
      auto it = by_skeleton.find(mine->skeleton);
      if (it == by_skeleton.end()) continue;
      for (const FormEntry* candidate : it->second) {
        if (candidate == entry || !taso::IsInstanceOf(*mine, candidate->form)) continue;
        // A proved general form if there is one.
        if (general == nullptr || (!general->proved && candidate->proved)) general = candidate;
      }
    }
    if (general != nullptr) ++instances[{general->proved, entry->proved}];
  }
  int64_t total = 0;
  for (const auto& [k, n] : instances) total += n;
  std::cout << "forms: " << forms.size() << "\n"
            << "forms that are an instance of another form: " << total << "\n";
  for (const auto& [k, n] : instances) {
    std::cout << "  general " << (k.first ? "proved" : "not proved") << ", instance "
              << (k.second ? "proved" : "not proved") << ": " << n << "\n";
  }
}

}  // namespace

ABSL_FLAG(std::string, rules, "", "a RuleCollection file (taso rules export --format proto, or .json)");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string path = absl::GetFlag(FLAGS_rules);
  if (path.empty()) {
    std::cerr << "--rules FILE: a rule file to read (taso rules export --format proto -o FILE)\n";
    return 2;
  }
  absl::StatusOr<taso::rules::RuleCollection> read = taso::optimizer::ReadRulesFile(path);
  if (!read.ok()) {
    std::cerr << read.status().message() << "\n";
    return 1;
  }
  const taso::rules::RuleCollection& collection = *read;
  std::map<std::string, int> rules_by_key;
  int undecodable = 0;
  for (const taso::rules::Rule& rule : collection.rules()) {
    const std::string key = taso::verifier::RuleRenamingKey(rule);
    if (key.empty()) {
      ++undecodable;
      continue;
    }
    ++rules_by_key[key];
  }
  std::map<int, int> groups_by_size;
  for (const auto& [key, n] : rules_by_key) ++groups_by_size[n];
  const int rules = collection.rules_size() - undecodable;
  std::cout << "rules: " << rules << " (" << undecodable << " undecodable, left out)\n"
            << "renaming classes (distinct keys): " << rules_by_key.size() << "\n"
            << "proofs of an exact renaming of another rule: " << rules - static_cast<int>(rules_by_key.size())
            << "\n"
            << "class size: classes, rules\n";
  for (const auto& [size, classes] : groups_by_size) {
    std::cout << "  " << size << ": " << classes << ", " << static_cast<int64_t>(size) * classes << "\n";
  }
  CountInstances(collection);
  return 0;
}
