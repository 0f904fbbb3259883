// A small command-line parser for starcnn's programs: --name VALUE or --name=VALUE options with
// checked types and ranges, flags, aliases, --help, --version (apps/cli/version.h), `--` ending
// the options, and errors that name the option.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace starcnn {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs make() and returns what it makes; a std::invalid_argument it throws (bad input that only
// shows late, such as a split plan that does not fit a layer) becomes a UsageError after `what`.
template <typename Make>
auto usage_errors_of(const std::string &what, Make make) -> decltype(make()) {
  try {
    return make();
  } catch (const std::invalid_argument &e) {
    throw UsageError(what + ": " + e.what());
  }
}

class ArgParser {
 public:
  ArgParser(std::string program, std::string summary);

  void add(const std::string &name, const std::string &metavar, const std::string &help,
           std::string *target);
  void add(const std::string &name, const std::string &metavar, const std::string &help,
           long *target, long min, long max);
  void add(const std::string &name, const std::string &metavar, const std::string &help,
           double *target, double min, double max);
  // One of `choices` (metavar "a|b|c"); any other value is a UsageError naming them all.
  void add_choice(const std::string &name, const std::vector<std::string> &choices,
                  const std::string &help, std::string *target);
  void add_flag(const std::string &name, const std::string &help, bool *target);
  // `alias` is another name of the option `name` (added before), as PyTorch's scripts spell it.
  void add_alias(const std::string &alias, const std::string &name);
  // Lets arguments that do not start with - through, in order, into `target`; after `--` every
  // argument goes there, so a file named -x.png can be given.
  void add_positional(const std::string &metavar, const std::string &help,
                      std::vector<std::string> *target);

  // False when --help or --version was given (usage or versions printed to stdout); throws
  // UsageError on bad input.
  bool parse(int argc, char **argv);
  std::string usage() const;
  const std::string &program() const { return program_; }

 private:
  struct Option {
    std::string name, metavar, help, default_text;
    std::function<void(const std::string &)> set;  // empty for flags
    bool *flag = nullptr;
    std::vector<std::string> aliases{};
  };
  const Option *find(const std::string &name) const;
  std::string program_, summary_;
  std::vector<Option> options_;
  std::string positional_metavar_, positional_help_;
  std::vector<std::string> *positional_ = nullptr;
};

// Runs a program's body the same way for every starcnn program: a UsageError is printed as
// "PROGRAM: message" with exit status 2, any other exception as "PROGRAM: error: message" with 1.
int run_program(const char *program, const std::function<int()> &body);

}  // namespace starcnn
