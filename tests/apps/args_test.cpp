// ArgParser's positional arguments: collected in order between options, and options still
// checked (an unknown --flag or a lone -x is an error, not an image name).
#include "apps/cli/args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace starcnn {
namespace {

bool parse(ArgParser &args, std::vector<std::string> words) {
  std::vector<char *> argv;
  for (std::string &w : words) argv.push_back(w.data());
  return args.parse(int(argv.size()), argv.data());
}

TEST(ArgParser, PositionalArgumentsInOrder) {
  std::string checkpoint;
  long batch = 1;
  std::vector<std::string> files;
  ArgParser args("prog", "test");
  args.add("checkpoint", "FILE", "", &checkpoint);
  args.add("batch", "N", "", &batch, 1, 100);
  args.add_positional("IMAGE", "images", &files);
  ASSERT_TRUE(parse(args, {"prog", "a.pgm", "--checkpoint", "c.st", "b.png", "--batch=5", "c"}));
  EXPECT_EQ(files, (std::vector<std::string>{"a.pgm", "b.png", "c"}));
  EXPECT_EQ(checkpoint, "c.st");
  EXPECT_EQ(batch, 5);
  EXPECT_NE(args.usage().find("[IMAGE...]"), std::string::npos);
  EXPECT_THROW(parse(args, {"prog", "--bogus"}), UsageError);
  EXPECT_THROW(parse(args, {"prog", "-x"}), UsageError);
}

TEST(ArgParser, NoPositionalArgumentsUnlessAsked) {
  ArgParser args("prog", "test");
  try {
    parse(args, {"prog", "a.pgm"});
    ADD_FAILURE() << "no error";
  } catch (const UsageError &e) {
    EXPECT_NE(std::string(e.what()).find("'a.pgm'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace starcnn
