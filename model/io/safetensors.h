// Reading and writing the safetensors format (float32 tensors only):
//   8 bytes: N, the header length, unsigned little-endian
//   N bytes: a JSON object {"NAME": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]},
//            ..., "__metadata__": {"key": "string", ...}}, padded with spaces to a multiple of 8
//   then the data: every tensor's little-endian floats, offsets relative to the data's start,
//   covering it without holes or overlaps.
// Files written here lay the tensors out in the order given; any valid order is read.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace starcnn {

struct SafetensorsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;  // empty for a scalar
  std::vector<float> values;   // row-major, as many as the shape's product
};

struct TensorFile {
  std::vector<NamedTensor> tensors;  // in data order
  std::map<std::string, std::string> metadata;

  // The tensor named name, or nullptr.
  const NamedTensor *find(const std::string &name) const;
};

// Headers longer than this are refused (the reference implementation's limit).
constexpr uint64_t safetensors_max_header = 100'000'000;

// "[6,1,5,5]"
std::string shape_string(const std::vector<int64_t> &shape);
// The product of the dimensions (1 for a scalar).
uint64_t element_count(const std::vector<int64_t> &shape);

// The whole file as bytes. Throws SafetensorsError when a tensor's value count does not match
// its shape, a name repeats or is "__metadata__".
std::string encode_safetensors(const TensorFile &file);
// Parses bytes; `source` names them (a file name) in every error.
TensorFile decode_safetensors(const std::string &bytes, const std::string &source);

// Writes atomically (write_file_atomically, model/io/atomic_file.h): on failure an existing `path`
// is untouched. Throws SafetensorsError.
void write_safetensors(const std::string &path, const TensorFile &file);
TensorFile read_safetensors(const std::string &path);

}  // namespace starcnn
