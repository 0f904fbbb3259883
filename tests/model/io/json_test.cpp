// The small JSON parser and writer against literal JSON texts written by hand; what the writer
// writes also parses back through the parser to the values given.
#include "model/io/json.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>

namespace starcnn::json {
namespace {

std::string parse_error(const std::string &text) {
  try {
    parse(text);
  } catch (const ParseError &e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MiniJson, ParsesEveryKind) {
  Value v = parse(" {\"a\": [1, -2.5e3, true, false, null, \"s\"], \"b\": {}, \"c\": []}\n ");
  ASSERT_EQ(v.kind, Kind::object);
  ASSERT_EQ(v.members.size(), 3u);
  const Value *a = v.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items.size(), 6u);
  EXPECT_EQ(to_uint(a->items[0], "a[0]"), 1u);
  EXPECT_EQ(to_double(a->items[1], "a[1]"), -2500.0);
  EXPECT_TRUE(a->items[2].boolean);
  EXPECT_EQ(a->items[3].kind, Kind::boolean);
  EXPECT_EQ(a->items[4].kind, Kind::null);
  EXPECT_EQ(a->items[5].text, "s");
  EXPECT_EQ(v.find("b")->kind, Kind::object);
  EXPECT_EQ(v.find("c")->kind, Kind::array);
  EXPECT_EQ(v.find("d"), nullptr);
}

TEST(MiniJson, DecodesEscapes) {
  // \u00e9 is two UTF-8 bytes, \u20ac three, the surrogate pair U+1F600 four.
  EXPECT_EQ(parse(R"("\"\\\/\b\f\n\r\t\u00e9\u20ac\ud83d\ude00")").text,
            "\"\\/\b\f\n\r\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
}

TEST(MiniJson, QuotesForJson) {
  EXPECT_EQ(quote("a\"b\\c\nd\te\x01\xc3\xa9"), R"("a\"b\\c\nd\te\u0001)"
                                                "\xc3\xa9\"");
  std::string all;
  for (int c = 1; c < 128; ++c) all += char(c);
  EXPECT_EQ(parse(quote(all)).text, all);
}

TEST(MiniJson, FormatsFloatsShortAndExact) {
  EXPECT_EQ(format_float(0.1307f), "0.1307");
  EXPECT_EQ(format_float(2.0f), "2");
  EXPECT_EQ(format_float(-1e-30f), "-1e-30");
  float third = 1.0f / 3.0f;
  EXPECT_EQ(std::strtof(format_float(third).c_str(), nullptr), third);
}

TEST(MiniJson, IntegersAreChecked) {
  EXPECT_EQ(to_uint(parse("9007199254740992"), "n"), uint64_t(1) << 53);
  EXPECT_THROW(to_uint(parse("9007199254740993"), "n"), ParseError);
  EXPECT_THROW(to_uint(parse("1e3"), "n"), ParseError);
  EXPECT_THROW(to_uint(parse("-1"), "n"), ParseError);
  EXPECT_THROW(to_uint(parse("\"1\""), "n"), ParseError);
  EXPECT_THROW(to_double(parse("1e999"), "x"), ParseError);
}

TEST(MiniJson, MalformedTextIsRefused) {
  const char *bad[] = {"",      "{",    "{\"a\"}",    "{\"a\":1,}",  "[1,]",    "[1 2]",
                       "01",    "1.",   ".5",         "-",           "1e",      "+1",
                       "tru",   "nul",  "'a'",        "\"a",         "\"\\x\"", "\"\\u12g4\"",
                       "{a:1}", "[1]]", "{\"a\":1}}", "\"\\udc00\"", "NaN",     "Infinity"};
  for (const char *text : bad)
    EXPECT_NE(parse_error(text).find("JSON error at byte"), std::string::npos) << text;
  EXPECT_EQ(parse_error("[1, 2, x]"), "JSON error at byte 7: expected a value");
  // Latin-1, a truncated sequence, an overlong form, an encoded surrogate: not UTF-8.
  for (const char *text : {"\"caf\xe9\"", "\"\xe2\x82\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\""})
    EXPECT_NE(parse_error(text).find("invalid UTF-8 inside a string"), std::string::npos) << text;
  EXPECT_EQ(parse("\"\xe2\x82\xac\"").text, "\xe2\x82\xac");
  EXPECT_EQ(parse_error("{\"k\": 1, \"k\": 2}"), "JSON error at byte 9: duplicate key \"k\"");
}

TEST(JsonWriter, EscapesEveryControlCharacterQuoteAndBackslash) {
  EXPECT_EQ(quote("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(quote(std::string("\0\x1f\x7f", 3)), R"("\u0000\u001f)"
                                                 "\x7f\"");
  EXPECT_EQ(quote(R"(say "hi" \ C:\dir)"), R"("say \"hi\" \\ C:\\dir")");
  for (int c = 0; c < 0x20; ++c) {
    const std::string text(1, char(c));
    const std::string quoted = quote(text);
    for (char q : quoted.substr(1)) EXPECT_GE(static_cast<unsigned char>(q), 0x20) << c;
    EXPECT_EQ(parse(quoted).text, text) << c;
  }
}

TEST(JsonWriter, PassesUtf8ThroughAndReplacesInvalidBytes) {
  const std::string utf8 = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";  // e-acute, euro sign, U+1F600
  EXPECT_EQ(quote(utf8), "\"" + utf8 + "\"");
  EXPECT_EQ(parse(quote(utf8)).text, utf8);
  // A lone continuation byte, a Latin-1 e-acute, a truncated euro sign, an overlong '/', an
  // encoded surrogate and a code point above U+10FFFF: each invalid byte becomes U+FFFD.
  EXPECT_EQ(quote("a\x80"
                  "b"),
            R"("a\ufffdb")");
  EXPECT_EQ(quote("caf\xe9"), R"("caf\ufffd")");
  EXPECT_EQ(quote("\xe2\x82"), R"("\ufffd\ufffd")");
  EXPECT_EQ(quote("\xc0\xaf"), R"("\ufffd\ufffd")");
  EXPECT_EQ(quote("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");
  EXPECT_EQ(quote("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");
  EXPECT_EQ(parse(quote("caf\xe9")).text, "caf\xef\xbf\xbd");
}

TEST(JsonWriter, WritesNonFiniteNumbersAsNull) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Object().number("a", nan).fixed("b", inf, 3).number("c", -inf).text(),
            R"({"a": null, "b": null, "c": null})");
  EXPECT_EQ(Array().number(nan).fixed(-inf, 1).raw(format_float(float(nan))).text(),
            "[null, null, null]");
  EXPECT_EQ(format_float(std::numeric_limits<float>::infinity()), "null");
}

TEST(JsonWriter, WritesNumbersExactlyOrWithTheDecimalsAsked) {
  EXPECT_EQ(Object().number("x", 0.1).number("y", 1e300).number("z", -2.0).text(),
            R"({"x": 0.1, "y": 1e+300, "z": -2})");
  EXPECT_EQ(Object().fixed("loss", 0.1234567, 6).fixed("s", 2.0, 1).text(),
            R"({"loss": 0.123457, "s": 2.0})");
  const double third = 1.0 / 3.0;
  EXPECT_EQ(std::strtod(format_number(third).c_str(), nullptr), third);
}

TEST(JsonWriter, WhatItWritesParsesBackToTheValuesGiven) {
  const std::string weird = "a\"b\\c\n\x01\xc3\xa9";
  const std::string text = Object()
                               .string(weird, weird)
                               .integer("n", int64_t(-9007199254740991))
                               .integer("u", uint64_t(9007199254740992u))
                               .boolean("yes", true)
                               .boolean("no", false)
                               .null("none")
                               .string_or_null("unset", nullptr)
                               .object("inner", Object().fixed("x", 1.5, 2))
                               .array("list", Array().number(0.25).string("s").raw("[]"))
                               .object("empty", Object())
                               .text();
  const Value v = parse(text);
  ASSERT_EQ(v.members.size(), 10u);
  EXPECT_EQ(v.members[0].first, weird);
  EXPECT_EQ(v.members[0].second.text, weird);
  EXPECT_EQ(v.find("n")->text, "-9007199254740991");
  EXPECT_EQ(to_uint(*v.find("u"), "u"), uint64_t(1) << 53);
  EXPECT_TRUE(v.find("yes")->boolean);
  EXPECT_EQ(v.find("no")->kind, Kind::boolean);
  EXPECT_FALSE(v.find("no")->boolean);
  EXPECT_EQ(v.find("none")->kind, Kind::null);
  EXPECT_EQ(v.find("unset")->kind, Kind::null);
  EXPECT_EQ(to_double(*v.find("inner")->find("x"), "x"), 1.5);
  const Value *list = v.find("list");
  ASSERT_EQ(list->items.size(), 3u);
  EXPECT_EQ(to_double(list->items[0], "list[0]"), 0.25);
  EXPECT_EQ(list->items[1].text, "s");
  EXPECT_EQ(list->items[2].kind, Kind::array);
  EXPECT_EQ(v.find("empty")->kind, Kind::object);
  EXPECT_EQ(v.find("empty")->members.size(), 0u);
}

// 400,000 keys took over a minute when each key was compared with every earlier one.
TEST(MiniJson, DuplicateKeyCheckIsLinear) {
  std::string text = "{";
  const int keys = 400000;
  for (int i = 0; i < keys; ++i) text += "\"k" + std::to_string(i) + "\": 0, ";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(parse(text + "\"last\": 1}").members.size(), size_t(keys) + 1);
  EXPECT_NE(parse_error(text + "\"k399999\": 1}").find("duplicate key \"k399999\""),
            std::string::npos);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 60.0) << "two parses of " << keys << " keys";
}

}  // namespace
}  // namespace starcnn::json
