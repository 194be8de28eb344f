# Toolchain file for bare-metal Arm Cortex-M with the GNU Arm toolchain (arm-none-eabi-gcc).
#
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=<tightfit>/cmake/arm-none-eabi.cmake -DTIGHTFIT_CORE=cortex-m4
#
# TIGHTFIT_CORE picks -mcpu, the FPU and the float ABI. Cores with an FPU use the hard-float ABI so
# that float arguments travel in FPU registers; cores without one use soft float.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(TIGHTFIT_CORE "cortex-m4" CACHE STRING "Cortex-M core to compile for")
set_property(CACHE TIGHTFIT_CORE PROPERTY STRINGS
  cortex-m0plus cortex-m3 cortex-m4 cortex-m7 cortex-m33 cortex-m55)

if(TIGHTFIT_CORE STREQUAL "cortex-m0plus")
  set(_tightfit_core_flags "-mcpu=cortex-m0plus -mfloat-abi=soft")
elseif(TIGHTFIT_CORE STREQUAL "cortex-m3")
  set(_tightfit_core_flags "-mcpu=cortex-m3 -mfloat-abi=soft")
elseif(TIGHTFIT_CORE STREQUAL "cortex-m4")
  set(_tightfit_core_flags "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
elseif(TIGHTFIT_CORE STREQUAL "cortex-m7")
  set(_tightfit_core_flags "-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard")
elseif(TIGHTFIT_CORE STREQUAL "cortex-m33")
  set(_tightfit_core_flags "-mcpu=cortex-m33 -mfpu=fpv5-sp-d16 -mfloat-abi=hard")
elseif(TIGHTFIT_CORE STREQUAL "cortex-m55")
  # -mfpu=auto takes the FPU and MVE (Helium) from -mcpu.
  set(_tightfit_core_flags "-mcpu=cortex-m55 -mfpu=auto -mfloat-abi=hard")
else()
  message(FATAL_ERROR "TIGHTFIT_CORE='${TIGHTFIT_CORE}' is not one of: "
    "cortex-m0plus cortex-m3 cortex-m4 cortex-m7 cortex-m33 cortex-m55")
endif()

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_OBJCOPY arm-none-eabi-objcopy CACHE FILEPATH "objcopy for the target")
set(CMAKE_SIZE arm-none-eabi-size CACHE FILEPATH "size for the target")

# The compiler cannot link a program without a linker script and start-up code, so CMake's
# compiler checks build a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TIGHTFIT_CORE)

# One section per function and object lets --gc-sections drop what is unused (most of a kernel
# library, for a given model). -ffp-contract=off keeps float requantization bit-identical to the
# host build: a fused multiply-add rounds once where the host rounds twice.
set(_tightfit_common_flags
  "-mthumb ${_tightfit_core_flags} -ffunction-sections -fdata-sections -ffp-contract=off")
set(CMAKE_C_FLAGS_INIT "${_tightfit_common_flags}")
set(CMAKE_CXX_FLAGS_INIT
  "${_tightfit_common_flags} -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
set(CMAKE_ASM_FLAGS_INIT "-mthumb ${_tightfit_core_flags}")
# newlib-nano gives memcpy/memset and friends without the full C library's size.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections --specs=nano.specs")

# Libraries and headers come from the toolchain, programs (the tightfit compiler) from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
