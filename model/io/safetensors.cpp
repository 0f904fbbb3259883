#include "model/io/safetensors.h"

#include "model/io/atomic_file.h"
#include "model/io/json.h"
#include "model/io/regular_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_set>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.cpp copies floats as they lie in memory: it needs a little-endian host"
#endif

namespace starcnn {

namespace {

const char *const metadata_key = "__metadata__";

[[noreturn]] void fail(const std::string &source, const std::string &what) {
  throw SafetensorsError(source + ": " + what);
}

struct Entry {
  std::string name;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

std::vector<int64_t> read_shape(const json::Value &value, const std::string &what) {
  if (value.kind != json::Kind::array)
    throw json::ParseError(what + " must be an array, got " + json::kind_name(value.kind));
  std::vector<int64_t> shape;
  for (size_t i = 0; i < value.items.size(); ++i)
    shape.push_back(int64_t(json::to_uint(value.items[i], what + "[" + std::to_string(i) + "]")));
  return shape;
}

Entry read_entry(const std::string &name, const json::Value &value) {
  std::string what = "tensor " + json::quote(name);
  if (value.kind != json::Kind::object)
    throw json::ParseError(what + " must be an object, got " + json::kind_name(value.kind));
  const json::Value *dtype = value.find("dtype");
  const json::Value *shape = value.find("shape");
  const json::Value *offsets = value.find("data_offsets");
  if (!dtype || !shape || !offsets)
    throw json::ParseError(what + " needs dtype, shape and data_offsets");
  for (const auto &member : value.members)
    if (member.first != "dtype" && member.first != "shape" && member.first != "data_offsets")
      throw json::ParseError(what + " has an unknown field " + json::quote(member.first));
  if (dtype->kind != json::Kind::string) throw json::ParseError(what + " dtype must be a string");
  if (dtype->text != "F32")
    throw json::ParseError(what + " has dtype " + dtype->text + "; only F32 is supported");
  Entry entry;
  entry.name = name;
  entry.shape = read_shape(*shape, what + " shape");
  if (offsets->kind != json::Kind::array || offsets->items.size() != 2)
    throw json::ParseError(what + " data_offsets must be an array [begin, end]");
  entry.begin = json::to_uint(offsets->items[0], what + " data_offsets begin");
  entry.end = json::to_uint(offsets->items[1], what + " data_offsets end");
  if (entry.end < entry.begin)
    throw json::ParseError(what + " data_offsets end " + std::to_string(entry.end) +
                           " is before begin " + std::to_string(entry.begin));
  // Each dimension is below 2^53, but their product may overflow: check as we go.
  uint64_t bytes = 4;
  for (int64_t d : entry.shape) {
    if (d != 0 && bytes > (uint64_t(1) << 62) / uint64_t(d))
      throw json::ParseError(what + " shape " + shape_string(entry.shape) + " is too large");
    bytes *= uint64_t(d);
  }
  if (entry.end - entry.begin != bytes)
    throw json::ParseError(what + " has shape " + shape_string(entry.shape) + " (" +
                           std::to_string(bytes) + " bytes) but data_offsets span " +
                           std::to_string(entry.end - entry.begin) + " bytes");
  return entry;
}

}  // namespace

const NamedTensor *TensorFile::find(const std::string &name) const {
  for (const NamedTensor &t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::string shape_string(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

uint64_t element_count(const std::vector<int64_t> &shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(d);
  return n;
}

std::string encode_safetensors(const TensorFile &file) {
  json::Object header;
  if (!file.metadata.empty()) {
    json::Object metadata;
    for (const auto &[key, value] : file.metadata) metadata.string(key, value);
    header.object(metadata_key, metadata);
  }
  std::unordered_set<std::string> names;
  uint64_t offset = 0;
  for (const NamedTensor &t : file.tensors) {
    if (t.name == metadata_key) throw SafetensorsError("a tensor cannot be named __metadata__");
    if (!names.insert(t.name).second)
      throw SafetensorsError("tensor name " + t.name + " appears twice");
    for (int64_t d : t.shape)
      if (d < 0) throw SafetensorsError("tensor " + t.name + " has a negative dimension");
    if (element_count(t.shape) != t.values.size())
      throw SafetensorsError("tensor " + t.name + " has shape " + shape_string(t.shape) + " but " +
                             std::to_string(t.values.size()) + " values");
    const uint64_t end = offset + 4 * uint64_t(t.values.size());
    json::Array shape, offsets;
    for (int64_t d : t.shape) shape.raw(std::to_string(d));
    offsets.raw(std::to_string(offset)).raw(std::to_string(end));
    header.object(
        t.name,
        json::Object().string("dtype", "F32").array("shape", shape).array("data_offsets", offsets));
    offset = end;
  }
  std::string h = header.text();
  h.append((8 - h.size() % 8) % 8, ' ');

  std::string out;
  out.reserve(8 + h.size() + offset);
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out += char((n >> (8 * i)) & 0xFF);
  out += h;
  for (const NamedTensor &t : file.tensors)
    out.append(reinterpret_cast<const char *>(t.values.data()), 4 * t.values.size());
  return out;
}

TensorFile decode_safetensors(const std::string &bytes, const std::string &source) {
  if (bytes.size() < 8)
    fail(source, "file is " + std::to_string(bytes.size()) +
                     " bytes, too short for the 8-byte header length");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= uint64_t(static_cast<unsigned char>(bytes[size_t(i)])) << (8 * i);
  if (n < 2 || n > safetensors_max_header)
    fail(source, "header length " + std::to_string(n) + " is not sane (2 to " +
                     std::to_string(safetensors_max_header) + " bytes)");
  if (n > bytes.size() - 8)
    fail(source, "header length " + std::to_string(n) + " runs past the end of the file (" +
                     std::to_string(bytes.size()) + " bytes): truncated?");
  std::string header_text = bytes.substr(8, size_t(n));
  if (header_text[0] != '{') fail(source, "header does not start with '{'");

  TensorFile file;
  std::vector<Entry> entries;
  try {
    json::Value header = json::parse(header_text);
    if (header.kind != json::Kind::object) fail(source, "header is not a JSON object");
    for (const auto &[name, value] : header.members) {
      if (name == metadata_key) {
        if (value.kind != json::Kind::object)
          throw json::ParseError("__metadata__ must be an object");
        for (const auto &[key, text] : value.members) {
          if (text.kind != json::Kind::string)
            throw json::ParseError("__metadata__ value " + json::quote(key) +
                                   " must be a string, got " + json::kind_name(text.kind));
          file.metadata[key] = text.text;
        }
      } else {
        entries.push_back(read_entry(name, value));
      }
    }
  } catch (const json::ParseError &e) {
    fail(source, std::string("bad header: ") + e.what());
  }

  // The data must be covered exactly: sorted by begin, each tensor starts where the last ended.
  uint64_t data_size = bytes.size() - 8 - n;
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry &a, const Entry &b) { return a.begin < b.begin; });
  uint64_t expected = 0;
  for (const Entry &e : entries) {
    if (e.end > data_size)
      fail(source, "tensor " + e.name + " data_offsets [" + std::to_string(e.begin) + "," +
                       std::to_string(e.end) + "] run past the data section (" +
                       std::to_string(data_size) + " bytes): truncated?");
    if (e.begin < expected)
      fail(source, "tensor " + e.name + " data_offsets [" + std::to_string(e.begin) + "," +
                       std::to_string(e.end) + "] overlap the previous tensor");
    if (e.begin > expected)
      fail(source, "tensor " + e.name + " starts at " + std::to_string(e.begin) +
                       ", leaving a hole after byte " + std::to_string(expected));
    expected = e.end;
  }
  if (expected != data_size)
    fail(source, "data section is " + std::to_string(data_size) + " bytes but the tensors cover " +
                     std::to_string(expected));

  const char *data = bytes.data() + 8 + n;
  for (const Entry &e : entries) {
    NamedTensor t;
    t.name = e.name;
    t.shape = e.shape;
    t.values.resize(size_t((e.end - e.begin) / 4));
    if (!t.values.empty()) std::memcpy(t.values.data(), data + e.begin, size_t(e.end - e.begin));
    file.tensors.push_back(std::move(t));
  }
  return file;
}

void write_safetensors(const std::string &path, const TensorFile &file) {
  const std::string bytes = encode_safetensors(file);
  try {
    write_file_atomically(path, bytes);
  } catch (const AtomicFileError &e) {
    throw SafetensorsError(e.what());
  }
}

TensorFile read_safetensors(const std::string &path) {
  std::string bytes;
  try {
    // The file and the tensors decoded from it are in memory at once.
    bytes = read_regular_file(path, physical_memory_bytes() / 2, "a safetensors file");
  } catch (const FileError &e) {
    throw SafetensorsError(e.what());
  }
  return decode_safetensors(bytes, path);
}

}  // namespace starcnn
