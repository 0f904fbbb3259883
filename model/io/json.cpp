#include "model/io/json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_set>

namespace starcnn::json {

namespace {

constexpr int max_depth = 64;

// The length of the valid UTF-8 sequence starting at text[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when there is none.
size_t utf8_sequence_length(const std::string &text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned lead = byte(i);
  size_t length;
  unsigned low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return length;
}

class Parser {
 public:
  explicit Parser(const std::string &text) : s_(text) {}

  Value document() {
    skip_space();
    Value v = value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string &what) const {
    throw ParseError("JSON error at byte " + std::to_string(pos_) + ": " + what);
  }

  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }

  void skip_space() {
    while (!at_end() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  void expect(char c) {
    if (at_end()) fail(std::string("unexpected end, expected '") + c + "'");
    if (s_[pos_] != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  void literal(const char *word) {
    for (const char *p = word; *p; ++p) {
      if (peek() != *p) fail(std::string("invalid literal, expected '") + word + "'");
      ++pos_;
    }
  }

  Value value(int depth) {
    if (depth > max_depth) fail("nesting deeper than " + std::to_string(max_depth));
    if (at_end()) fail("unexpected end, expected a value");
    Value v;
    switch (s_[pos_]) {
      case '{':
        v = object(depth);
        break;
      case '[':
        v = array(depth);
        break;
      case '"':
        v.kind = Kind::string;
        v.text = string();
        break;
      case 't':
        literal("true");
        v.kind = Kind::boolean;
        v.boolean = true;
        break;
      case 'f':
        literal("false");
        v.kind = Kind::boolean;
        break;
      case 'n':
        literal("null");
        break;
      default:
        v.kind = Kind::number;
        v.text = number();
    }
    return v;
  }

  Value object(int depth) {
    Value v;
    v.kind = Kind::object;
    expect('{');
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return v;
    }
    std::unordered_set<std::string> keys;  // the duplicate check stays linear in the key count
    for (;;) {
      skip_space();
      if (peek() != '"') fail("expected a quoted key");
      size_t key_pos = pos_;
      std::string key = string();
      if (!keys.insert(key).second) {
        pos_ = key_pos;
        fail("duplicate key " + quote(key));
      }
      skip_space();
      expect(':');
      skip_space();
      Value member = value(depth + 1);
      v.members.emplace_back(std::move(key), std::move(member));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return v;
    }
  }

  Value array(int depth) {
    Value v;
    v.kind = Kind::array;
    expect('[');
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return v;
    }
    for (;;) {
      skip_space();
      v.items.push_back(value(depth + 1));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return v;
    }
  }

  unsigned hex4() {
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = peek();
      unsigned d;
      if (c >= '0' && c <= '9')
        d = unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        d = unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        d = unsigned(c - 'A' + 10);
      else
        fail("bad \\u escape");
      code = code * 16 + d;
      ++pos_;
    }
    return code;
  }

  static void append_utf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xC0 | (code >> 6));
      out += char(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += char(0xE0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    } else {
      out += char(0xF0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3F));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    }
  }

  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("control character inside a string");
      if (static_cast<unsigned char>(c) >= 0x80) {
        // RFC 8259: JSON text is UTF-8; what the writer could not write back is refused.
        const size_t length = utf8_sequence_length(s_, pos_);
        if (length == 0) fail("invalid UTF-8 inside a string");
        out.append(s_, pos_, length);
        pos_ += length;
        continue;
      }
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned code = hex4();
          if (code >= 0xD800 && code < 0xDC00) {
            if (peek() != '\\') fail("unpaired surrogate in \\u escape");
            ++pos_;
            if (peek() != 'u') fail("unpaired surrogate in \\u escape");
            ++pos_;
            unsigned low = hex4();
            if (low < 0xDC00 || low >= 0xE000) fail("unpaired surrogate in \\u escape");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          } else if (code >= 0xDC00 && code < 0xE000) {
            fail("unpaired surrogate in \\u escape");
          }
          append_utf8(out, code);
          break;
        }
        default:
          --pos_;
          fail(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  // Checks the RFC 8259 number grammar and returns the literal.
  std::string number() {
    size_t begin = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (is_digit(peek())) {
      while (is_digit(peek())) ++pos_;
    } else {
      fail("expected a value");
    }
    if (peek() == '.') {
      ++pos_;
      if (!is_digit(peek())) fail("expected a digit after '.'");
      while (is_digit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!is_digit(peek())) fail("expected a digit in the exponent");
      while (is_digit(peek())) ++pos_;
    }
    return s_.substr(begin, pos_ - begin);
  }

  const std::string &s_;
  size_t pos_ = 0;
};

}  // namespace

const Value *Value::find(const std::string &key) const {
  for (const auto &member : members)
    if (member.first == key) return &member.second;
  return nullptr;
}

const char *kind_name(Kind kind) {
  switch (kind) {
    case Kind::null:
      return "null";
    case Kind::boolean:
      return "a boolean";
    case Kind::number:
      return "a number";
    case Kind::string:
      return "a string";
    case Kind::array:
      return "an array";
    case Kind::object:
      return "an object";
  }
  return "?";
}

Value parse(const std::string &text) {
  return Parser(text).document();
}

uint64_t to_uint(const Value &value, const std::string &what) {
  if (value.kind != Kind::number)
    throw ParseError(what + " must be an integer, got " + kind_name(value.kind));
  const std::string &t = value.text;
  bool digits_only = !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
  if (!digits_only) throw ParseError(what + " must be a non-negative integer, got " + t);
  constexpr uint64_t limit = uint64_t(1) << 53;
  if (t.size() > 16) throw ParseError(what + " is too large: " + t);
  uint64_t n = 0;
  for (char c : t) n = n * 10 + uint64_t(c - '0');
  if (n > limit) throw ParseError(what + " is too large: " + t);
  return n;
}

double to_double(const Value &value, const std::string &what) {
  if (value.kind != Kind::number)
    throw ParseError(what + " must be a number, got " + kind_name(value.kind));
  double x = std::strtod(value.text.c_str(), nullptr);
  if (!std::isfinite(x)) throw ParseError(what + " is out of range: " + value.text);
  return x;
}

std::string quote(const std::string &text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
          out += buf;
        } else if (size_t length = utf8_sequence_length(text, i)) {
          out.append(text, i, length);
          i += length;
          continue;
        } else {
          out += "\\ufffd";
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string format_float(float x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, double(x));
    if (std::strtof(buf, nullptr) == x) break;
  }
  return buf;
}

std::string format_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

std::string format_fixed(double x, int decimals) {
  if (!std::isfinite(x)) return "null";
  // 1e308 with 17 decimals is 327 characters.
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(decimals, 0, 17), x);
  return buf;
}

Object &Object::raw(const std::string &key, const std::string &json) {
  body_ += (body_.empty() ? "" : ", ") + quote(key) + ": " + json;
  return *this;
}

Object &Object::array(const std::string &key, const Array &value) {
  return raw(key, value.text());
}

Array &Array::raw(const std::string &json) {
  body_ += (body_.empty() ? "" : ", ") + json;
  return *this;
}

}  // namespace starcnn::json
