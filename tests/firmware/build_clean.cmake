# cmake -DSOURCE=<dir> -DBINARY=<dir> -DGENERATOR=<name> [-DMAKE_PROGRAM=<path>]
#       "-DOPTIONS=-DA=1|-DB=2" -P build_clean.cmake
#
# OPTIONS are separated by '|': a ';' would not survive the trip through add_test().
#
# Configures and builds a project in an emptied build folder: what a user does on a fresh checkout.
foreach(var SOURCE BINARY GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "build_clean.cmake: ${var} is not set")
  endif()
endforeach()

string(REPLACE "|" ";" OPTIONS "${OPTIONS}")
if(MAKE_PROGRAM)
  list(APPEND OPTIONS "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
file(REMOVE_RECURSE "${BINARY}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${BINARY}" -G "${GENERATOR}" ${OPTIONS}
  RESULT_VARIABLE configured)
if(NOT configured EQUAL 0)
  message(FATAL_ERROR "configuring ${SOURCE} failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY}" RESULT_VARIABLE built)
if(NOT built EQUAL 0)
  message(FATAL_ERROR "building ${SOURCE} failed")
endif()
