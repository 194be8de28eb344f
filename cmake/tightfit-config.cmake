# Package configuration for find_package(tightfit), installed as
# <prefix>/share/tightfit/cmake/tightfit-config.cmake beside tightfit.cmake and
# tightfit_board.cmake, with the board support in <prefix>/share/tightfit/firmware.
#
# Gives: the target tightfit::runtime (the header-only kernels, usable with any toolchain, the
# Arm one included); the functions tightfit_add_model(), tightfit_embed_npy() and
# tightfit_add_board(); and TIGHTFIT_EXECUTABLE, the installed tightfit program.
include_guard(GLOBAL)

get_filename_component(_tightfit_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

include("${CMAKE_CURRENT_LIST_DIR}/tightfit-targets.cmake")

# The compiler runs on the build host even in a cross build: look for it outside any sysroot.
find_program(TIGHTFIT_EXECUTABLE tightfit
  HINTS "${_tightfit_prefix}/bin"
  NO_CMAKE_FIND_ROOT_PATH
  DOC "The tightfit compiler, run on the build host")

include("${CMAKE_CURRENT_LIST_DIR}/tightfit.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/tightfit_board.cmake")
unset(_tightfit_prefix)
