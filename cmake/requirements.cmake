# Parts of the build that are left out when their dependency is not found (an engine, the
# Python module, valgrind's tests, the soak, the fuzzers of an engine's parsers). Outside CI a
# missing part is reported and the build goes on without it; under CI (the rule of
# scripts/lib/ci.sh: CI is "true", "1" or "yes", any case) it fails the configure, naming the
# part and the Debian packages that bring it, so no test group vanishes unseen.
string(TOLOWER "$ENV{CI}" netdaq_ci_value)
if(netdaq_ci_value MATCHES "^(1|true|yes)$")
  set(NETDAQ_IN_CI ON)
else()
  set(NETDAQ_IN_CI OFF)
endif()
set_property(GLOBAL PROPERTY NETDAQ_MISSING_PARTS "")

# netdaq_part_missing(PART PACKAGES...): PART is not built because PACKAGES are not installed.
function(netdaq_part_missing part)
  string(JOIN " " packages ${ARGN})
  message(STATUS "netdaq: ${part} not built (needs ${packages})")
  set_property(GLOBAL APPEND PROPERTY NETDAQ_MISSING_PARTS "  ${part}: apt-get install ${packages}")
endfunction()

# Called once at the end of the top-level CMakeLists.txt.
function(netdaq_check_missing_parts)
  get_property(missing GLOBAL PROPERTY NETDAQ_MISSING_PARTS)
  if(missing AND NETDAQ_IN_CI)
    string(JOIN "\n" lines ${missing})
    message(FATAL_ERROR "CI=$ENV{CI}: every part must be built, and these were not found:\n${lines}\n"
                        "(scripts/install-deps.sh installs them all)")
  endif()
endfunction()
