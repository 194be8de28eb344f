#include "util/model_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <cstdint>

namespace tightfit::model_text {
namespace {

// The length of the well-formed UTF-8 sequence starting at text[i] (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF), or 0 when the byte there starts none.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  const unsigned b0 = byte(i);
  const auto continuation = [&](std::size_t k, unsigned low = 0x80, unsigned high = 0xbf) {
    return byte(k) >= low && byte(k) <= high;
  };
  if (b0 < 0x80) return 1;
  if (b0 >= 0xc2 && b0 <= 0xdf) return continuation(i + 1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const unsigned low = b0 == 0xe0 ? 0xa0 : 0x80, high = b0 == 0xed ? 0x9f : 0xbf;
    return continuation(i + 1, low, high) && continuation(i + 2) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const unsigned low = b0 == 0xf0 ? 0x90 : 0x80, high = b0 == 0xf4 ? 0x8f : 0xbf;
    return continuation(i + 1, low, high) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
  }
  return 0;
}

std::string hex_byte(char c) { return fmt::format("\\x{:02x}", static_cast<unsigned char>(c)); }

bool printable_ascii(char c) { return c >= 0x20 && c < 0x7f; }

// C++20's keywords and alternative tokens, and the namespaces the generated code itself uses.
constexpr std::string_view kReserved[] = {
    "alignas",     "alignof",   "and",        "and_eq",    "asm",      "auto",         "bitand",
    "bitor",       "bool",      "break",      "case",      "catch",    "char",         "char8_t",
    "char16_t",    "char32_t",  "class",      "compl",     "concept",  "const",        "consteval",
    "constexpr",   "constinit", "const_cast", "continue",  "co_await", "co_return",    "co_yield",
    "decltype",    "default",   "delete",     "do",        "double",   "dynamic_cast", "else",
    "enum",        "explicit",  "export",     "extern",    "false",    "float",        "for",
    "friend",      "goto",      "if",         "inline",    "int",      "long",         "mutable",
    "namespace",   "new",       "noexcept",   "not",       "not_eq",   "nullptr",      "operator",
    "or",          "or_eq",     "private",    "protected", "public",   "register",     "reinterpret_cast",
    "requires",    "return",    "short",      "signed",    "sizeof",   "static",       "static_assert",
    "static_cast", "struct",    "switch",     "template",  "this",     "thread_local", "throw",
    "true",        "try",       "typedef",    "typeid",    "typename", "union",        "unsigned",
    "using",       "virtual",   "void",       "volatile",  "wchar_t",  "while",        "xor",
    "xor_eq",      "std",       "tightfit",   "final",     "override", "import",       "module"};

}  // namespace

std::string cpp_comment(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i], before = i ? text[i - 1] : '\0';
    // A backslash ends a line splice at the line's end, "??/" is one in older dialects (and
    // -Wtrigraphs warns on it), "*/" and "/*" matter if the comment is ever a block comment.
    const bool special =
        c == '\\' || (c == '?' && before == '?') || (c == '/' && before == '*') || (c == '*' && before == '/');
    out += printable_ascii(c) && !special ? std::string(1, c) : hex_byte(c);
  }
  return out;
}

std::string cpp_string(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '\\' || (c == '?' && i && text[i - 1] == '?')) {
      out += '\\';
      out += c;
    } else if (printable_ascii(c)) {
      out += c;
    } else {
      // Three octal digits always: a following digit never joins the escape.
      out += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
    }
  }
  return out;
}

bool is_cpp_keyword(std::string_view word) {
  return std::find(std::begin(kReserved), std::end(kReserved), word) != std::end(kReserved);
}

std::string identifier_characters(std::string_view text) {
  std::string id;
  for (char c : text) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return id;
}

std::string cpp_identifier(std::string_view text) {
  std::string id = identifier_characters(text);
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "model_" + id;
  if (is_cpp_keyword(id)) id += '_';
  return id;
}

namespace {

// `text` with every control character (C0, DEL, C1), U+FFFE, U+FFFF and every byte outside a
// well-formed UTF-8 sequence as \xNN; tab, line feed and carriage return too unless `keep_lines`.
std::string visible(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
    // C0 and C1 controls and DEL drive terminals; U+FFFE and U+FFFF are not characters in XML.
    const bool line = text[i] == '\t' || text[i] == '\n' || text[i] == '\r';
    const bool control = (n == 1 && !printable_ascii(text[i]) && !(keep_lines && line)) ||
                         (n == 2 && byte(0) == 0xc2 && byte(1) < 0xa0) ||
                         (n == 3 && byte(0) == 0xef && byte(1) == 0xbf && byte(2) >= 0xbe);
    if (n == 0 || control) {
      for (std::size_t k = 0; k < std::max<std::size_t>(n, 1); ++k) out += hex_byte(text[i + k]);
      i += std::max<std::size_t>(n, 1);
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

// `text` with each byte outside a well-formed UTF-8 sequence as U+FFFD, as nlohmann::json's
// error_handler_t::replace writes it.
std::string valid_utf8(std::string_view text) {
  std::string valid;
  valid.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    valid.append(n == 0 ? std::string_view("\xef\xbf\xbd") : text.substr(i, n));
    i += std::max<std::size_t>(n, 1);
  }
  return valid;
}

}  // namespace

std::string shown(std::string_view text) { return visible(text, false); }

std::string xml(std::string_view text) {
  std::string out;
  for (const char c : visible(text, true)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string csv_field(std::string_view text) {
  std::string out;
  for (const char c : shown(text)) out += c == ',' ? std::string("\\x2c") : std::string(1, c);
  return out;
}

void json_strings(nlohmann::json& doc) {
  if (doc.is_string()) {
    std::string& text = doc.get_ref<std::string&>();
    text = valid_utf8(text);
  } else if (doc.is_array()) {
    for (auto& item : doc) json_strings(item);
  } else if (doc.is_object()) {
    // Keys too: a firmware's lines are keyed by what it printed (`tightfit firmware-lines`).
    nlohmann::json valid = nlohmann::json::object();
    for (auto& [key, value] : doc.items()) {
      json_strings(value);
      valid[valid_utf8(key)] = std::move(value);
    }
    doc = std::move(valid);
  }
}

}  // namespace tightfit::model_text
