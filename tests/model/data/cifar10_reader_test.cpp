// CIFAR-10 binary reader on files the test writes itself.
#include "model/data/cifar10_reader.h"

#include <gtest/gtest.h>

#include "tests/support/data_files.h"

namespace starcnn {
namespace {

using testing::expect_error;
using testing::TempDir;

constexpr size_t kImage = 3 * 32 * 32;

TEST(Cifar10Reader, FileRoundTripsExactly) {
  TempDir dir;
  for (size_t count : {size_t(1), size_t(7)}) {
    const auto labels = testing::random_bytes(count, uint32_t(count), 9);
    const auto pixels = testing::random_bytes(count * kImage, uint32_t(count) + 100);
    const std::string path = dir.file("batch.bin");
    testing::write_bytes(path, testing::cifar10_bytes(labels, pixels));
    const Cifar10Images images = read_cifar10_file(path);
    EXPECT_EQ(images.count, count);
    EXPECT_EQ(images.labels, labels);
    EXPECT_EQ(images.pixels, pixels);
  }
}

// The five training batches come back concatenated in order; the test batch alone.
TEST(Cifar10Reader, FolderReadsBatchesInOrder) {
  TempDir dir;
  std::vector<uint8_t> all_labels, all_pixels;
  for (int b = 1; b <= 5; ++b) {
    const size_t count = size_t(b) + 1;  // uneven batch sizes
    const auto labels = testing::random_bytes(count, uint32_t(b), 9);
    const auto pixels = testing::random_bytes(count * kImage, uint32_t(b) + 50);
    testing::write_bytes(dir.file("data_batch_" + std::to_string(b) + ".bin"),
                         testing::cifar10_bytes(labels, pixels));
    all_labels.insert(all_labels.end(), labels.begin(), labels.end());
    all_pixels.insert(all_pixels.end(), pixels.begin(), pixels.end());
  }
  const auto test_labels = testing::random_bytes(3, 77, 9);
  const auto test_pixels = testing::random_bytes(3 * kImage, 78);
  testing::write_bytes(dir.file("test_batch.bin"),
                       testing::cifar10_bytes(test_labels, test_pixels));

  const Cifar10Images train = read_cifar10(dir.path(), Subset::train);
  EXPECT_EQ(train.count, 2u + 3 + 4 + 5 + 6);
  EXPECT_EQ(train.labels, all_labels);
  EXPECT_EQ(train.pixels, all_pixels);
  const Cifar10Images test = read_cifar10(dir.path(), Subset::test);
  EXPECT_EQ(test.count, 3u);
  EXPECT_EQ(test.labels, test_labels);
  EXPECT_EQ(test.pixels, test_pixels);
}

TEST(Cifar10Reader, MissingBatchIsNamed) {
  TempDir dir;
  for (int b : {1, 2, 4, 5})
    testing::write_bytes(dir.file("data_batch_" + std::to_string(b) + ".bin"),
                         testing::cifar10_bytes({1}, testing::random_bytes(kImage, 1)));
  expect_error([&] { read_cifar10(dir.path(), Subset::train); },
               {dir.file("data_batch_3.bin"), "missing"});
  expect_error([&] { read_cifar10(dir.path(), Subset::test); },
               {dir.file("test_batch.bin"), "missing"});
}

TEST(Cifar10Reader, TruncatedOrEmptyFileIsNamed) {
  TempDir dir;
  auto bytes = testing::cifar10_bytes({1, 2}, testing::random_bytes(2 * kImage, 2));
  bytes.pop_back();
  testing::write_bytes(dir.file("cut.bin"), bytes);
  expect_error([&] { read_cifar10_file(dir.file("cut.bin")); }, {dir.file("cut.bin"), "truncated"});
  testing::write_bytes(dir.file("empty.bin"), {});
  expect_error([&] { read_cifar10_file(dir.file("empty.bin")); }, {dir.file("empty.bin"), "empty"});
}

TEST(Cifar10Reader, LabelOutOfRangeIsCorrupt) {
  TempDir dir;
  testing::write_bytes(dir.file("bad.bin"),
                       testing::cifar10_bytes({3, 10}, testing::random_bytes(2 * kImage, 3)));
  expect_error([&] { read_cifar10_file(dir.file("bad.bin")); },
               {dir.file("bad.bin"), "corrupt", "record 1", "label 10"});
}

}  // namespace
}  // namespace starcnn
