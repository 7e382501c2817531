#include "optimizer/eqsat/egraph_json.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/file_write.h"
#include "nlohmann/json.hpp"

namespace taso::optimizer {
namespace {

using Json = nlohmann::ordered_json;

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("not an egraph-serialize e-graph: ", what));
}

// Ids are strings in egraph-serialize; some writers use numbers.
bool IdText(const Json& value, std::string& out) {
  if (value.is_string()) {
    out = value.get<std::string>();
    return true;
  }
  if (value.is_number_integer() || value.is_number_unsigned()) {
    out = value.dump();
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<SerializedEGraph> ParseEGraphJson(std::string_view text, const EGraphJsonLimits& limits) {
  if (static_cast<int64_t>(text.size()) > limits.max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the e-graph file has ", text.size(), " bytes, above the limit of ", limits.max_bytes));
  }
  const Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad("the file is not valid JSON");
  if (!j.is_object()) return Bad("the top level is not an object");
  auto nodes_it = j.find("nodes");
  if (nodes_it == j.end() || !nodes_it->is_object()) return Bad("no \"nodes\" object");
  const Json& nodes = *nodes_it;
  if (static_cast<int64_t>(nodes.size()) > limits.max_nodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the e-graph has ", nodes.size(), " e-nodes, above the limit of ", limits.max_nodes));
  }

  SerializedEGraph out;
  ExtractionProblem& p = out.problem;
  std::unordered_map<std::string, int> class_index;
  std::unordered_map<std::string, int> node_class;  // every e-node in the file, subsumed ones too
  node_class.reserve(nodes.size());
  // First pass: classes and the class of every named e-node.
  for (auto it = nodes.begin(); it != nodes.end(); ++it) {
    const Json& node = it.value();
    const std::string where = absl::StrCat("e-node \"", it.key(), "\"");
    if (!node.is_object()) return Bad(absl::StrCat(where, " is not an object"));
    std::string eclass;
    auto e = node.find("eclass");
    if (e == node.end() || !IdText(*e, eclass)) return Bad(absl::StrCat(where, " has no \"eclass\" string"));
    auto [c, added] = class_index.emplace(eclass, static_cast<int>(p.class_id.size()));
    if (added) {
      p.class_id.push_back(c->second);
      out.class_name.push_back(eclass);
    }
    node_class[it.key()] = c->second;
  }
  p.class_nodes.resize(p.class_id.size());
  p.class_label.assign(p.class_id.size(), "");
  // Second pass: the e-nodes that may be chosen.
  std::vector<int> children;
  for (auto it = nodes.begin(); it != nodes.end(); ++it) {
    const Json& node = it.value();
    const std::string where = absl::StrCat("e-node \"", it.key(), "\"");
    auto subsumed = node.find("subsumed");
    if (subsumed != node.end()) {
      if (!subsumed->is_boolean()) return Bad(absl::StrCat(where, ": \"subsumed\" is not true or false"));
      if (subsumed->get<bool>()) {
        ++out.subsumed;
        continue;
      }
    }
    auto op = node.find("op");
    if (op == node.end() || !op->is_string()) return Bad(absl::StrCat(where, " has no \"op\" string"));
    auto cost = node.find("cost");
    if (cost == node.end() || !cost->is_number()) return Bad(absl::StrCat(where, " has no \"cost\" number"));
    const double ms = cost->get<double>();
    if (!(ms >= 0) || !std::isfinite(ms)) {
      return Bad(absl::StrCat(where, " costs ", cost->dump(), ": extraction needs finite costs >= 0"));
    }
    auto kids = node.find("children");
    if (kids == node.end() || !kids->is_array()) return Bad(absl::StrCat(where, " has no \"children\" array"));
    children.clear();
    for (const Json& child : *kids) {
      std::string name;
      if (!IdText(child, name)) return Bad(absl::StrCat(where, " has a child that is not an e-node id"));
      auto found = node_class.find(name);
      if (found == node_class.end()) return Bad(absl::StrCat(where, " reads \"", name, "\", which is no e-node"));
      children.push_back(found->second);
    }
    std::vector<int> distinct = children;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    std::vector<int> uses(distinct.size(), 0);
    for (int d : children) ++uses[std::lower_bound(distinct.begin(), distinct.end(), d) - distinct.begin()];
    const int n = static_cast<int>(p.node_id.size());
    const int c = node_class.at(it.key());
    p.node_id.push_back(n);
    p.node_class.push_back(c);
    p.node_cost.push_back(ms);
    p.node_children.push_back(std::move(distinct));
    p.node_label.push_back(op->get<std::string>());
    p.class_nodes[c].push_back(n);
    out.node_name.push_back(it.key());
    out.child_uses.push_back(std::move(uses));
  }
  auto roots = j.find("root_eclasses");
  if (roots == j.end() || !roots->is_array()) return Bad("no \"root_eclasses\" array");
  if (roots->empty()) return Bad("\"root_eclasses\" is empty: nothing to extract");
  for (const Json& root : *roots) {
    std::string name;
    if (!IdText(root, name)) return Bad("a root is not an e-class id");
    auto found = class_index.find(name);
    if (found == class_index.end()) return Bad(absl::StrCat("root \"", name, "\" is no e-node's class"));
    p.roots.push_back(found->second);
  }
  if (auto data = j.find("class_data"); data != j.end() && data->is_object()) {
    for (auto it = data->begin(); it != data->end(); ++it) {
      auto c = class_index.find(it.key());
      if (c == class_index.end() || !it.value().is_object()) continue;
      if (auto type = it.value().find("type"); type != it.value().end() && type->is_string()) {
        p.class_label[c->second] = type->get<std::string>();
      }
    }
  }
  return out;
}

absl::StatusOr<SerializedEGraph> ReadEGraphJson(const std::string& path, const EGraphJsonLimits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size > limits.max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, " has ", size, " bytes, above the limit of ", limits.max_bytes));
  }
  in.seekg(0);
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = ParseEGraphJson(text.str(), limits);
  if (!parsed.ok()) return absl::Status(parsed.status().code(), absl::StrCat(path, ": ", parsed.status().message()));
  return parsed;
}

