#include "rules_db/form_instances.h"

#include <algorithm>
#include <set>

#include "core/rule_form.h"

namespace taso::rules_db {
namespace {

Hash128 SkeletonHash(const std::string& skeleton) {
  Hasher h(0x736b656cULL);  // "skel"
  h.AddString(skeleton);
  return h.Finish();
}

}  // namespace

std::optional<FormInstances::Reading> FormInstances::ReadingOf(const std::string& key) {
  std::string skeleton;
  std::vector<int> pattern;
  if (!SplitFormKey(key, &skeleton, &pattern)) return std::nullopt;
  return Reading{SkeletonHash(skeleton), PackPattern(pattern)};
}

bool FormInstances::AddForm(FormHash form, const std::string& key, const std::string& reversed_key,
                            const std::string& rule_id) {
  FormEntry entry;
  int i = 0;
  for (const std::string* k : {&key, &reversed_key}) {
    auto reading = ReadingOf(*k);
    if (!reading) return false;
    entry.readings[i] = *std::move(reading);
    ++i;
  }
  // Variables are numbered from 0 (packed a byte each): the largest is the count - 1.
  for (char v : entry.readings[0].pattern) {
    entry.variables = std::max(entry.variables, static_cast<unsigned char>(v) + 1);
  }
  entry.rule_id = rule_id;
  entry.hash = form;
  if (form_index_.emplace(form, static_cast<int>(forms_.size())).second) forms_.push_back(std::move(entry));
  return true;
}

void FormInstances::AddPair(FormHash form, const std::string& fingerprint, int index) {
  places_.push_back(Place{form, fingerprint, index});
}

bool FormInstances::Better(const FormEntry& e, const FormEntry* best) {
  return best == nullptr || e.variables > best->variables ||
         (e.variables == best->variables && e.rule_id < best->rule_id);
}

absl::flat_hash_map<FormInstances::FormHash, std::string> FormInstances::Generals() {
  by_skeleton_.clear();
  for (size_t f = 0; f < forms_.size(); ++f) {
    for (int r = 0; r < 2; ++r) by_skeleton_[forms_[f].readings[r].skeleton].emplace_back(static_cast<int>(f), r);
  }
  // The forms each form is an instance of, read as it is keyed (reading one
  // general form both ways covers the instance read either way).
  std::vector<std::vector<int>> generals(forms_.size());
  for (size_t g = 0; g < forms_.size(); ++g) {
    const Reading& mine = forms_[g].readings[0];
    if (forms_[g].variables >= static_cast<int>(mine.pattern.size())) continue;  // no variable to split
    auto it = by_skeleton_.find(mine.skeleton);
    if (it == by_skeleton_.end()) continue;
    std::set<int> found;
    for (const auto& [f, r] : it->second) {
      if (f == static_cast<int>(g)) continue;
      if (PatternIsInstanceOf(mine.pattern, forms_[f].readings[r].pattern)) found.insert(f);
    }
    generals[g].assign(found.begin(), found.end());
  }
  absl::flat_hash_map<FormHash, std::string> out;
  for (const auto& [hash, g] : form_index_) {
    const FormEntry* best = nullptr;
    for (int f : generals[g]) {
      if (!generals[f].empty()) continue;  // itself an instance: not leased
      if (Better(forms_[f], best)) best = &forms_[f];
    }
    if (best != nullptr) out[hash] = best->rule_id;
  }
  for (size_t g = 0; g < forms_.size(); ++g) forms_[g].instance = !generals[g].empty();
  return out;
}

std::optional<FormInstances::FormHash> FormInstances::GeneralOf(
    const Reading& reading, const std::function<bool(const FormHash&)>& usable) const {
  auto it = by_skeleton_.find(reading.skeleton);
  if (it == by_skeleton_.end()) return std::nullopt;
  const FormEntry* best = nullptr;
  for (const auto& [f, r] : it->second) {
    const FormEntry& e = forms_[static_cast<size_t>(f)];
    if (e.instance || !PatternIsInstanceOf(reading.pattern, e.readings[r].pattern)) continue;
    if (Better(e, best) && usable(e.hash)) best = &e;
  }
  if (best == nullptr) return std::nullopt;
  return best->hash;
}

std::map<std::string, std::vector<std::pair<int, std::string>>> FormInstances::Resolve(
    absl::flat_hash_set<FormHash>* instance_forms) {
  const auto generals = Generals();
  if (instance_forms != nullptr) {
    for (const auto& [form, general] : generals) instance_forms->insert(form);
  }
  std::map<std::string, std::vector<std::pair<int, std::string>>> rewrites;
  if (generals.empty()) return rewrites;
  for (const Place& p : places_) {
    auto it = generals.find(p.form);
    if (it != generals.end()) rewrites[p.fingerprint].emplace_back(p.index, it->second);
  }
  return rewrites;
}

}  // namespace taso::rules_db
