// Strings taken from a model are untrusted: node, tensor and graph names, the operators' names,
// and the file names given on the command line are arbitrary bytes (a newline, "*/", a quote, an
// escape sequence for the terminal, invalid UTF-8). Each destination has one function here, and
// nothing writes such a string anywhere else (docs/hardening.md, "Model strings"):
//
//   generated C++ comment    cpp_comment     printable ASCII only; no line break, no "*/" or "/*",
//                                            no trigraph, no line splice; other bytes as \xNN
//   generated C++ literal    cpp_string      the exact bytes, as C escapes
//   generated C++ name       cpp_identifier  letters, digits, '_'; never a keyword
//   terminal, error lines    shown           valid UTF-8 with no control character; others as \xNN
//   XML, SVG, HTML           xml             as shown but keeping tab and line breaks (which XML
//                                            allows), then & < > " ' as entities
//   JSON                     json_strings    every string and key valid UTF-8 (invalid bytes as
//                                            U+FFFD)
//   planner CSV (--plan-csv) csv_field       as shown, and ',' as \x2c: one field on one line
//                                            (MiniMalloc's format has no quoting)
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace tightfit::model_text {

std::string cpp_comment(std::string_view text);
std::string cpp_string(std::string_view text);
std::string cpp_identifier(std::string_view text);
// Its characters only: every byte but a letter or digit as '_' (for a name behind a fixed prefix).
std::string identifier_characters(std::string_view text);
bool is_cpp_keyword(std::string_view word);
std::string shown(std::string_view text);
std::string xml(std::string_view text);
void json_strings(nlohmann::json& doc);
std::string csv_field(std::string_view text);

}  // namespace tightfit::model_text
