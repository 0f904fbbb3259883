// IDX reader on files the test writes itself: exact round trip, and errors naming the file.
#include "model/data/idx_reader.h"

#include <gtest/gtest.h>

#include "tests/support/data_files.h"

namespace starcnn {
namespace {

using testing::expect_error;
using testing::TempDir;

TEST(IdxReader, ImagesRoundTripExactly) {
  TempDir dir;
  for (uint32_t count : {1u, 3u, 257u}) {
    SCOPED_TRACE("count = " + std::to_string(count));
    const auto pixels = testing::random_bytes(count * 28 * 28, count);
    const std::string path = dir.file("images-" + std::to_string(count));
    testing::write_bytes(path, testing::idx_images_bytes(pixels, count, 28, 28));
    const IdxImages images = read_idx_images(path);
    EXPECT_EQ(images.count, count);
    EXPECT_EQ(images.rows, 28u);
    EXPECT_EQ(images.cols, 28u);
    EXPECT_EQ(images.pixels, pixels);
  }
}

TEST(IdxReader, NonSquareImagesWhenAsked) {
  TempDir dir;
  const auto pixels = testing::random_bytes(5 * 7 * 3, 9);
  testing::write_bytes(dir.file("img"), testing::idx_images_bytes(pixels, 5, 7, 3));
  const IdxImages images = read_idx_images(dir.file("img"), 7, 3);
  EXPECT_EQ(images.count, 5u);
  EXPECT_EQ(images.pixels, pixels);
}

TEST(IdxReader, EmptySetIsValid) {
  TempDir dir;
  testing::write_bytes(dir.file("img"), testing::idx_images_bytes({}, 0, 28, 28));
  testing::write_bytes(dir.file("lab"), testing::idx_labels_bytes({}));
  EXPECT_EQ(read_idx_images(dir.file("img")).count, 0u);
  EXPECT_TRUE(read_idx_labels(dir.file("lab")).empty());
}

TEST(IdxReader, LabelsRoundTripExactly) {
  TempDir dir;
  const auto labels = testing::random_bytes(1001, 4, 9);
  testing::write_bytes(dir.file("labels"), testing::idx_labels_bytes(labels));
  EXPECT_EQ(read_idx_labels(dir.file("labels")), labels);
}

TEST(IdxReader, MissingFileIsNamed) {
  TempDir dir;
  const std::string path = dir.file("nothing-here");
  expect_error([&] { read_idx_images(path); }, {path, "missing"});
  expect_error([&] { read_idx_labels(path); }, {path, "missing"});
  expect_error([&] { read_idx_labels(dir.path()); }, {dir.path(), "not a regular file"});
}

TEST(IdxReader, BadMagicIsNamed) {
  TempDir dir;
  const auto pixels = testing::random_bytes(2 * 28 * 28, 1);
  const std::string images = dir.file("images"), labels = dir.file("labels");
  testing::write_bytes(images, testing::idx_images_bytes(pixels, 2, 28, 28));
  testing::write_bytes(labels, testing::idx_labels_bytes({1, 2}));
  // Each file given to the other reader.
  expect_error([&] { read_idx_labels(images); }, {images, "bad magic", "2051", "2049"});
  expect_error([&] { read_idx_images(labels); }, {labels, "bad magic", "2049", "2051"});
  // Little-endian header (a common mistake when writing IDX files).
  const std::string swapped = dir.file("swapped");
  testing::write_bytes(swapped, testing::idx_images_bytes(pixels, 2, 28, 28, 0x03080000));
  expect_error([&] { read_idx_images(swapped); }, {swapped, "bad magic"});
}

TEST(IdxReader, WrongImageSizeIsNamed) {
  TempDir dir;
  const std::string path = dir.file("images");
  testing::write_bytes(path,
                       testing::idx_images_bytes(testing::random_bytes(2 * 27 * 28, 2), 2, 27, 28));
  expect_error([&] { read_idx_images(path); }, {path, "27x28", "28x28"});
}

TEST(IdxReader, TruncatedFilesAreNamed) {
  TempDir dir;
  auto images = testing::idx_images_bytes(testing::random_bytes(3 * 28 * 28, 3), 3, 28, 28);
  auto labels = testing::idx_labels_bytes({1, 2, 3});
  images.pop_back();
  labels.pop_back();
  testing::write_bytes(dir.file("images"), images);
  testing::write_bytes(dir.file("labels"), labels);
  expect_error([&] { read_idx_images(dir.file("images")); }, {dir.file("images"), "truncated"});
  expect_error([&] { read_idx_labels(dir.file("labels")); }, {dir.file("labels"), "truncated"});

  // Cut inside the header.
  images.resize(10);
  testing::write_bytes(dir.file("short"), images);
  expect_error([&] { read_idx_images(dir.file("short")); }, {dir.file("short"), "truncated"});
  testing::write_bytes(dir.file("empty"), {});
  expect_error([&] { read_idx_labels(dir.file("empty")); }, {dir.file("empty"), "truncated"});
}

TEST(IdxReader, TrailingBytesAreCorrupt) {
  TempDir dir;
  auto labels = testing::idx_labels_bytes({1, 2, 3});
  labels.push_back(4);
  testing::write_bytes(dir.file("labels"), labels);
  expect_error([&] { read_idx_labels(dir.file("labels")); }, {dir.file("labels"), "corrupt"});
}

}  // namespace
}  // namespace starcnn
