# Toolchain file for bare-metal Xtensa with Debian's gcc-xtensa-lx106 (the LX106 core of the
# ESP8266; the ESP32 family's LX6 and LX7 share its base ISA and add windowed registers, an FPU on
# some, and on the ESP32-S3 SIMD instructions this compiler does not know):
#
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=<tightfit>/cmake/xtensa-lx106-elf.cmake
#
# Compile only: Debian's libgcc for this core lacks the integer division and most soft-float
# routines (__udivsi3, __divsi3, __umodsi3, __addsf3, __mulsf3, __floatsisf, ...: the Xtensa
# configuration it was built for expected them from the core's ROM), so a program that divides or
# uses float does not link (docs/firmware.md, "Xtensa"). tests/strict/run compiles the runtime and
# the generated code with these flags. The core has no float unit: float arithmetic is soft.
# -mlongcalls as ESP-IDF and the ESP8266 SDKs build: code in flash and in IRAM lies further apart
# than a CALL0's reach. The C headers (stdint.h) come from picolibc-xtensa-lx106-elf, which
# installs them where this GCC looks; nothing pulls it in with the compiler, so ./setup names it.
# The toolchain has no C++ standard library headers: firmware/include/freestanding-cxx supplies
# the three that tightfit's runtime and generated code include.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR xtensa)
set(TIGHTFIT_CORE "lx106" CACHE STRING "Core to compile for")

set(CMAKE_C_COMPILER xtensa-lx106-elf-gcc)
set(CMAKE_CXX_COMPILER xtensa-lx106-elf-g++)
set(CMAKE_ASM_COMPILER xtensa-lx106-elf-gcc)
set(CMAKE_OBJCOPY xtensa-lx106-elf-objcopy CACHE FILEPATH "objcopy for the target")
set(CMAKE_SIZE xtensa-lx106-elf-size CACHE FILEPATH "size for the target")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TIGHTFIT_CORE)

get_filename_component(_tightfit_cxx_shim "${CMAKE_CURRENT_LIST_DIR}/../firmware/include/freestanding-cxx" ABSOLUTE)
set(_tightfit_common_flags "-mlongcalls -ffunction-sections -fdata-sections -ffp-contract=off")
set(CMAKE_C_FLAGS_INIT "${_tightfit_common_flags}")
set(CMAKE_CXX_FLAGS_INIT
  "${_tightfit_common_flags} -isystem ${_tightfit_cxx_shim} -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
set(CMAKE_ASM_FLAGS_INIT "-mlongcalls")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
