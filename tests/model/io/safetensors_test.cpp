// safetensors: round trips, a file encoded by hand byte by byte, corrupt inputs and atomic writes.
#include "model/io/safetensors.h"
#include "tests/support/random_data.h"
#include "tests/support/scratch_dir.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <csignal>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace starcnn {
namespace {

using starcnn::testing::random_floats;
using starcnn::testing::ScratchDir;

std::string le64(uint64_t n) {
  std::string s;
  for (int i = 0; i < 8; ++i) s += char((n >> (8 * i)) & 0xFF);
  return s;
}

// The bytes as given, e.g. bytes({0x00, 0x00, 0x80, 0x3F}).
std::string bytes(std::initializer_list<int> list) {
  std::string s;
  for (int b : list) s += char(b);
  return s;
}

// A file: 8-byte length, the header as written, then the data.
std::string file_bytes(const std::string &header, const std::string &data) {
  return le64(header.size()) + header + data;
}

void write_raw(const std::string &path, const std::string &content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

std::string read_raw(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string decode_error(const std::string &content) {
  try {
    decode_safetensors(content, "bad.safetensors");
  } catch (const SafetensorsError &e) {
    return e.what();
  }
  return "(no error)";
}

void expect_same_bits(const NamedTensor &a, const NamedTensor &b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.shape, b.shape);
  ASSERT_EQ(a.values.size(), b.values.size()) << a.name;
  // memcmp must not see the null data() of an empty vector (UBSan: null argument).
  if (!a.values.empty()) {
    EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), 4 * a.values.size()), 0) << a.name;
  }
}

TEST(Safetensors, RoundTripOfRandomTensors) {
  ScratchDir dir;
  TensorFile file;
  std::vector<std::vector<int64_t>> shapes = {{6, 1, 5, 5}, {6}, {}, {0, 3}, {3, 7}, {1, 1, 1, 1}};
  uint32_t seed = 11;
  for (size_t i = 0; i < shapes.size(); ++i) {
    NamedTensor t;
    t.name = "t" + std::to_string(i) + (i == 2 ? ".weight \"quoted\" \xc3\xa9" : "");
    t.shape = shapes[i];
    t.values = random_floats(element_count(t.shape), seed++, -1e30f, 1e30f);
    file.tensors.push_back(t);
  }
  file.tensors[0].values[3] = -0.0f;  // the sign bit must survive
  file.metadata["network"] = "input 1 32 32\n# \"comment\" \\ \t\x01\nrelu\n";
  file.metadata["empty"] = "";
  file.metadata["unicode"] = "\xe2\x82\xac";
  std::string path = dir.file("round.safetensors");
  write_safetensors(path, file);

  std::string raw = read_raw(path);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(raw[size_t(i)])) << (8 * i);
  EXPECT_EQ(n % 8, 0u) << "header padded to a multiple of 8";
  EXPECT_EQ(raw[8], '{');

  TensorFile back = read_safetensors(path);
  ASSERT_EQ(back.tensors.size(), file.tensors.size());
  for (size_t i = 0; i < file.tensors.size(); ++i)
    expect_same_bits(back.tensors[i], file.tensors[i]);
  EXPECT_EQ(back.metadata, file.metadata);
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"round.safetensors"}) << "no temporary left";
}

TEST(Safetensors, WritesTheExpectedBytes) {
  TensorFile file;
  file.tensors.push_back({"x", {2}, {1.0f, -2.5f}});
  file.metadata["k"] = "v";
  std::string header =
      R"({"__metadata__": {"k": "v"}, "x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  // 1.0f = 0x3F800000, -2.5f = 0xC0200000, little-endian.
  std::string expected =
      file_bytes(header, bytes({0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0xC0}));
  EXPECT_EQ(encode_safetensors(file), expected);
}

// The header is padded with spaces to a multiple of 8, whatever its length.
TEST(Safetensors, HeaderIsPaddedToEightBytes) {
  for (size_t extra = 0; extra < 16; ++extra) {
    TensorFile file;
    file.tensors.push_back({"x", {1}, {3.0f}});
    file.metadata["k"] = std::string(extra, 'a');
    std::string raw = encode_safetensors(file);
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i)
      n |= uint64_t(static_cast<unsigned char>(raw[size_t(i)])) << (8 * i);
    EXPECT_EQ(n % 8, 0u) << extra;
    ASSERT_EQ(raw.size(), 8 + n + 4) << extra;
    std::string header = raw.substr(8, size_t(n));
    size_t close = header.rfind('}');
    EXPECT_EQ(header.find_first_not_of(' ', close + 1), std::string::npos) << header;
    EXPECT_LT(n - close - 1, 8u) << header;
  }
}

