// starcnn's one JSON module: a small value with a strict parser (safetensors headers, checkpoint
// metadata; parse errors say what is wrong and at which byte) and the writer every JSON line and
// file goes through (Object, Array): strings escaped, non-finite numbers written as null.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
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
// nesting deeper than 64 and anything RFC 8259 does not allow (invalid UTF-8 included).
Value parse(const std::string &text);

// A number that is a non-negative integer literal (no fraction, no exponent) up to 2^53;
// `what` names the value in the error.
uint64_t to_uint(const Value &value, const std::string &what);
double to_double(const Value &value, const std::string &what);

// `text` as a quoted JSON string: UTF-8 passes through; quotes, backslashes and every control
// character are escaped; a byte that is not part of valid UTF-8 becomes U+FFFD, so the result is
// valid JSON whatever the bytes (a file name in another encoding, say).
std::string quote(const std::string &text);
// The shortest decimal that reads back as the same float; null when x is not finite.
std::string format_float(float x);
// The shortest decimal that reads back as the same double; null when x is not finite.
std::string format_number(double x);
// x with `decimals` digits after the point; null when x is not finite.
std::string format_fixed(double x, int decimals);

// Writers of one JSON object or array, member by member, in the order given:
//   json::Object().string("network", name).fixed("loss", loss, 6).integer("steps", n).text()
// gives {"network": "lenet", "loss": 0.123457, "steps": 10}.
class Array;

class Object {
 public:
  // A value already written as JSON (another Object's or Array's text, a format_* result).
  Object &raw(const std::string &key, const std::string &json);
  Object &string(const std::string &key, const std::string &text) { return raw(key, quote(text)); }
  // A string, or null when text is nullptr (an unset environment variable, say).
  Object &string_or_null(const std::string &key, const char *text) {
    return raw(key, text ? quote(text) : "null");
  }
  Object &number(const std::string &key, double x) { return raw(key, format_number(x)); }
  Object &fixed(const std::string &key, double x, int decimals) {
    return raw(key, format_fixed(x, decimals));
  }
  template <typename Int>
  Object &integer(const std::string &key, Int n) {
    static_assert(std::is_integral_v<Int> && !std::is_same_v<Int, bool>, "an integer type");
    return raw(key, std::to_string(n));
  }
  Object &boolean(const std::string &key, bool b) { return raw(key, b ? "true" : "false"); }
  Object &null(const std::string &key) { return raw(key, "null"); }
  Object &object(const std::string &key, const Object &value) { return raw(key, value.text()); }
  Object &array(const std::string &key, const Array &value);
  std::string text() const { return "{" + body_ + "}"; }

 private:
  std::string body_;  // the members so far, without the braces
};

class Array {
 public:
  Array &raw(const std::string &json);
  Array &string(const std::string &text) { return raw(quote(text)); }
  Array &number(double x) { return raw(format_number(x)); }
  Array &fixed(double x, int decimals) { return raw(format_fixed(x, decimals)); }
  std::string text() const { return "[" + body_ + "]"; }

 private:
  std::string body_;
};

}  // namespace starcnn::json
