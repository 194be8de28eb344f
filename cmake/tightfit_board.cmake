# tightfit_add_board(<target> <board> [STACK_SIZE <bytes>])
#
# Makes the executable <target> a bare-metal firmware for <board> (a board of
# firmware/boards/boards.json: mps2-an386 for Cortex-M4, mps2-an500 for Cortex-M7, mps3-an547 for
# Cortex-M55, cortex-m0plus, rv32imc, microbit): adds the start-up code, the UART output,
# the semihosting exit, the instruction counter and stack painting, links with the board's linker
# script and names the output <target>.elf. The firmware's main() returns its exit status.
#
# Also adds the target <target>-qemu, which runs the firmware in QEMU under -icount
# (exact instruction counts): `cmake --build <dir> --target <target>-qemu`.
#
# tightfit_board_facts(<board>) sets, from firmware/boards/boards.json, TIGHTFIT_BOARD_CORE,
# TIGHTFIT_BOARD_ARCH (arm or riscv), TIGHTFIT_BOARD_TOOLCHAIN (the toolchain file's path),
# TIGHTFIT_BOARD_QEMU, TIGHTFIT_BOARD_QEMU_MACHINE, TIGHTFIT_BOARD_QEMU_FLAGS (a list),
# TIGHTFIT_BOARD_FAST_KERNELS and TIGHTFIT_BOARD_PERIPHERALS (empty for the CMSDK ones).
include_guard(GLOBAL)

function(tightfit_board_facts board)
  # Beside this file's folder, in the source tree and in an install alike.
  get_filename_component(table "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../firmware/boards/boards.json" ABSOLUTE)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${table}")
  file(READ "${table}" json)
  string(JSON count LENGTH "${json}" boards)
  math(EXPR last "${count} - 1")
  set(known "")
  foreach(i RANGE ${last})
    string(JSON name GET "${json}" boards ${i} name)
    list(APPEND known ${name})
    if(NOT name STREQUAL board)
      continue()
    endif()
    string(JSON arch GET "${json}" boards ${i} architecture)
    string(JSON core GET "${json}" boards ${i} core)
    string(JSON machine GET "${json}" boards ${i} qemu_machine)
    string(JSON fast GET "${json}" boards ${i} fast_kernels)
    string(JSON peripherals ERROR_VARIABLE no_peripherals GET "${json}" boards ${i} peripherals)
    if(no_peripherals)
      set(peripherals "")
    endif()
    string(JSON toolchain GET "${json}" architectures ${arch} toolchain)
    string(JSON qemu GET "${json}" architectures ${arch} qemu)
    string(JSON flag_count LENGTH "${json}" architectures ${arch} qemu_flags)
    math(EXPR last_flag "${flag_count} - 1")
    set(flags "")
    foreach(f RANGE ${last_flag})
      string(JSON flag GET "${json}" architectures ${arch} qemu_flags ${f})
      list(APPEND flags "${flag}")
    endforeach()
    set(TIGHTFIT_BOARD_CORE ${core} PARENT_SCOPE)
    set(TIGHTFIT_BOARD_ARCH ${arch} PARENT_SCOPE)
    set(TIGHTFIT_BOARD_TOOLCHAIN "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${toolchain}" PARENT_SCOPE)
    set(TIGHTFIT_BOARD_QEMU ${qemu} PARENT_SCOPE)
    set(TIGHTFIT_BOARD_QEMU_MACHINE ${machine} PARENT_SCOPE)
    set(TIGHTFIT_BOARD_QEMU_FLAGS "${flags}" PARENT_SCOPE)
    set(TIGHTFIT_BOARD_FAST_KERNELS ${fast} PARENT_SCOPE)
    set(TIGHTFIT_BOARD_PERIPHERALS "${peripherals}" PARENT_SCOPE)
    return()
  endforeach()
  string(REPLACE ";" ", " known "${known}")
  message(FATAL_ERROR "tightfit: unknown board '${board}' (known: ${known})")
endfunction()

function(tightfit_add_board target board)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "STACK_SIZE" "")
  # Beside this file's folder, in the source tree and in an install alike.
  get_filename_component(firmware_dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../firmware" ABSOLUTE)
  set(board_dir "${firmware_dir}/boards/${board}")
  tightfit_board_facts(${board})
  if(NOT TIGHTFIT_CORE STREQUAL TIGHTFIT_BOARD_CORE)
    message(FATAL_ERROR "tightfit_add_board: ${board} has a ${TIGHTFIT_BOARD_CORE}, but this build "
      "compiles for TIGHTFIT_CORE=${TIGHTFIT_CORE} (use the toolchain file cmake/arm-none-eabi.cmake "
      "with -DTIGHTFIT_CORE=${TIGHTFIT_BOARD_CORE})")
  endif()

  set(src "${firmware_dir}/src")
  # Arm boards and RV32 boards (TIGHTFIT_BOARD_ARCH riscv) differ in start-up, UART, exit and
  # counter; the text output, stack painting and figures are shared.
  target_sources(${target} PRIVATE "${src}/c_runtime.c" "${src}/text.c" "${src}/stack_paint.c" "${src}/figures.c")
  if(TIGHTFIT_BOARD_ARCH STREQUAL "riscv")
    target_sources(${target} PRIVATE "${src}/riscv/start.S" "${src}/riscv/startup.c" "${src}/riscv/uart.c"
      "${src}/riscv/exit.c" "${src}/riscv/instruction_counter.c")
  else()
    target_sources(${target} PRIVATE "${src}/startup.c" "${src}/semihosting.c")
    if(TIGHTFIT_BOARD_PERIPHERALS STREQUAL "nrf51")
      target_sources(${target} PRIVATE "${src}/nrf51/uart.c" "${src}/nrf51/no_instruction_counter.c")
    else()  # the MPS2/MPS3 boards' CMSDK UART and timers
      target_sources(${target} PRIVATE "${src}/uart.c" "${src}/instruction_counter.c" "${src}/icount_now.S")
    endif()
  endif()
  target_include_directories(${target} PRIVATE "${firmware_dir}/include" "${board_dir}")
  # What the figures name the board and core by (src/figures.c).
  target_compile_definitions(${target} PRIVATE "TF_BOARD_NAME=\"${board}\"" "TF_CORE_NAME=\"${TIGHTFIT_BOARD_CORE}\"")

  target_link_options(${target} PRIVATE
    -nostartfiles
    "-L${firmware_dir}/ld"
    "-T${board_dir}/memory.ld"
    "-Wl,-Map=$<TARGET_FILE_DIR:${target}>/${target}.map")
  if(arg_STACK_SIZE)
    target_link_options(${target} PRIVATE "-Wl,--defsym=__tightfit_stack_size=${arg_STACK_SIZE}")
  endif()
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS
    "${board_dir}/memory.ld" "${firmware_dir}/ld/tightfit_sections.ld")
  set_target_properties(${target} PROPERTIES SUFFIX ".elf")

  # -icount shift=0: one nanosecond of virtual time per instruction, so that the timers count
  # instructions (docs/firmware.md). Semihosting carries the exit status out.
  add_custom_target(${target}-qemu
    COMMAND ${TIGHTFIT_BOARD_QEMU} -M ${TIGHTFIT_BOARD_QEMU_MACHINE} -nographic
      ${TIGHTFIT_BOARD_QEMU_FLAGS} -icount shift=0,align=off,sleep=off
      -kernel "$<TARGET_FILE:${target}>"
    DEPENDS ${target}
    USES_TERMINAL
    COMMENT "Running ${target} in QEMU (${TIGHTFIT_BOARD_QEMU_MACHINE})"
    VERBATIM)
endfunction()
