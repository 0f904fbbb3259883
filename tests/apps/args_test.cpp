// ArgParser's positional arguments: collected in order between options, and options still
// checked (an unknown --flag or a lone -x is an error, not an image name) until `--`; aliases;
// --version; choices.
#include "apps/cli/args.h"
#include "apps/cli/math_option.h"

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

TEST(ArgParser, DoubleDashEndsOptions) {
  long batch = 1;
  std::vector<std::string> files;
  ArgParser args("prog", "test");
  args.add("batch", "N", "", &batch, 1, 100);
  args.add_positional("IMAGE", "images", &files);
  ASSERT_TRUE(parse(args, {"prog", "a.png", "--batch", "3", "--", "-x.png", "--batch", "--", "-"}));
  EXPECT_EQ(files, (std::vector<std::string>{"a.png", "-x.png", "--batch", "--", "-"}));
  EXPECT_EQ(batch, 3);
  ASSERT_TRUE(parse(args, {"prog", "--"}));  // nothing after it: no more files
  EXPECT_EQ(files.size(), 5u);

  ArgParser no_files("prog", "test");
  EXPECT_TRUE(parse(no_files, {"prog", "--"}));
  EXPECT_THROW(parse(no_files, {"prog", "--", "a.png"}), UsageError);
}

TEST(ArgParser, AliasSetsTheSameOption) {
  long batch = 1;
  ArgParser args("prog", "test");
  args.add("batch", "N", "", &batch, 1, 100);
  args.add_alias("batch-size", "batch");
  ASSERT_TRUE(parse(args, {"prog", "--batch-size", "7"}));
  EXPECT_EQ(batch, 7);
  ASSERT_TRUE(parse(args, {"prog", "--batch-size=9"}));
  EXPECT_EQ(batch, 9);
  EXPECT_THROW(parse(args, {"prog", "--batch-size", "0"}), UsageError);  // the option's range
  EXPECT_EQ(batch, 9);
  EXPECT_NE(args.usage().find("--batch, --batch-size N"), std::string::npos) << args.usage();
  EXPECT_THROW(args.add_alias("steps", "no-such-option"), std::logic_error);
}

// A choice takes one of its values; anything else is refused naming them all, and the value
// stays. --math of the programs is one (with the convolution math's names).
TEST(ArgParser, ChoiceTakesOneOfItsValues) {
  std::string axis = "filters";
  ArgParser args("prog", "test");
  args.add_choice("axis", {"filters", "samples", "both"}, "the axis", &axis);
  ASSERT_TRUE(parse(args, {"prog", "--axis", "samples"}));
  EXPECT_EQ(axis, "samples");
  ASSERT_TRUE(parse(args, {"prog", "--axis=both"}));
  EXPECT_EQ(axis, "both");
  for (const char *bad : {"Samples", "", "sample", "filters,samples"}) {
    try {
      parse(args, {"prog", "--axis", bad});
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const UsageError &e) {
      EXPECT_EQ(std::string(e.what()),
                "--axis must be filters, samples or both, got '" + std::string(bad) + "'");
    }
    EXPECT_EQ(axis, "both");
  }
  EXPECT_THROW(parse(args, {"prog", "--axis"}), UsageError);  // no value
  const std::string usage = args.usage();
  EXPECT_NE(usage.find("--axis filters|samples|both"), std::string::npos) << usage;
  EXPECT_NE(usage.find("(default: filters)"), std::string::npos) << usage;

  std::string math = "tf32";
  ArgParser program("prog", "test");
  add_math_option(program, &math);
  ASSERT_TRUE(parse(program, {"prog", "--math", "fp32"}));
  EXPECT_EQ(math, "fp32");
  EXPECT_THROW(parse(program, {"prog", "--math", "fp16"}), UsageError);
  EXPECT_NE(program.usage().find("--math fp32|tf32"), std::string::npos) << program.usage();
}

TEST(ArgParser, VersionPrintsAndStops) {
  long batch = 1;
  ArgParser args("prog", "test");
  args.add("batch", "N", "", &batch, 1, 100);
  testing::internal::CaptureStdout();
  const bool run = parse(args, {"prog", "--version", "--batch", "5"});
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_FALSE(run);
  EXPECT_EQ(batch, 1);
  EXPECT_EQ(out.rfind("prog (starcnn) ", 0), 0u) << out;
  for (const char *key :
       {"\ncommit: ", "\nstarpu: ", "\ncuda runtime: ", "\ncudnn: ", "\nopenblas: "})
    EXPECT_NE(out.find(key), std::string::npos) << key << " missing from\n" << out;
}

}  // namespace
}  // namespace starcnn
