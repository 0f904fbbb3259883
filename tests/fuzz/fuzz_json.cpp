// The JSON parser and writer: any text parses or gives a ParseError; any string the writer quotes
// parses back to itself when it is valid UTF-8 (else to itself with U+FFFD for the bad bytes,
// which quoting again keeps as they are); no written line holds a raw newline.
#include "model/io/json.h"

#include <cstdlib>

using namespace starcnn;

namespace {

void expect_round_trip(const std::string &text) {
  const std::string quoted = json::quote(text);
  if (quoted.find('\n') != std::string::npos) std::abort();
  const std::string back = json::parse(quoted).text;
  const bool replaced = quoted.find("\\ufffd") != std::string::npos;
  if (!replaced && back != text) std::abort();
  if (json::parse(json::quote(back)).text != back) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  try {
    const json::Value v = json::parse(text);
    if (v.kind == json::Kind::string) expect_round_trip(v.text);
    for (const auto &member : v.members) expect_round_trip(member.first);
  } catch (const json::ParseError &) {
  }
  expect_round_trip(text);
  const json::Value object = json::parse(json::Object().string(text, text).text());
  if (object.members.size() != 1) std::abort();
  return 0;
}
