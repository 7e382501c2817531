#include "app/command_flags.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"

namespace taso::app {
namespace {

std::string Underscored(absl::string_view name) { return absl::StrReplaceAll(name, {{"-", "_"}}); }

bool Takes(const CommandFlags& command, const std::string& flag) {
  return std::find(command.flags.begin(), command.flags.end(), flag) != command.flags.end();
}

// What a value of the flag looks like, for --help.
std::string ValueKind(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<bool>()) return "";
  if (flag.IsOfType<int32_t>() || flag.IsOfType<int64_t>() || flag.IsOfType<uint64_t>()) return "=N";
  if (flag.IsOfType<double>()) return "=X";
  if (flag.IsOfType<std::vector<std::string>>()) return "=A,B,..";
  return "=TEXT";
}

// What ParseFrom refused a value for not being: for messages.
std::string ValueDescription(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<bool>()) return "true or false";
  if (flag.IsOfType<uint64_t>()) return "a whole number >= 0";
  if (flag.IsOfType<int32_t>() || flag.IsOfType<int64_t>()) return "a whole number";
  if (flag.IsOfType<double>()) return "a number";
  return "a valid value";
}

// "--no-measure" and "--nomeasure" turn a boolean flag off, as absl allows.
const absl::CommandLineFlag* NegatedBool(const std::string& name, std::string& flag_name) {
  for (absl::string_view prefix : {"no_", "no"}) {
    if (name.rfind(std::string(prefix), 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(rest);
    if (flag != nullptr && flag->IsOfType<bool>()) {
      flag_name = rest;
      return flag;
    }
  }
  return nullptr;
}

}  // namespace

std::string DashedName(const std::string& flag) {
  return flag.size() == 1 ? absl::StrCat("-", flag) : absl::StrCat("--", absl::StrReplaceAll(flag, {{"_", "-"}}));
}

std::string UsageLine(const CommandFlags& command) {
  return absl::StrCat("usage: ", command.command, command.arguments.empty() ? "" : " ", command.arguments,
                      " [flags]  (", command.command, " --help lists them)");
}

ParsedCommand ParseCommandFlags(const CommandFlags& command, const std::vector<std::string>& args) {
  ParsedCommand parsed;
  auto fail = [&parsed](std::string message) {
    parsed.outcome = ParseOutcome::kError;
    parsed.error = std::move(message);
    return parsed;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg == "-h" || arg == "--help" || arg == "-help") {
      parsed.outcome = ParseOutcome::kHelp;
      return parsed;
    }
    if (arg.size() < 2 || arg[0] != '-') {  // "-" alone is an argument (stdin), as is anything else
      parsed.positional.push_back(arg);
      continue;
    }
    std::string name, value;
    bool has_value = false;
    if (arg[1] != '-') {  // -o FILE, -q, -o=FILE
      const auto letter = std::find_if(command.short_flags.begin(), command.short_flags.end(),
                                       [&](const ShortFlag& s) { return s.letter == arg[1]; });
      if (letter == command.short_flags.end() || (arg.size() > 2 && arg[2] != '=')) {
        return fail(absl::StrCat("unknown flag ", arg));
      }
      name = letter->flag;
      if (arg.size() > 2) {
        value = arg.substr(3);
        has_value = true;
      }
    } else {
      const size_t eq = arg.find('=');
      name = Underscored(arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2));
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        has_value = true;
      }
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && !has_value) {
      std::string positive;
      if (NegatedBool(name, positive) != nullptr) {
        name = positive;
        flag = absl::FindCommandLineFlag(name);
        value = "false";
        has_value = true;
      }
    }
    const std::string spelled = DashedName(name);
    if (flag == nullptr) return fail(absl::StrCat("unknown flag ", spelled));
    if (!Takes(command, name)) {
      return fail(absl::StrCat(spelled, " is not a flag of `", command.command, "`"));
    }
    if (!has_value) {
      if (flag->IsOfType<bool>()) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return fail(absl::StrCat(spelled, " needs a value"));
      }
    }
    // A list flag given again adds to the list: --input-shape a=1x3 --input-shape b=2.
    if (parsed.given.count(name) && flag->IsOfType<std::vector<std::string>>()) {
      value = absl::StrCat(flag->CurrentValue(), ",", value);
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return fail(absl::StrCat(spelled, ": '", value, "' is not ", ValueDescription(*flag)));
    }
    parsed.given.insert(name);
  }
  return parsed;
}

std::string CommandHelp(const CommandFlags& command) {
  std::string text = absl::StrCat("usage: ", command.command, command.arguments.empty() ? "" : " ",
                                  command.arguments, " [flags]\n\n", command.summary, "\n");
  if (command.flags.empty()) return text;
  absl::StrAppend(&text, "\nflags:\n");
  std::vector<std::string> names = command.flags;
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;
    std::string spelled = DashedName(name);
    for (const ShortFlag& s : command.short_flags) {
      if (s.flag == name && name.size() > 1) spelled = absl::StrCat("-", std::string(1, s.letter), ", ", spelled);
    }
    const std::string fallback = flag->DefaultValue();
    absl::StrAppend(&text, "  ", spelled, ValueKind(*flag),
                    fallback.empty() ? "" : absl::StrCat("  (default: ", fallback, ")"), "\n      ", flag->Help(),
                    "\n");
  }
  return text;
}

}  // namespace taso::app
