// A small JSON value with a strict parser and a writer: enough for safetensors headers and
// checkpoint metadata. Parse errors say what is wrong and at which byte.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace starcnn::json {

struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Kind { null, boolean, number, string, array, object };

struct Value {
  Kind kind = Kind::null;
  bool boolean = false;
  std::string text;          // a string's contents, or a number's literal as written
  std::vector<Value> items;  // array
  std::vector<std::pair<std::string, Value>> members;  // object, in file order, keys unique

  // The member named key, or nullptr (objects only).
  const Value *find(const std::string &key) const;
};

const char *kind_name(Kind kind);

// Parses one JSON document (surrounding whitespace allowed). Rejects duplicate object keys,
// nesting deeper than 64 and anything RFC 8259 does not allow.
Value parse(const std::string &text);

// A number that is a non-negative integer literal (no fraction, no exponent) up to 2^53;
// `what` names the value in the error.
uint64_t to_uint(const Value &value, const std::string &what);
double to_double(const Value &value, const std::string &what);

// `text` as a quoted JSON string (UTF-8 passes through; quotes, backslashes and control
// characters are escaped).
std::string quote(const std::string &text);
// The shortest decimal that reads back as the same float.
std::string format_float(float x);

}  // namespace starcnn::json
