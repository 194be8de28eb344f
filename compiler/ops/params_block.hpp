// A parameter block's initializer, written from the block's field list (runtime/include/tightfit/
// params.hpp): ParamsText<P> holds the C++ text of each field of block P in a member of the
// field's name, so an emission fills each field by name, and initializer() writes them in the
// list's order, the order the struct is declared in. The bytes a block takes on the target are
// counted from the same list.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <tightfit/integer_kernels.hpp>
#include <tightfit/params.hpp>
#include <type_traits>

#include "error.hpp"

namespace tightfit::emit {

// A float32 constant as C++ source: exact hexadecimal; infinities and NaN (a Clip's open bound,
// a model's constant) as the compiler builtins, which freestanding code has without <cmath>.
inline std::string float_literal(float f) {
  if (f != f) return "__builtin_nanf(\"\")";
  if (f > 3.4028235e38f) return "__builtin_inff()";
  if (f < -3.4028235e38f) return "-__builtin_inff()";
  return fmt::format("{:a}f", f);
}

// The text of the fields of parameter block P, one std::string member per field of its list.
template <typename P>
struct ParamsText;

// The text of one field's value, by the field's type. A pointer field names a constant array,
// which only the emission knows: it fills that member itself.
inline std::string literal(std::int32_t v) { return fmt::format("{}", v); }
inline std::string literal(float v) { return float_literal(v); }
inline std::string literal(const Int32x4& v) { return fmt::format("{{{},{},{},{}}}", v[0], v[1], v[2], v[3]); }
inline std::string literal(BroadcastForm form) {
  static const char* const kForms[] = {"kElementwise", "kScalarA", "kScalarB"};
  return std::string("tightfit::BroadcastForm::") + kForms[static_cast<int>(form)];
}
template <typename T>
std::string literal(T* const&) {  // by reference: an array field is no pointer here
  return "";                      // left unfilled
}
inline std::string literal(const QuantizedMultiplier& m);
inline std::string literal(const BinaryShape& s);

// Bytes of a field of type T on the 32-bit target: its size on the host, a pointer's 4.
template <typename T>
constexpr std::uint64_t target_bytes() {
  return std::is_pointer_v<T> ? 4 : sizeof(T);
}

#define TIGHTFIT_TEXT_MEMBER(type, name) std::string name;
#define TIGHTFIT_TEXT_OF(type, name) text.name = literal(block.name);
#define TIGHTFIT_TEXT_JOIN(type, name) join(#name, name);
#define TIGHTFIT_TEXT_BYTES(type, name) +target_bytes<type>()
#define TIGHTFIT_PARAMS_TEXT(P, FIELDS)                                                                      \
  template <>                                                                                                \
  struct ParamsText<P> {                                                                                     \
    static constexpr const char* kType = #P;                                                                 \
    static constexpr std::uint64_t kTargetBytes = 0 FIELDS(TIGHTFIT_TEXT_BYTES);                             \
    FIELDS(TIGHTFIT_TEXT_MEMBER)                                                                             \
    static ParamsText of(const P& block) {                                                                   \
      ParamsText text;                                                                                       \
      FIELDS(TIGHTFIT_TEXT_OF)                                                                               \
      return text;                                                                                           \
    }                                                                                                        \
    /* The inside of the aggregate initializer: every field filled, in the list's order. */                  \
    std::string initializer() const {                                                                        \
      std::string fields;                                                                                    \
      auto join = [&fields](const char* name, const std::string& value) {                                    \
        if (value.empty()) throw Error(std::string("internal error: ") + kType + "::" + name + " unfilled"); \
        fields += (fields.empty() ? "" : ",") + value;                                                       \
      };                                                                                                     \
      FIELDS(TIGHTFIT_TEXT_JOIN)                                                                             \
      return fields;                                                                                         \
    }                                                                                                        \
  };
TIGHTFIT_PARAMS_BLOCKS(TIGHTFIT_PARAMS_TEXT)
TIGHTFIT_INTEGER_KERNEL_BLOCKS(TIGHTFIT_PARAMS_TEXT)
#undef TIGHTFIT_PARAMS_TEXT
#undef TIGHTFIT_TEXT_MEMBER
#undef TIGHTFIT_TEXT_OF
#undef TIGHTFIT_TEXT_JOIN
#undef TIGHTFIT_TEXT_BYTES

inline std::string literal(const QuantizedMultiplier& m) {
  return "{" + ParamsText<QuantizedMultiplier>::of(m).initializer() + "}";
}
inline std::string literal(const BinaryShape& s) { return "{" + ParamsText<BinaryShape>::of(s).initializer() + "}"; }

}  // namespace tightfit::emit
