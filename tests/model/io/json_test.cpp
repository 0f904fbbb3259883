// The small JSON parser and writer against literal JSON texts.
#include "model/io/json.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(parse_error("{\"k\": 1, \"k\": 2}"), "JSON error at byte 9: duplicate key \"k\"");
}

}  // namespace
}  // namespace starcnn::json