TEST(Safetensors, ReadsAHandEncodedFile) {
  // Keys in a different order from the data, metadata last, spaces, an escaped name, no padding.
  std::string header =
      "{ \"b\" : {\"shape\": [2], \"dtype\": \"F32\", \"data_offsets\": [4, 12]},\n"
      "  \"w\\u00e9\": {\"dtype\":\"F32\",\"shape\":[1,1],\"data_offsets\":[0,4]},\n"
      "  \"s\": {\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[12,16]},\n"
      "  \"__metadata__\": {\"format\": \"pt\", \"n\\\"l\": \"a\\nb\"} }";
  std::string data = bytes({0x00, 0x00, 0x00, 0x3F,    // 0.5f: "wé"
                            0x00, 0x00, 0x80, 0x3F,    // 1.0f: b[0]
                            0x00, 0x00, 0x20, 0xC0,    // -2.5f: b[1]
                            0x00, 0x00, 0xC0, 0x7F});  // NaN: s
  TensorFile file = decode_safetensors(file_bytes(header, data), "hand.safetensors");
  ASSERT_EQ(file.tensors.size(), 3u);
  EXPECT_EQ(file.tensors[0].name, "w\xc3\xa9");
  EXPECT_EQ(file.tensors[0].shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(file.tensors[0].values, std::vector<float>{0.5f});
  EXPECT_EQ(file.tensors[1].name, "b");
  EXPECT_EQ(file.tensors[1].values, (std::vector<float>{1.0f, -2.5f}));
  EXPECT_EQ(file.tensors[2].shape, std::vector<int64_t>{});
  ASSERT_EQ(file.tensors[2].values.size(), 1u);
  EXPECT_TRUE(std::isnan(file.tensors[2].values[0]));
  EXPECT_EQ(file.metadata.at("format"), "pt");
  EXPECT_EQ(file.metadata.at("n\"l"), "a\nb");
  ASSERT_NE(file.find("b"), nullptr);
  EXPECT_EQ(file.find("c"), nullptr);
}

TEST(Safetensors, CorruptInputsGiveClearErrors) {
  const std::string good_header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string good_data(8, '\0');
  ASSERT_EQ(decode_error(file_bytes(good_header, good_data)), "(no error)");

  auto with = [](const std::string &entry) { return "{" + entry + "}"; };
  struct Case {
    std::string content;
    const char *message;
  };
  const std::string full = file_bytes(good_header, good_data);
  const Case cases[] = {
      {"", "file is 0 bytes, too short for the 8-byte header length"},
      {full.substr(0, 5), "too short"},
      {full.substr(0, 20), "runs past the end of the file"},
      {full.substr(0, full.size() - 1), "run past the data section (7 bytes): truncated?"},
      {full + "xx", "data section is 10 bytes but the tensors cover 8"},
      {le64(uint64_t(1) << 40) + good_header, "header length 1099511627776 is not sane"},
      {le64(0), "header length 0 is not sane"},
      {file_bytes("[1,2,3]", ""), "header does not start with '{'"},
      {file_bytes(R"({"a":{"dtype":"F32",)", good_data), "bad header: JSON error at byte"},
      {file_bytes(R"({"a":1} x)", ""), "unexpected text after the JSON value"},
      {file_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{}})", good_data),
       "duplicate key \"a\""},
      {file_bytes(with(R"("a":{"dtype":"F16","shape":[4],"data_offsets":[0,8]})"), good_data),
       "tensor \"a\" has dtype F16; only F32 is supported"},
      {file_bytes(with(R"("a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]})"), good_data),
       "only F32"},
      {file_bytes(with(R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,80]})"), good_data),
       "but data_offsets span 80 bytes"},
      {file_bytes(with(R"("a":{"dtype":"F32","shape":[20],"data_offsets":[0,80]})"), good_data),
       "tensor a data_offsets [0,80] run past the data section (8 bytes)"},
      {file_bytes(with(R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]})"), good_data),
       "end 0 is before begin 8"},
      {file_bytes(with(R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]})"),
                  good_data),
       "overlap the previous tensor"},
      {file_bytes(with(R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]})"), good_data),
       "starts at 4, leaving a hole after byte 0"},
      {file_bytes(with(R"("a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]})"), good_data),
       "must be a non-negative integer, got -2"},
      {file_bytes(with(R"("a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]})"), good_data),
       "must be a non-negative integer, got 2.0"},
      {file_bytes(with(R"("a":{"dtype":"F32","shape":[2]})"), good_data),
       "needs dtype, shape and data_offsets"},
      {file_bytes(with(R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1})"), good_data),
       "unknown field \"x\""},
      {file_bytes(with(R"("a":{"dtype":"F32","shape":[99999999999,99999999999,99999999999],)"
                       R"("data_offsets":[0,8]})"),
                  good_data),
       "is too large"},
      {file_bytes(with(R"("__metadata__":{"step":3})"), ""),
       "__metadata__ value \"step\" must be a string, got a number"},
      {file_bytes(with(R"("a":[1])"), ""), "tensor \"a\" must be an object"},
      {file_bytes("{\"a\":\"x\ty\"}", ""), "control character inside a string"},
      {file_bytes(R"({"a":"\ud800"})", ""), "unpaired surrogate"},
      {file_bytes(std::string(70, '[') + std::string(70, ']'), ""), "header does not start"},
      {file_bytes("{\"a\":" + std::string(70, '[') + std::string(70, ']') + "}", ""),
       "nesting deeper than 64"},
  };
  for (const Case &c : cases) {
    std::string message = decode_error(c.content);
    EXPECT_EQ(message.rfind("bad.safetensors: ", 0), 0u) << message;
    EXPECT_NE(message.find(c.message), std::string::npos)
        << "message: " << message << "\nexpected: " << c.message;
  }
}

