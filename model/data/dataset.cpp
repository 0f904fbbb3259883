#include "model/data/dataset.h"

#include "model/data/cifar10_reader.h"
#include "model/data/idx_reader.h"
#include "model/io/regular_file.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <stdexcept>

namespace starcnn {
namespace {

constexpr int kClasses = 10;  // all three named data sets have ten classes
constexpr const char *kCifarPrefix = "cifar10:";

bool is_cifar10(const std::string &name) {
  return name.rfind(kCifarPrefix, 0) == 0;
}

[[noreturn]] void unknown_name(const std::string &name) {
  throw std::invalid_argument("unknown data set '" + name +
                              "' (known: mnist, fashion, cifar10:DIR)");
}

void check_preprocess(const Preprocess &pre, size_t channels) {
  if (pre.pad < 0) throw std::invalid_argument("preprocess: negative pad");
  if (pre.mean.size() != channels || pre.stddev.size() != channels)
    throw std::invalid_argument("preprocess: " + std::to_string(pre.mean.size()) + " means and " +
                                std::to_string(pre.stddev.size()) + " stddevs for " +
                                std::to_string(channels) + " channels");
  for (float s : pre.stddev)
    if (!(s > 0.0f)) throw std::invalid_argument("preprocess: stddev must be > 0");
}

Dataset load_idx_set(const std::string &name, Subset subset, const Preprocess &pre,
                     const std::string &data_dir) {
  const std::string prefix =
      data_dir + "/" + name + "/" + (subset == Subset::train ? "train" : "t10k");
  const std::string labels_path = prefix + "-labels-idx1-ubyte";
  const std::string images_path = prefix + "-images-idx3-ubyte";
  const IdxImages images = read_idx_images(images_path);
  if (images.count == 0)
    throw_file_error(images_path, "holds no images: a data set needs at least one sample");
  const std::vector<uint8_t> labels = read_idx_labels(labels_path);
  if (labels.size() != images.count)
    throw_file_error(labels_path, std::to_string(labels.size()) + " labels for " +
                                      std::to_string(images.count) + " images in " + images_path);
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] >= kClasses)
      throw_file_error(labels_path, "corrupt: label " + std::to_string(labels[i]) + " of sample " +
                                        std::to_string(i) + " is outside 0..9");
  return make_dataset(images.pixels.data(), labels.data(), images.count, 1, images.rows,
                      images.cols, kClasses, pre);
}

}  // namespace

Dataset make_dataset(const uint8_t *pixels, const uint8_t *labels, size_t count, size_t channels,
                     size_t height, size_t width, int num_classes, const Preprocess &pre) {
  check_preprocess(pre, channels);
  for (size_t i = 0; i < count; ++i)
    if (labels[i] >= num_classes)
      throw std::invalid_argument("label " + std::to_string(labels[i]) + " of sample " +
                                  std::to_string(i) + " is outside 0.." +
                                  std::to_string(num_classes - 1));
  const size_t pad = size_t(pre.pad);
  Dataset data;
  data.count = count;
  data.channels = channels;
  data.height = height + 2 * pad;
  data.width = width + 2 * pad;
  data.num_classes = num_classes;
  data.preprocess = pre;
  data.images.resize(count * data.sample_size());
  data.labels.assign(labels, labels + count);

  // One table per channel maps a byte to its final value, so the loop below is a lookup per pixel.
  std::vector<std::array<float, 256>> table(channels);
  std::vector<float> padding(channels);
  for (size_t c = 0; c < channels; ++c) {
    const double mean = pre.mean[c], stddev = pre.stddev[c];
    for (int v = 0; v < 256; ++v) table[c][size_t(v)] = float((v / 255.0 - mean) / stddev);
    padding[c] = float((0.0 - mean) / stddev);
  }
  // Each output plane is written once, row by row: top padding, rows with side padding, bottom.
  const size_t plane_in = height * width, plane_out = data.height * data.width;
  for (size_t n = 0; n < count; ++n) {
    for (size_t c = 0; c < channels; ++c) {
      const uint8_t *in = pixels + (n * channels + c) * plane_in;
      const float *lookup = table[c].data();
      const float fill = padding[c];
      float *out = data.images.data() + (n * channels + c) * plane_out;
      out = std::fill_n(out, pad * data.width, fill);
      for (size_t y = 0; y < height; ++y, in += width) {
        out = std::fill_n(out, pad, fill);
        for (size_t x = 0; x < width; ++x) *out++ = lookup[in[x]];
        out = std::fill_n(out, pad, fill);
      }
      std::fill_n(out, pad * data.width, fill);
    }
  }
  return data;
}

Preprocess default_preprocess(const std::string &name) {
  // Mean and standard deviation of the training images scaled to [0, 1], before padding.
  if (name == "mnist") return {2, {0.1307f}, {0.3081f}};
  if (name == "fashion") return {2, {0.2860f}, {0.3530f}};
  if (is_cifar10(name)) return {0, {0.4914f, 0.4822f, 0.4465f}, {0.2470f, 0.2435f, 0.2616f}};
  unknown_name(name);
}

std::string default_data_dir() {
  const char *dir = std::getenv("STARCNN_DATA_DIR");
  return dir && *dir ? dir : "data";
}

Dataset load_dataset(const std::string &name, Subset subset, const std::string &data_dir) {
  return load_dataset(name, subset, default_preprocess(name), data_dir);
}

Dataset load_dataset(const std::string &name, Subset subset, const Preprocess &pre,
                     const std::string &data_dir) {
  Dataset data;
  if (name == "mnist" || name == "fashion") {
    data = load_idx_set(name, subset, pre, data_dir);
  } else if (is_cifar10(name)) {
    const std::string dir = name.substr(std::string(kCifarPrefix).size());
    if (dir.empty()) throw std::invalid_argument("cifar10:DIR needs a folder, got '" + name + "'");
    const Cifar10Images images = read_cifar10(dir, subset);
    data = make_dataset(images.pixels.data(), images.labels.data(), images.count, kCifar10Channels,
                        kCifar10Side, kCifar10Side, kClasses, pre);
  } else {
    unknown_name(name);
  }
  data.name = name;
  data.subset = subset;
  return data;
}

}  // namespace starcnn
