# cmake -DNPY=<file.npy> -DSYMBOL=<identifier> -DOUTPUT=<dir> [-DSECTION=<name>]
#       -P tightfit_npy_to_cpp.cmake
#
# Turns a NumPy .npy array (float32, int8 or uint8, little-endian, C order) into <dir>/SYMBOL.cpp,
# which defines it as a constant array in flash, and <dir>/SYMBOL.hpp, which declares it:
#
#   extern const float SYMBOL[];          // (or std::int8_t / std::uint8_t)
#   extern const std::size_t SYMBOL_size; // elements
#
# SECTION names a linker section for the array (default .rodata). Floats are written as
# hexadecimal literals, so the firmware sees the very same bits. Used by tightfit_embed_npy()
# (tightfit.cmake) to build a model's inputs into a firmware.
foreach(var NPY SYMBOL OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "tightfit_npy_to_cpp: ${var} is not set")
  endif()
endforeach()

# Format 1.0: magic (6 bytes), version (2), header length (2, little-endian), header.
# Formats 2.0 and 3.0: a 4-byte header length.
file(READ "${NPY}" prefix LIMIT 12 HEX)
if(NOT prefix MATCHES "^934e554d5059")
  message(FATAL_ERROR "${NPY}: not a NumPy .npy file")
endif()
string(SUBSTRING "${prefix}" 12 2 major)
if(major STREQUAL "01")
  string(SUBSTRING "${prefix}" 16 2 lo)
  string(SUBSTRING "${prefix}" 18 2 hi)
  math(EXPR header_bytes "0x${hi}${lo}")
  set(header_offset 10)
else()
  string(SUBSTRING "${prefix}" 16 8 le)
  string(REGEX REPLACE "(..)(..)(..)(..)" "\\4\\3\\2\\1" be "${le}")
  math(EXPR header_bytes "0x${be}")
  set(header_offset 12)
endif()
file(READ "${NPY}" header OFFSET ${header_offset} LIMIT ${header_bytes})
math(EXPR data_offset "${header_offset} + ${header_bytes}")

if(NOT header MATCHES "'descr': *'([<|]?)([fiu][0-9])'")
  message(FATAL_ERROR "${NPY}: no dtype in header: ${header}")
endif()
set(descr "${CMAKE_MATCH_2}")
if(header MATCHES "'fortran_order': *True")
  message(FATAL_ERROR "${NPY}: Fortran order is not supported")
endif()

file(READ "${NPY}" data OFFSET ${data_offset} HEX)
string(LENGTH "${data}" hex_digits)

# A float32's bits, as four little-endian bytes, to a C++ hexadecimal float literal.
function(_float_literal out b0 b1 b2 b3)
  math(EXPR bits "0x${b3}${b2}${b1}${b0}")
  math(EXPR sign "(${bits} >> 31) & 1")
  math(EXPR exponent "(${bits} >> 23) & 255")
  math(EXPR mantissa "(${bits} & 0x7FFFFF) << 1" OUTPUT_FORMAT HEXADECIMAL)
  if(exponent EQUAL 255)
    message(FATAL_ERROR "${NPY}: infinity or NaN in the data")
  endif()
  string(SUBSTRING "${mantissa}" 2 -1 digits)
  string(LENGTH "${digits}" n)
  while(n LESS 6)
    string(PREPEND digits "0")
    math(EXPR n "${n} + 1")
  endwhile()
  set(text "0x1.${digits}p")
  if(exponent EQUAL 0)
    set(text "0x0.${digits}p")
    set(exponent 1)  # subnormal: 0.m * 2^-126
  endif()
  math(EXPR power "${exponent} - 127")
  set(minus "")
  if(sign)
    set(minus "-")
  endif()
  set(${out} "${minus}${text}${power}f" PARENT_SCOPE)
endfunction()

set(values "")
if(descr STREQUAL "f4")
  set(type "float")
  math(EXPR count "${hex_digits} / 8")
  math(EXPR last "${count} - 1")
  foreach(i RANGE 0 ${last})
    math(EXPR at "${i} * 8")
    string(SUBSTRING "${data}" ${at} 8 word)
    string(REGEX MATCHALL ".." b "${word}")
    list(GET b 0 b0)
    list(GET b 1 b1)
    list(GET b 2 b2)
    list(GET b 3 b3)
    _float_literal(literal ${b0} ${b1} ${b2} ${b3})
    string(APPEND values "${literal},\n")
  endforeach()
elseif(descr STREQUAL "i1" OR descr STREQUAL "u1")
  if(descr STREQUAL "i1")
    set(type "std::int8_t")
  else()
    set(type "std::uint8_t")
  endif()
  math(EXPR count "${hex_digits} / 2")
  string(REGEX MATCHALL ".." bytes "${data}")
  foreach(byte IN LISTS bytes)
    math(EXPR value "0x${byte}")
    if(descr STREQUAL "i1" AND value GREATER 127)
      math(EXPR value "${value} - 256")
    endif()
    string(APPEND values "${value},")
  endforeach()
else()
  message(FATAL_ERROR "${NPY}: dtype '${descr}' is not float32, int8 or uint8")
endif()

set(attribute "")
if(SECTION)
  set(attribute " __attribute__((section(\"${SECTION}\")))")
endif()
set(declarations "extern const ${type} ${SYMBOL}[];\nextern const std::size_t ${SYMBOL}_size;\n")
set(banner "// Generated from ${NPY} by tightfit_npy_to_cpp.cmake. Do not edit.\n")
file(WRITE "${OUTPUT}/${SYMBOL}.hpp.tmp"
  "${banner}#pragma once\n\n#include <cstddef>\n#include <cstdint>\n\n${declarations}")
file(WRITE "${OUTPUT}/${SYMBOL}.cpp.tmp"
  "${banner}#include \"${SYMBOL}.hpp\"\n\n"
  "alignas(16) const ${type} ${SYMBOL}[]${attribute} = {\n${values}};\n"
  "const std::size_t ${SYMBOL}_size = ${count};\n")
# Renamed only when complete, so that a failed run leaves no half-written source behind.
file(RENAME "${OUTPUT}/${SYMBOL}.hpp.tmp" "${OUTPUT}/${SYMBOL}.hpp")
file(RENAME "${OUTPUT}/${SYMBOL}.cpp.tmp" "${OUTPUT}/${SYMBOL}.cpp")