TEST(Safetensors, RandomDamageNeverCrashes) {
  TensorFile file;
  file.tensors.push_back({"conv1.weight", {2, 1, 2, 2}, random_floats(8, 5)});
  file.tensors.push_back({"conv1.bias", {2}, random_floats(2, 6)});
  file.metadata["step"] = "12";
  const std::string good = encode_safetensors(file);
  for (size_t cut = 0; cut < good.size(); ++cut)
    EXPECT_THROW(decode_safetensors(good.substr(0, cut), "cut"), SafetensorsError) << cut;
  std::mt19937 gen(3);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string damaged = good;
    size_t at = gen() % damaged.size();
    damaged[at] = char(gen() & 0xFF);
    try {
      decode_safetensors(damaged, "damaged");  // damage in the data or padding reads fine
    } catch (const SafetensorsError &) {
    }
  }
}

TEST(Safetensors, RefusesInconsistentTensorsOnWrite) {
  TensorFile file;
  file.tensors.push_back({"a", {2, 3}, std::vector<float>(5)});
  EXPECT_THROW(encode_safetensors(file), SafetensorsError);
  file.tensors[0].values.resize(6);
  file.tensors.push_back(file.tensors[0]);
  EXPECT_THROW(encode_safetensors(file), SafetensorsError);  // name twice
  file.tensors.pop_back();
  file.tensors.push_back({"__metadata__", {}, {1.0f}});
  EXPECT_THROW(encode_safetensors(file), SafetensorsError);
}

TEST(Safetensors, MissingFileNamesIt) {
  ScratchDir dir;
  try {
    read_safetensors(dir.file("absent.safetensors"));
    FAIL() << "no error";
  } catch (const SafetensorsError &e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("absent.safetensors") + ": missing"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(write_safetensors(dir.file("no/such/dir/x.safetensors"), TensorFile{}),
               SafetensorsError);
}

TensorFile file_with_value(float x, size_t n) {
  TensorFile file;
  file.tensors.push_back({"w", {int64_t(n)}, std::vector<float>(n, x)});
  return file;
}

// A write that fails half way (the file size limit stops it, as a full disk would) leaves the
// previous file whole and no temporary behind.
TEST(Safetensors, FailedWriteKeepsThePreviousFile) {
  ScratchDir dir;
  std::string path = dir.file("ckpt.safetensors");
  write_safetensors(path, file_with_value(1.0f, 16));
  const std::string before = read_raw(path);

  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    write_safetensors(path, file_with_value(2.0f, 100000));
  } catch (const SafetensorsError &e) {
    message = e.what();
  }
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_NE(message.find("cannot write " + path + ".tmp."), std::string::npos) << message;
  EXPECT_EQ(read_raw(path), before);
  EXPECT_EQ(read_safetensors(path).tensors[0].values[0], 1.0f);
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"ckpt.safetensors"});

  // With the limit lifted the same write replaces it.
  write_safetensors(path, file_with_value(2.0f, 100000));
  EXPECT_EQ(read_safetensors(path).tensors[0].values[99999], 2.0f);
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"ckpt.safetensors"});
}

// When the final rename fails (here: a folder stands at the path) the temporary is removed.
TEST(Safetensors, FailedRenameLeavesNoTemporary) {
  ScratchDir dir;
  std::string path = dir.file("taken");
  std::filesystem::create_directory(path);
  write_raw(dir.file("taken/keep"), "x");
  try {
    write_safetensors(path, file_with_value(1.0f, 4));
    FAIL() << "no error";
  } catch (const SafetensorsError &e) {
    EXPECT_NE(std::string(e.what()).find("cannot rename"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"taken"});
  EXPECT_EQ(read_raw(dir.file("taken/keep")), "x");
}

}  // namespace
}  // namespace starcnn
