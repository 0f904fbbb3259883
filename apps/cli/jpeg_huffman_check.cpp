#include "apps/cli/jpeg_huffman_check.h"

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

}  // namespace

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

}  // namespace starcnn
