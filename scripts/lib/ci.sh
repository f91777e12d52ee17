# The CI rule, read one way everywhere (scripts, CMake, C++ tests, Python tests): CI is on when
# the variable CI is "true", "1" or "yes", in any case. Then nothing may pass by skipping: a
# missing tool, privilege, engine or part fails. Sourced: `netdaq_in_ci && exit 1`.
netdaq_in_ci() {
  case "${CI:-}" in
    [Tt][Rr][Uu][Ee] | 1 | [Yy][Ee][Ss]) return 0 ;;
    *) return 1 ;;
  esac
}
