// How many of a job's proofs were of an exact renaming of another rule: reads
// the job's proved and pruned rules, as exported by
//   taso rules export --status proved,pruned --format proto -o FILE --db DIR
// and groups them by verifier::RuleRenamingKey (both sides' skeleton and
// variable pattern, read in either direction: rules with one key are one
// Z3 query up to the names of its variables). Prints the rules, the keys, and
// the rules in groups of each size; rules - keys is what proving once per
// renaming class would save.
//   bazel run -c opt //bench:renaming_classes -- --rules FILE
#include <iostream>
#include <map>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "optimizer/rule_source.h"
#include "proto/rules.pb.h"
#include "verifier/pruning.h"

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
  return 0;
}
