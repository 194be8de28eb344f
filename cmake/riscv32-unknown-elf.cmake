# Toolchain file for bare-metal RISC-V RV32IMC (ESP32-C3's instruction set) with Debian's
# gcc-riscv64-unknown-elf and picolibc-riscv64-unknown-elf:
#
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=<tightfit>/cmake/riscv32-unknown-elf.cmake
#
# -march=rv32imc -mabi=ilp32: no float unit (requantization runs in integers, numerics.hpp). The
# toolchain has no C++ standard library headers: firmware/include/freestanding-cxx supplies the
# three that tightfit's runtime and generated code include.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(TIGHTFIT_CORE "rv32imc" CACHE STRING "Core to compile for")

set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_OBJCOPY riscv64-unknown-elf-objcopy CACHE FILEPATH "objcopy for the target")
set(CMAKE_SIZE riscv64-unknown-elf-size CACHE FILEPATH "size for the target")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TIGHTFIT_CORE)

get_filename_component(_tightfit_cxx_shim "${CMAKE_CURRENT_LIST_DIR}/../firmware/include/freestanding-cxx" ABSOLUTE)
set(_tightfit_common_flags
  "-march=rv32imc -mabi=ilp32 --specs=picolibc.specs -ffunction-sections -fdata-sections -ffp-contract=off")
set(CMAKE_C_FLAGS_INIT "${_tightfit_common_flags}")
set(CMAKE_CXX_FLAGS_INIT
  "${_tightfit_common_flags} -isystem ${_tightfit_cxx_shim} -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
set(CMAKE_ASM_FLAGS_INIT "-march=rv32imc -mabi=ilp32")
# (The compile flags carry --specs=picolibc.specs to the link too.)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")
# There is no libstdc++ to link (and the freestanding code needs none): link C++ with the C driver.
set(CMAKE_CXX_LINK_EXECUTABLE "<CMAKE_C_COMPILER> <FLAGS> <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
