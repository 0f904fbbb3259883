// Preprocessing against a float64 computation written here, and named data sets loaded from
// folders the test writes.
#include "model/data/dataset.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/support/data_files.h"

namespace starcnn {
namespace {

using testing::expect_error;
using testing::TempDir;

// Reference: the padded, normalised value of output element (n, c, y, x), in double.
double reference_value(const std::vector<uint8_t> &pixels, size_t channels, size_t height,
                       size_t width, const Preprocess &pre, size_t n, size_t c, size_t y,
                       size_t x) {
  const long iy = long(y) - pre.pad, ix = long(x) - pre.pad;
  double scaled = 0.0;  // padding is black
  if (iy >= 0 && ix >= 0 && iy < long(height) && ix < long(width))
    scaled = pixels[((n * channels + c) * height + size_t(iy)) * width + size_t(ix)] / 255.0;
  return (scaled - pre.mean[c]) / pre.stddev[c];
}

void expect_preprocessed(const Dataset &data, const std::vector<uint8_t> &pixels, size_t height,
                         size_t width, const Preprocess &pre) {
  ASSERT_EQ(data.height, height + 2 * size_t(pre.pad));
  ASSERT_EQ(data.width, width + 2 * size_t(pre.pad));
  ASSERT_EQ(data.images.size(), data.count * data.sample_size());
  size_t i = 0;
  for (size_t n = 0; n < data.count; ++n)
    for (size_t c = 0; c < data.channels; ++c)
      for (size_t y = 0; y < data.height; ++y)
        for (size_t x = 0; x < data.width; ++x, ++i) {
          const double want =
              reference_value(pixels, data.channels, height, width, pre, n, c, y, x);
          // One float rounding of a value of magnitude < 4: within 4e-7.
          ASSERT_NEAR(data.images[i], want, 1e-6)
              << "at n=" << n << " c=" << c << " y=" << y << " x=" << x;
        }
}

TEST(Dataset, PreprocessingMatchesReference) {
  struct Case {
    size_t count, channels, height, width;
    Preprocess pre;
  };
  const Case cases[] = {
      {4, 1, 28, 28, {2, {0.1307f}, {0.3081f}}},
      {3, 3, 5, 7, {3, {0.5f, 0.25f, 0.0f}, {0.2f, 1.0f, 2.5f}}},  // non-square, pad 3
      {1, 2, 1, 1, {0, {0.0f, 1.0f}, {1.0f, 0.5f}}},               // 1x1, no padding
  };
  for (const Case &k : cases) {
    SCOPED_TRACE("channels " + std::to_string(k.channels) + " pad " + std::to_string(k.pre.pad));
    const auto pixels =
        testing::random_bytes(k.count * k.channels * k.height * k.width, uint32_t(k.height));
    auto labels = testing::random_bytes(k.count, 5, 9);
    labels[0] = 0;  // both ends of the label range
    labels[k.count - 1] = 9;
    const Dataset data = make_dataset(pixels.data(), labels.data(), k.count, k.channels, k.height,
                                      k.width, 10, k.pre);
    EXPECT_EQ(data.count, k.count);
    EXPECT_EQ(data.channels, k.channels);
    EXPECT_EQ(data.num_classes, 10);
    ASSERT_EQ(data.labels.size(), k.count);
    for (size_t i = 0; i < k.count; ++i) EXPECT_EQ(data.labels[i], int32_t(labels[i]));
    expect_preprocessed(data, pixels, k.height, k.width, k.pre);
  }
}

TEST(Dataset, BadPreprocessOrLabelsAreRejected) {
  const auto pixels = testing::random_bytes(2 * 3 * 4 * 4, 1);
  const uint8_t labels[] = {1, 2};
  const auto make = [&](const Preprocess &pre) {
    make_dataset(pixels.data(), labels, 2, 3, 4, 4, 10, pre);
  };
  expect_error([&] { make({0, {0.5f}, {0.5f}}); }, {"3 channels"});
  expect_error([&] { make({0, {0, 0, 0}, {1, 0, 1}}); }, {"stddev"});
  expect_error([&] { make({-1, {0, 0, 0}, {1, 1, 1}}); }, {"pad"});
  const uint8_t too_big[] = {1, 10};
  expect_error(
      [&] {
        make_dataset(pixels.data(), too_big, 2, 3, 4, 4, 10, {0, {0, 0, 0}, {1, 1, 1}});
      },
      {"label 10", "sample 1"});
}

TEST(Dataset, DefaultPreprocessOfNamedSets) {
  const Preprocess mnist = default_preprocess("mnist");
  EXPECT_EQ(mnist.pad, 2);
  ASSERT_EQ(mnist.mean.size(), 1u);
  ASSERT_EQ(mnist.stddev.size(), 1u);
  EXPECT_EQ(default_preprocess("fashion").pad, 2);
  const Preprocess cifar = default_preprocess("cifar10:/some/where");
  EXPECT_EQ(cifar.pad, 0);
  EXPECT_EQ(cifar.mean.size(), 3u);
  EXPECT_EQ(cifar.stddev.size(), 3u);
  expect_error([] { default_preprocess("imagenet"); }, {"imagenet", "unknown"});
}

// A data folder with a tiny fake MNIST (and nothing else).
void write_fake_idx_set(const TempDir &dir, const std::string &set, const std::string &prefix,
                        const std::vector<uint8_t> &pixels, const std::vector<uint8_t> &labels) {
  testing::write_bytes(dir.file(set + "/" + prefix + "-images-idx3-ubyte"),
                       testing::idx_images_bytes(pixels, uint32_t(labels.size()), 28, 28));
  testing::write_bytes(dir.file(set + "/" + prefix + "-labels-idx1-ubyte"),
                       testing::idx_labels_bytes(labels));
}

TEST(Dataset, LoadsIdxSetsFromDataFolder) {
  TempDir dir;
  const auto train_pixels = testing::random_bytes(6 * 28 * 28, 1);
  const auto train_labels = testing::random_bytes(6, 2, 9);
  const auto test_pixels = testing::random_bytes(2 * 28 * 28, 3);
  const auto test_labels = testing::random_bytes(2, 4, 9);
  for (const std::string set : {"mnist", "fashion"}) {
    write_fake_idx_set(dir, set, "train", train_pixels, train_labels);
    write_fake_idx_set(dir, set, "t10k", test_pixels, test_labels);
    for (Subset subset : {Subset::train, Subset::test}) {
      SCOPED_TRACE(set + " " + subset_name(subset));
      const auto &pixels = subset == Subset::train ? train_pixels : test_pixels;
      const auto &labels = subset == Subset::train ? train_labels : test_labels;
      const Dataset data = load_dataset(set, subset, dir.path());
      EXPECT_EQ(data.name, set);
      EXPECT_EQ(data.subset, subset);
      EXPECT_EQ(data.count, labels.size());
      EXPECT_EQ(data.channels, 1u);
      EXPECT_EQ(data.height, 32u);  // 28 padded by 2 on each side
      EXPECT_EQ(data.width, 32u);
      EXPECT_EQ(data.num_classes, 10);
      for (size_t i = 0; i < labels.size(); ++i) EXPECT_EQ(data.labels[i], int32_t(labels[i]));
      expect_preprocessed(data, pixels, 28, 28, default_preprocess(set));
    }
  }
}

TEST(Dataset, LoadsCifar10Folder) {
  TempDir dir;
  const auto pixels = testing::random_bytes(4 * 3072, 8);
  const auto labels = testing::random_bytes(4, 9, 9);
  testing::write_bytes(dir.file("c10/test_batch.bin"), testing::cifar10_bytes(labels, pixels));
  const Preprocess pre{1, {0.1f, 0.2f, 0.3f}, {0.5f, 0.6f, 0.7f}};
  const Dataset data = load_dataset("cifar10:" + dir.file("c10"), Subset::test, pre, "unused");
  EXPECT_EQ(data.count, 4u);
  EXPECT_EQ(data.channels, 3u);
  for (size_t i = 0; i < labels.size(); ++i) EXPECT_EQ(data.labels[i], int32_t(labels[i]));
  expect_preprocessed(data, pixels, 32, 32, pre);
}

TEST(Dataset, LoadErrorsNameTheFile) {
  TempDir dir;
  expect_error([&] { load_dataset("mnist", Subset::train, dir.path()); },
               {dir.file("mnist/train-images-idx3-ubyte"), "missing"});
  expect_error([&] { load_dataset("mnist-ish", Subset::train, dir.path()); }, {"unknown"});
  expect_error([&] { load_dataset("cifar10:", Subset::train, dir.path()); }, {"cifar10:DIR"});

  // Fewer labels than images.
  write_fake_idx_set(dir, "mnist", "t10k", testing::random_bytes(3 * 28 * 28, 1), {1, 2, 3});
  testing::write_bytes(dir.file("mnist/t10k-labels-idx1-ubyte"), testing::idx_labels_bytes({1, 2}));
  expect_error([&] { load_dataset("mnist", Subset::test, dir.path()); },
               {dir.file("mnist/t10k-labels-idx1-ubyte"), "2 labels for 3 images"});
  // A label outside 0..9.
  testing::write_bytes(dir.file("mnist/t10k-labels-idx1-ubyte"),
                       testing::idx_labels_bytes({1, 200, 3}));
  expect_error([&] { load_dataset("mnist", Subset::test, dir.path()); },
               {dir.file("mnist/t10k-labels-idx1-ubyte"), "corrupt", "label 200"});
}

// A set of no samples would "evaluate" to accuracy 0 and loss 0: it is an error naming the file.
TEST(Dataset, EmptySetIsAnError) {
  TempDir dir;
  write_fake_idx_set(dir, "mnist", "t10k", {}, {});
  expect_error([&] { load_dataset("mnist", Subset::test, dir.path()); },
               {dir.file("mnist/t10k-images-idx3-ubyte"), "holds no images"});
}

TEST(Dataset, DefaultDataDirFollowsEnvironment) {
  const char *saved = std::getenv("STARCNN_DATA_DIR");
  const std::string old = saved ? saved : "";
  setenv("STARCNN_DATA_DIR", "/elsewhere/data", 1);
  EXPECT_EQ(default_data_dir(), "/elsewhere/data");
  unsetenv("STARCNN_DATA_DIR");
  EXPECT_EQ(default_data_dir(), "data");
  if (saved) setenv("STARCNN_DATA_DIR", old.c_str(), 1);
}

}  // namespace
}  // namespace starcnn
