#include "apps/cli/args.h"

#include "apps/cli/version.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace starcnn {
namespace {

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

template <typename T, typename Parse>
std::function<void(const std::string &)> ranged(const std::string &name, T *target, T min, T max,
                                                Parse parse) {
  return [=](const std::string &text) {
    size_t used = 0;
    T value{};
    try {
      value = parse(text, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (text.empty() || used != text.size())
      throw UsageError("--" + name + " needs a number, got '" + text + "'");
    if (!(value >= min && value <= max))
      throw UsageError("--" + name + " must be between " + format_number(double(min)) + " and " +
                       format_number(double(max)) + ", got " + text);
    *target = value;
  };
}

}  // namespace

ArgParser::ArgParser(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void ArgParser::add(const std::string &name, const std::string &metavar, const std::string &help,
                    std::string *target) {
  options_.push_back(
      {name, metavar, help, *target, [target](const std::string &v) { *target = v; }});
}

void ArgParser::add(const std::string &name, const std::string &metavar, const std::string &help,
                    long *target, long min, long max) {
  options_.push_back({name, metavar, help, std::to_string(*target),
                      ranged<long>(name, target, min, max, [](const std::string &t, size_t *u) {
                        return std::stol(t, u);
                      })});
}

void ArgParser::add(const std::string &name, const std::string &metavar, const std::string &help,
                    double *target, double min, double max) {
  options_.push_back({name, metavar, help, format_number(*target),
                      ranged<double>(name, target, min, max, [](const std::string &t, size_t *u) {
                        return std::stod(t, u);
                      })});
}

void ArgParser::add_choice(const std::string &name, const std::vector<std::string> &choices,
                           const std::string &help, std::string *target) {
  std::string metavar, listed;
  for (size_t i = 0; i < choices.size(); ++i) {
    metavar += (i ? "|" : "") + choices[i];
    listed += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  }
  options_.push_back({name, metavar, help, *target, [=](const std::string &value) {
                        if (std::find(choices.begin(), choices.end(), value) == choices.end())
                          throw UsageError("--" + name + " must be " + listed + ", got '" + value +
                                           "'");
                        *target = value;
                      }});
}

void ArgParser::add_flag(const std::string &name, const std::string &help, bool *target) {
  options_.push_back({name, "", help, "", {}, target});
}

void ArgParser::add_alias(const std::string &alias, const std::string &name) {
  for (Option &o : options_)
    if (o.name == name) {
      o.aliases.push_back(alias);
      return;
    }
  throw std::logic_error("alias --" + alias + " of an unknown option --" + name);
}

const ArgParser::Option *ArgParser::find(const std::string &name) const {
  for (const Option &o : options_)
    if (o.name == name || std::find(o.aliases.begin(), o.aliases.end(), name) != o.aliases.end())
      return &o;
  return nullptr;
}

void ArgParser::add_positional(const std::string &metavar, const std::string &help,
                               std::vector<std::string> *target) {
  positional_metavar_ = metavar;
  positional_help_ = help;
  positional_ = target;
}

bool ArgParser::parse(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage().c_str(), stdout);
      return false;
    }
    if (arg == "--version") {
      std::fputs(version_text(program_).c_str(), stdout);
      return false;
    }
    if (arg == "--") {
      if (!positional_ && i + 1 < argc)
        throw UsageError("unexpected argument '" + std::string(argv[i + 1]) + "' after --");
      for (++i; i < argc; ++i) positional_->push_back(argv[i]);
      break;
    }
    if (arg.rfind("--", 0) != 0 && positional_ && (arg.empty() || arg[0] != '-')) {
      positional_->push_back(arg);
      continue;
    }
    if (arg.rfind("--", 0) != 0)
      throw UsageError("unexpected argument '" + arg + "' (options start with --)");
    std::string value;
    bool has_value = false;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    const std::string name = arg.substr(2);
    const Option *option = find(name);
    if (!option) throw UsageError("unknown option --" + name + " (see --help)");
    if (option->flag) {
      if (has_value) throw UsageError("--" + name + " takes no value");
      *option->flag = true;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) throw UsageError("--" + name + " needs a value (" + option->metavar + ")");
      value = argv[++i];
    }
    option->set(value);
  }
  return true;
}

namespace {

// `text` broken at spaces into lines of at most `width` characters, every line after the first
// indented by `indent` spaces (a word longer than a line stays whole).
std::string wrap(const std::string &text, size_t indent, size_t width) {
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line;
}

}  // namespace

std::string ArgParser::usage() const {
  std::string out =
      "usage: " + program_ + " [options]" +
      (positional_ ? " [" + positional_metavar_ + "...]" : "") + "\n\n" + summary_ + "\n\n" +
      (positional_ ? "  " + positional_metavar_ + "  " + positional_help_ + "\n\n" : "") +
      "options:\n";
  for (const Option &o : options_) {
    std::string left = "  --" + o.name;
    for (const std::string &alias : o.aliases) left += ", --" + alias;
    left += o.metavar.empty() ? "" : " " + o.metavar;
    if (left.size() < 26) left.resize(26, ' ');
    std::string help = o.help;
    if (!o.flag && !o.default_text.empty()) help += " (default: " + o.default_text + ")";
    out += left + " " + wrap(help, 27, 100) + "\n";
  }
  out += "  --help                   show this help\n";
  out += "  --version                show the versions of starcnn and its libraries\n";
  if (positional_)
    out += "  --                       end of options: every later argument is a " +
           positional_metavar_ + "\n";
  return out;
}

int run_program(const char *program, const std::function<int()> &body) {
  try {
    return body();
  } catch (const UsageError &e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace starcnn
