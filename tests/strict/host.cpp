// tests/strict/run compiles and analyses this on the host only: runtime/include/tightfit/host.hpp is
// the compiler's (and the tests') reference arithmetic, which no firmware includes.
#include <tightfit/host.hpp>