absl::StatusOr<std::string> EGraphJson(const ExtractionProblem& p) {
  const int classes = static_cast<int>(p.class_id.size());
  const int nodes = static_cast<int>(p.node_id.size());
  // E-nodes whose operands all have a writable e-node, to a fixpoint.
  std::vector<bool> writable(nodes, true);
  std::vector<int> first(classes, -1);
  for (bool changed = true; changed;) {
    changed = false;
    std::fill(first.begin(), first.end(), -1);
    for (int n = 0; n < nodes; ++n) {
      if (writable[n] && first[p.node_class[n]] < 0) first[p.node_class[n]] = n;
    }
    for (int n = 0; n < nodes; ++n) {
      if (!writable[n]) continue;
      for (int d : p.node_children[n]) {
        if (first[d] < 0) {
          writable[n] = false;
          changed = true;
          break;
        }
      }
    }
  }
  for (int r : p.roots) {
    if (first[r] < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("output class ", p.class_id[r], " has no e-node of known cost to write"));
    }
  }
  Json j;
  Json& out_nodes = j["nodes"] = Json::object();
  for (int n = 0; n < nodes; ++n) {
    if (!writable[n]) continue;
    Json node;
    node["op"] = n < static_cast<int>(p.node_label.size()) && !p.node_label[n].empty() ? p.node_label[n]
                                                                                       : absl::StrCat("node", n);
    Json kids = Json::array();
    for (int d : p.node_children[n]) kids.push_back(std::to_string(p.node_id[first[d]]));
    node["children"] = std::move(kids);
    node["eclass"] = std::to_string(p.class_id[p.node_class[n]]);
    node["cost"] = p.node_cost[n];
    out_nodes[std::to_string(p.node_id[n])] = std::move(node);
  }
  Json roots = Json::array();
  for (int r : p.roots) roots.push_back(std::to_string(p.class_id[r]));
  j["root_eclasses"] = std::move(roots);
  Json data = Json::object();
  for (int c = 0; c < classes; ++c) {
    if (first[c] < 0) continue;
    Json entry = Json::object();
    if (c < static_cast<int>(p.class_label.size()) && !p.class_label[c].empty()) entry["type"] = p.class_label[c];
    data[std::to_string(p.class_id[c])] = std::move(entry);
  }
  j["class_data"] = std::move(data);
  // Labels come from our code or from a file already parsed as JSON; replace
  // rather than throw should one not be UTF-8.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

absl::Status WriteEGraphJson(const ExtractionProblem& problem, const std::string& path) {
  auto text = EGraphJson(problem);
  if (!text.ok()) return text.status();
  return WriteFileAtomically(path, *text);
}

}  // namespace taso::optimizer
