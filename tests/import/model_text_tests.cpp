// The escapes of compiler/util/model_text.hpp, one per destination of a model's strings
// (docs/hardening.md, "Model strings").
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "util/model_text.hpp"

using namespace tightfit::model_text;

TEST_CASE("a C++ comment holds no line break, comment end, trigraph, line splice or non-ASCII byte") {
  CHECK(cpp_comment("node */ evil \n") == "node *\\x2f evil \\x0a");
  CHECK(cpp_comment("x\nstatic int hook;//") == "x\\x0astatic int hook;//");
  CHECK(cpp_comment("a?\?/b/*c") == "a?\\x3f/b/\\x2ac");
  CHECK(cpp_comment("ends in \\") == "ends in \\x5c");
  CHECK(cpp_comment("\xe2\x80\xae\xff") == "\\xe2\\x80\\xae\\xff");
  CHECK(cpp_comment("QLinearConv_1 (QLinearConv)") == "QLinearConv_1 (QLinearConv)");
}

TEST_CASE("a C++ string literal keeps the exact bytes as escapes no digit can extend") {
  CHECK(cpp_string("say \"hi\" \\") == "say \\\"hi\\\" \\\\");
  CHECK(cpp_string("?\?=") == "?\\?=");
  CHECK(cpp_string(std::string("\x01"
                               "7\xff\n",
                               4)) == "\\0017\\377\\012");
  CHECK(cpp_string("input_1") == "input_1");
}

TEST_CASE("a C++ identifier is letters, digits and '_', never a keyword or the generated code's namespaces") {
  CHECK(cpp_identifier("dscnn.qop") == "dscnn_qop");
  CHECK(cpp_identifier("3d") == "model_3d");
  CHECK(cpp_identifier("") == "model_");
  CHECK(cpp_identifier("class") == "class_");
  CHECK(cpp_identifier("tightfit") == "tightfit_");
  CHECK(is_cpp_keyword("co_await"));
  CHECK_FALSE(is_cpp_keyword("model"));
}

TEST_CASE("terminal text shows control characters and invalid UTF-8 as \\xNN and passes the rest") {
  CHECK(shown("\x1b[2J\r\n\t\x7f") == "\\x1b[2J\\x0d\\x0a\\x09\\x7f");
  CHECK(shown("caf\xc3\xa9 \xe6\x97\xa5") == "caf\xc3\xa9 \xe6\x97\xa5");
  CHECK(shown("\xc2\x9b"
              "1m") == "\\xc2\\x9b1m");                                          // C1 CSI
  CHECK(shown("\xff\xc0\xaf\xed\xa0\x80") == "\\xff\\xc0\\xaf\\xed\\xa0\\x80");  // invalid, overlong, surrogate
  CHECK(shown("\xef\xbf\xbe") == "\\xef\\xbf\\xbe");                             // U+FFFE: no character in XML
  CHECK(shown(shown("\x01\xff")) == shown("\x01\xff"));
}

TEST_CASE("XML text keeps line breaks, shows other control characters and escapes markup") {
  CHECK(xml("<script>a & 'b'\n\x01</script>") == "&lt;script&gt;a &amp; &#39;b&#39;\n\\x01&lt;/script&gt;");
}

TEST_CASE("JSON strings and keys become valid UTF-8, invalid bytes replaced by U+FFFD") {
  nlohmann::json doc = {{"node",
                         "a\xff"
                         "b"},
                        {"list", {"ok", "\xc0"}},
                        {"n", 3},
                        {"key\xff", "v"}};
  json_strings(doc);
  CHECK(doc["node"] ==
        "a\xef\xbf\xbd"
        "b");
  CHECK(doc["list"][1] == "\xef\xbf\xbd");
  CHECK(doc["n"] == 3);
  CHECK(doc["key\xef\xbf\xbd"] == "v");
  CHECK_NOTHROW(doc.dump());
}

TEST_CASE("a planner CSV field stays one field on one line") {
  CHECK(csv_field("a,b\nc") == "a\\x2cb\\x0ac");
  CHECK(csv_field("conv0") == "conv0");
}
