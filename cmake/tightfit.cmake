# tightfit_add_model(<target> <model.onnx> [MAX_RAM <size> | MEMORY <file>] [NAME <name>]
#                    [OPTIONS <extra tightfit compile arguments>...])
#
# Compiles the model with `tightfit compile` at build time into
# ${CMAKE_CURRENT_BINARY_DIR}/tightfit_<name>/<name>.hpp, <name>.cpp and <name>.report.json, and
# adds the generated source, its include directory and the tightfit runtime to <target>. The
# compile runs again whenever the model, the memory file, the options or the tightfit program
# change. MAX_RAM caps the arena (the build fails when the model cannot fit); without it, the plan
# is just the smallest.
#
# <name> defaults to the model file's name up to its first dot, made a C++ identifier
# ("conv_s8.qop.onnx" -> "conv_s8"). After the call, TIGHTFIT_<name>_DIR (in the caller's scope)
# holds the output directory, for instance to install the report.
#
# The tightfit program: the cache variable TIGHTFIT_EXECUTABLE when set; else the in-tree
# `tightfit` target when tightfit was added with add_subdirectory() in a host build; else
# `tightfit` found on the PATH. A firmware build (cross compiling) cannot build the compiler, so it
# needs a host-built or installed tightfit: -DTIGHTFIT_EXECUTABLE=/path/to/tightfit.
include_guard(GLOBAL)

function(_tightfit_identifier out text)
  string(MAKE_C_IDENTIFIER "${text}" id)
  set(${out} "${id}" PARENT_SCOPE)
endfunction()

function(_tightfit_executable out_command out_depends)
  if(TIGHTFIT_EXECUTABLE)
    set(${out_command} "${TIGHTFIT_EXECUTABLE}" PARENT_SCOPE)
    set(${out_depends} "${TIGHTFIT_EXECUTABLE}" PARENT_SCOPE)
    return()
  endif()
  if(TARGET tightfit AND NOT CMAKE_CROSSCOMPILING)
    get_target_property(type tightfit TYPE)
    if(type STREQUAL "EXECUTABLE")
      set(${out_command} "$<TARGET_FILE:tightfit>" PARENT_SCOPE)
      set(${out_depends} tightfit PARENT_SCOPE)
      return()
    endif()
  endif()
  find_program(TIGHTFIT_EXECUTABLE tightfit DOC "The tightfit compiler, run on the build host")
  if(NOT TIGHTFIT_EXECUTABLE)
    message(FATAL_ERROR
      "tightfit_add_model: no tightfit program found. Build tightfit for the host and pass "
      "-DTIGHTFIT_EXECUTABLE=/path/to/tightfit (or put it on the PATH).")
  endif()
  set(${out_command} "${TIGHTFIT_EXECUTABLE}" PARENT_SCOPE)
  set(${out_depends} "${TIGHTFIT_EXECUTABLE}" PARENT_SCOPE)
endfunction()

function(tightfit_add_model target model)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "MAX_RAM;NAME;MEMORY" "OPTIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tightfit_add_model: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "tightfit_add_model: '${target}' is not a target")
  endif()

  get_filename_component(model "${model}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(arg_NAME)
    set(name "${arg_NAME}")
  else()
    get_filename_component(stem "${model}" NAME_WE)
    _tightfit_identifier(name "${stem}")
  endif()
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/tightfit_${name}")

  set(args compile "${model}" -o "${out_dir}" --name "${name}")
  if(arg_MAX_RAM)
    list(APPEND args --max-ram "${arg_MAX_RAM}")
  endif()
  set(depends "${model}")
  if(arg_MEMORY AND arg_MAX_RAM)
    message(FATAL_ERROR "tightfit_add_model(${model}): MAX_RAM does not apply with MEMORY: the memory file's region sizes are the caps")
  endif()
  if(arg_MEMORY)
    get_filename_component(memory "${arg_MEMORY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND args --memory "${memory}")
    list(APPEND depends "${memory}")
  endif()
  list(APPEND args ${arg_OPTIONS})
  # In a firmware build for a core of arm-none-eabi.cmake the report's flash is linked for that core.
  if(CMAKE_CROSSCOMPILING AND TIGHTFIT_CORE AND CMAKE_CXX_COMPILER MATCHES "arm-none-eabi"
     AND NOT "--target" IN_LIST arg_OPTIONS)
    list(APPEND args --target "${TIGHTFIT_CORE}")
  endif()

  # The arguments go into a stamp file that is rewritten only when they change, so that a changed
  # option, and only that, reruns the compile.
  set(stamp "${out_dir}.arguments")
  string(REPLACE ";" "\n" stamp_text "${args}")
  file(CONFIGURE OUTPUT "${stamp}" CONTENT "${stamp_text}\n" @ONLY)

  _tightfit_executable(command program_depends)
  set(outputs "${out_dir}/${name}.hpp" "${out_dir}/${name}.cpp" "${out_dir}/${name}.report.json")
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "${command}" ${args}
    DEPENDS ${depends} "${stamp}" ${program_depends}
    COMMENT "tightfit: compiling ${model}"
    VERBATIM)

  target_sources(${target} PRIVATE "${out_dir}/${name}.cpp" "${out_dir}/${name}.hpp")
  target_include_directories(${target} PRIVATE "${out_dir}")
  target_link_libraries(${target} PRIVATE tightfit::runtime)
  set(TIGHTFIT_${name}_DIR "${out_dir}" PARENT_SCOPE)
endfunction()

# tightfit_embed_npy(<target> <file.npy> SYMBOL <identifier> [SECTION <linker section>])
#
# Builds a NumPy array (float32, int8 or uint8) into <target> as a constant array in flash, declared
# in the header "<identifier>.hpp":
#   extern const float <identifier>[];          // (or std::int8_t / std::uint8_t)
#   extern const std::size_t <identifier>_size; // elements
# for a firmware that runs a model on a fixed input, with no file system to read it from. The
# array goes into .rodata, or into SECTION (the board support's .tightfit_inputs keeps test inputs
# out of the model's flash figures). The tightfit program writes the source (`tightfit embed-npy`,
# floats as hexadecimal literals: the very same bits), found as for tightfit_add_model().
function(tightfit_embed_npy target npy)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "SYMBOL;SECTION" "")
  if(NOT arg_SYMBOL)
    message(FATAL_ERROR "tightfit_embed_npy: SYMBOL is required")
  endif()
  get_filename_component(npy "${npy}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/tightfit_npy")
  set(section)
  if(arg_SECTION)
    set(section --section "${arg_SECTION}")
  endif()
  _tightfit_executable(command program_depends)
  add_custom_command(
    OUTPUT "${out_dir}/${arg_SYMBOL}.cpp" "${out_dir}/${arg_SYMBOL}.hpp"
    COMMAND "${command}" embed-npy "${npy}" --symbol "${arg_SYMBOL}" ${section} -o "${out_dir}"
    DEPENDS "${npy}" ${program_depends}
    COMMENT "tightfit: building ${npy} into ${target}"
    VERBATIM)
  target_sources(${target} PRIVATE "${out_dir}/${arg_SYMBOL}.cpp" "${out_dir}/${arg_SYMBOL}.hpp")
  target_include_directories(${target} PRIVATE "${out_dir}")
endfunction()
