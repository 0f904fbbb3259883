#include "apps/cli/stb_input_check.h"

#include <algorithm>

namespace starcnn {
namespace {

constexpr uint8_t kMarker = 0xFF, kSoi = 0xD8, kEoi = 0xD9, kSos = 0xDA, kDht = 0xC4;

bool standalone(uint8_t marker) {  // markers without a length field
  return marker == kSoi || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7);
}

// The tables of one DHT segment's payload [begin, end): class/id byte, 16 counts, the symbols.
std::string check_dht(const std::vector<uint8_t> &b, size_t begin, size_t end) {
  size_t p = begin;
  while (p < end) {
    if (end - p < 17) return "a Huffman table (DHT) is cut short";
    unsigned codes = 0;
    for (size_t i = 1; i <= 16; ++i) codes += b[p + i];
    if (codes > 256)
      return "a Huffman table (DHT) claims " + std::to_string(codes) + " codes (256 at most)";
    if (end - p - 17 < codes) return "a Huffman table (DHT) is cut short";
    p += 17 + codes;
  }
  return {};
}

std::string jpeg_huffman_problem(const std::vector<uint8_t> &b) {
  // stb_image takes fill bytes before SOI, and between segments scans past any bytes to the next
  // marker: walk the file the same way, so that no DHT it would read escapes the check.
  size_t p = 0;
  if (b.empty() || b[0] != kMarker) return {};
  while (p + 1 < b.size() && b[p + 1] == kMarker) ++p;
  if (p + 1 >= b.size() || b[p + 1] != kSoi) return {};
  p += 2;
  while (p + 1 < b.size()) {
    if (b[p] != kMarker) {
      ++p;
      continue;
    }
    while (p + 1 < b.size() && b[p + 1] == kMarker) ++p;  // fill bytes
    if (p + 1 >= b.size()) return {};
    const uint8_t marker = b[p + 1];
    p += 2;
    if (marker == kEoi) return {};
    if (marker == 0 || standalone(marker)) continue;
    if (p + 2 > b.size()) return {};
    const size_t length = size_t(b[p]) << 8 | b[p + 1];
    if (marker == kDht) {
      // stb_image reads a table's 16 counts even where the segment's length says it has ended.
      std::string problem =
          check_dht(b, p + 2, std::min(b.size(), p + std::max<size_t>(length, 2)));
      if (!problem.empty()) return problem;
    }
    if (length < 2) continue;
    p += length;
    if (marker == kSos) {
      // Entropy-coded data up to the next marker: 0xFF is followed by 0 (a stuffed byte) or a
      // restart marker inside it; progressive files bring more DHT segments after it.
      while (p + 1 < b.size() &&
             !(b[p] == kMarker && b[p + 1] != 0 && !(b[p + 1] >= 0xD0 && b[p + 1] <= 0xD7)))
        ++p;
    }
  }
  return {};
}

// Every chunk (length, type, data, CRC) must fit in what is left of the file, up to IEND.
std::string png_chunk_problem(const std::vector<uint8_t> &b) {
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (b.size() < 8 || !std::equal(kSignature, kSignature + 8, b.begin())) return {};
  size_t p = 8;
  while (b.size() - p >= 8) {
    const size_t length =
        size_t(b[p]) << 24 | size_t(b[p + 1]) << 16 | size_t(b[p + 2]) << 8 | b[p + 3];
    const std::string type(b.begin() + long(p + 4), b.begin() + long(p + 8));
    if (length > b.size() - p - 8)
      return "chunk " + type + " claims " + std::to_string(length) + " bytes, the file has " +
             std::to_string(b.size() - p - 8) + " left";
    if (type == "IEND") return {};
    p += 8 + length + 4;  // the CRC may be missing at the very end: stb_image reports that
    if (p > b.size()) return {};
  }
  return {};
}

}  // namespace

std::string stb_input_problem(const std::vector<uint8_t> &bytes) {
  std::string problem = jpeg_huffman_problem(bytes);
  if (!problem.empty()) return "corrupt JPEG: " + problem;
  problem = png_chunk_problem(bytes);
  if (!problem.empty()) return "corrupt PNG: " + problem;
  return {};
}

}  // namespace starcnn
