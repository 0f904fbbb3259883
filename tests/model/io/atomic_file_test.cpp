// write_file_atomically: exact bytes, replacement of an old file, and a clear error that leaves
// nothing behind. (Failures in mid-write are tested through write_safetensors.)
#include "model/io/atomic_file.h"
#include "tests/support/scratch_dir.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace starcnn {
namespace {

using starcnn::testing::ScratchDir;

std::string read_all(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(AtomicFile, WritesTheBytesAndReplacesAnOldFile) {
  ScratchDir dir;
  const std::string path = dir.file("out.bin");
  const std::string first("a\0b\n\xff", 5);
  write_file_atomically(path, first);
  EXPECT_EQ(read_all(path), first);
  write_file_atomically(path, "second");
  EXPECT_EQ(read_all(path), "second");
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"out.bin"});  // no temporary left
}

TEST(AtomicFile, MissingFolderIsAClearError) {
  ScratchDir dir;
  const std::string path = dir.file("no_such_folder/out.json");
  try {
    write_file_atomically(path, "{}");
    FAIL() << "no error";
  } catch (const AtomicFileError &e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_TRUE(dir.listing().empty());
}

}  // namespace
}  // namespace starcnn
