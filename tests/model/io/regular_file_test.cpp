// Every reader opens files through RegularFile: a FIFO does not block the open, a device such as
// /dev/zero (or a symlink to it) and a directory are refused by what they are, a file over the
// format's limit is refused before a byte is read; the checkpoint, network and IDX readers say so
// with the path, each within a fraction of a second.
#include "model/io/regular_file.h"

#include "model/data/idx_reader.h"
#include "model/io/safetensors.h"
#include "model/nn/network_spec.h"
#include "tests/support/scratch_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>

namespace starcnn {
namespace {

using starcnn::testing::ScratchDir;

// The message of what read() throws (any std::exception), and that it took under two seconds.
std::string error_of(const std::function<void()> &read) {
  const auto start = std::chrono::steady_clock::now();
  std::string message = "(no error)";
  try {
    read();
  } catch (const std::exception &e) {
    message = e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0)
      << message;
  return message;
}

void expect_contains(const std::string &message, const std::vector<std::string> &parts) {
  for (const std::string &part : parts)
    EXPECT_NE(message.find(part), std::string::npos)
        << "message: " << message << "\nmissing: " << part;
}

// Each reader on `path`, and what each error must say besides the path.
void expect_every_reader_refuses(const std::string &path, const std::string &problem) {
  expect_contains(error_of([&] { read_regular_file(path, 1 << 20, "a test file"); }),
                  {path, problem});
  expect_contains(error_of([&] { read_safetensors(path); }), {path, problem});
  expect_contains(error_of([&] { load_network(path); }), {path, problem});
  expect_contains(error_of([&] { read_idx_labels(path); }), {path, problem});
}

TEST(RegularFile, DevZeroThroughASymlinkIsRefused) {
  ScratchDir dir;
  const std::string link = dir.file("zero.safetensors");
  ASSERT_EQ(symlink("/dev/zero", link.c_str()), 0);
  expect_every_reader_refuses(link, "character device");
}

TEST(RegularFile, FifoIsRefusedWithoutBlocking) {
  ScratchDir dir;
  const std::string fifo = dir.file("pipe.net");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_every_reader_refuses(fifo, "FIFO");
}

TEST(RegularFile, DirectoryIsRefused) {
  ScratchDir dir;
  expect_every_reader_refuses(dir.path(), "directory");
}

TEST(RegularFile, MissingFileIsNamed) {
  ScratchDir dir;
  expect_every_reader_refuses(dir.file("absent"), "missing");
}

TEST(RegularFile, SizeIsCheckedAgainstTheLimitBeforeReading) {
  ScratchDir dir;
  const std::string path = dir.file("f.bin");
  std::ofstream(path) << std::string(1000, 'x');
  EXPECT_EQ(read_regular_file(path, 1000, "a test file"), std::string(1000, 'x'));
  expect_contains(error_of([&] { read_regular_file(path, 999, "a test file"); }),
                  {path, "1000 bytes, more than the 999 bytes a test file may have"});
  // A network description of more than 1 MB is not one.
  std::ofstream(path) << std::string((1 << 20) + 1, '#');
  expect_contains(error_of([&] { load_network(path); }), {path, "a network description"});
}

TEST(RegularFile, ReadsInPiecesAndNoticesAShrunkFile) {
  ScratchDir dir;
  const std::string path = dir.file("f.bin");
  std::ofstream(path) << "abcdef";
  RegularFile file(path, 100, "a test file");
  EXPECT_EQ(file.size(), 6u);
  char part[3];
  file.read(part, 3);
  EXPECT_EQ(std::string(part, 3), "abc");
  ASSERT_EQ(truncate(path.c_str(), 4), 0);
  expect_contains(error_of([&] { file.read(part, 3); }), {path, "shrank"});
}

// Against the kernel's own count in /proc/meminfo (MemTotal leaves out the kernel's reserve).
TEST(RegularFile, PhysicalMemoryMatchesProcMeminfo) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (meminfo >> key && key != "MemTotal:") meminfo.ignore(1 << 10, '\n');
  ASSERT_TRUE(meminfo >> kib) << "no MemTotal in /proc/meminfo";
  const double total = double(kib) * 1024, bytes = double(physical_memory_bytes());
  EXPECT_GE(bytes, total);
  EXPECT_LE(bytes, 1.1 * total);
}

}  // namespace
}  // namespace starcnn
