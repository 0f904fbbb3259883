// The real MNIST and Fashion-MNIST as scripts/fetch-data puts them under data/ (skipped when
// absent): sample counts, label range, and the normalisation constants against the pixels.
#include "model/data/dataset.h"
#include "model/data/idx_reader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace starcnn {
namespace {

// $STARCNN_DATA_DIR, else the data/ folder of the source tree this test was compiled from.
std::string data_dir() {
  const char *env = std::getenv("STARCNN_DATA_DIR");
  if (env && *env) return env;
  return (std::filesystem::path(__FILE__).parent_path() / ".." / ".." / ".." / "data").string();
}

class RealData : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = data_dir();
    if (!std::filesystem::exists(dir_ + "/" + GetParam()))
      GTEST_SKIP() << dir_ << "/" << GetParam() << " not found: run scripts/fetch-data";
  }
  std::string dir_;
};

TEST_P(RealData, CountsAndLabels) {
  for (Subset subset : {Subset::train, Subset::test}) {
    SCOPED_TRACE(subset_name(subset));
    const Dataset data = load_dataset(GetParam(), subset, dir_);
    EXPECT_EQ(data.count, subset == Subset::train ? 60000u : 10000u);
    EXPECT_EQ(data.channels, 1u);
    EXPECT_EQ(data.height, 32u);
    EXPECT_EQ(data.width, 32u);
    ASSERT_EQ(data.labels.size(), data.count);
    ASSERT_EQ(data.images.size(), data.count * 32 * 32);
    std::vector<size_t> per_class(10);
    for (int32_t label : data.labels) {
      ASSERT_GE(label, 0);
      ASSERT_LE(label, 9);
      ++per_class[size_t(label)];
    }
    // Both sets are roughly balanced: every class holds 8% to 12% of the samples.
    for (size_t c = 0; c < 10; ++c) {
      EXPECT_GT(per_class[c], data.count * 8 / 100) << "class " << c;
      EXPECT_LT(per_class[c], data.count * 12 / 100) << "class " << c;
    }
  }
}

// The mean and standard deviation of default_preprocess are those of the training pixels.
TEST_P(RealData, NormalisationConstantsMatchPixels) {
  const IdxImages images = read_idx_images(dir_ + "/" + GetParam() + "/train-images-idx3-ubyte");
  double sum = 0.0, sum_sq = 0.0;
  for (uint8_t p : images.pixels) {
    const double v = p / 255.0;
    sum += v;
    sum_sq += v * v;
  }
  const double n = double(images.pixels.size());
  const double mean = sum / n, stddev = std::sqrt(sum_sq / n - mean * mean);
  const Preprocess pre = default_preprocess(GetParam());
  EXPECT_NEAR(pre.mean[0], mean, 1e-3);
  EXPECT_NEAR(pre.stddev[0], stddev, 1e-3);
}

TEST_P(RealData, ReadingIsFast) {
  const auto start = std::chrono::steady_clock::now();
  const IdxImages images = read_idx_images(dir_ + "/" + GetParam() + "/train-images-idx3-ubyte");
  const auto read = std::chrono::steady_clock::now();
  const Dataset data = load_dataset(GetParam(), Subset::train, dir_);
  const auto loaded = std::chrono::steady_clock::now();
  const double read_s = std::chrono::duration<double>(read - start).count();
  const double load_s = std::chrono::duration<double>(loaded - read).count();
  std::cout << "read 60000 images: " << read_s << " s; read and preprocess: " << load_s << " s\n";
  EXPECT_EQ(images.count, 60000u);
  EXPECT_EQ(data.count, 60000u);
  // Generous bounds (the machine may be busy). Reading takes about 0.1 s; preprocessing most of
  // the rest, largely the kernel mapping the 245 MB of floats.
  EXPECT_LT(read_s, 1.0);
  EXPECT_LT(load_s, 3.0);
}

INSTANTIATE_TEST_SUITE_P(Sets, RealData, ::testing::Values("mnist", "fashion"));

}  // namespace
}  // namespace starcnn
