// The parameter blocks the emitter writes (compiler/ops/params_block.hpp) against the runtime's
// structs: the generated code initializes each block positionally, so the order the emitter writes
// a block's fields in must be the order its struct declares them in. Both come from the block's
// field list (runtime/include/tightfit/params.hpp); these tests fail when a struct stops following
// its list, or the initializer stops following the struct's memory.
#define CATCH_CONFIG_MAIN
#include "ops/params_block.hpp"

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace {

using namespace tightfit;
using emit::ParamsText;

// Walks a struct's members in its field list's order: each must start where the one before
// ended (rounded up to its alignment), and the last end the struct.
struct LayoutWalk {
  std::size_t end = 0;
  bool has_pointer = false;

  void next(const char* name, std::size_t offset, std::size_t size, std::size_t align, bool pointer) {
    INFO("field " << name);
    CHECK(offset == (end + align - 1) / align * align);
    end = offset + size;
    has_pointer = has_pointer || pointer;
  }
};

// Fields whose text is their int32 values: a block made only of them reads back from its memory.
template <typename T>
constexpr bool kIntegerText = std::is_same_v<T, std::int32_t> || std::is_same_v<T, Int32x4> ||
                              std::is_same_v<T, QuantizedMultiplier> || std::is_same_v<T, BinaryShape>;

// The initializer's values without the braces of nested aggregates.
std::string flat(std::string text) {
  std::string out;
  for (char c : text)
    if (c != '{' && c != '}') out += c;
  return out;
}

}  // namespace

#define TIGHTFIT_WALK_FIELD(type, name) \
  walk.next(#name, offsetof(Block, name), sizeof(type), alignof(type), std::is_pointer_v<type>);
#define TIGHTFIT_CHECK_LAYOUT(P, FIELDS)                                       \
  SECTION(#P) {                                                                \
    using Block = P;                                                           \
    LayoutWalk walk;                                                           \
    FIELDS(TIGHTFIT_WALK_FIELD)                                                \
    CHECK((walk.end + alignof(P) - 1) / alignof(P) * alignof(P) == sizeof(P)); \
    if (!walk.has_pointer) CHECK(ParamsText<P>::kTargetBytes == sizeof(P));    \
  }

TEST_CASE("every parameter block's field list is its struct's members in declaration order, and all of them"){
    TIGHTFIT_PARAMS_BLOCKS(TIGHTFIT_CHECK_LAYOUT) TIGHTFIT_INTEGER_KERNEL_BLOCKS(TIGHTFIT_CHECK_LAYOUT)}
#define TIGHTFIT_INTEGER_TEXT(type, name) &&kIntegerText<type>
#define TIGHTFIT_CHECK_ORDER(P, FIELDS)                                \
  if constexpr (true FIELDS(TIGHTFIT_INTEGER_TEXT)) {                  \
    SECTION(#P) {                                                      \
      std::int32_t words[sizeof(P) / 4];                               \
      std::string expected;                                            \
      for (std::size_t i = 0; i < sizeof(P) / 4; ++i) {                \
        words[i] = static_cast<std::int32_t>(i + 1);                   \
        expected += (i ? "," : "") + std::to_string(i + 1);            \
      }                                                                \
      P block;                                                         \
      std::memcpy(&block, words, sizeof(P));                           \
      CHECK(flat(ParamsText<P>::of(block).initializer()) == expected); \
    }                                                                  \
  }

TEST_CASE("a parameter block's initializer writes its values in the order its struct holds them in memory"){
    TIGHTFIT_PARAMS_BLOCKS(TIGHTFIT_CHECK_ORDER) TIGHTFIT_INTEGER_KERNEL_BLOCKS(TIGHTFIT_CHECK_ORDER)}

TEST_CASE("a parameter block with a pointer field left unfilled is refused, not written") {
  ConcatParams p{};
  p.num_inputs = 2;
  CHECK_THROWS_WITH(ParamsText<ConcatParams>::of(p).initializer(),
                    "internal error: ConcatParams::input_inner unfilled");
  ParamsText<ConcatParams> fields = ParamsText<ConcatParams>::of(p);
  fields.input_inner = "inner";
  CHECK(fields.initializer() == "2,0,0,inner");
}
