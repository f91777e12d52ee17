# What `cmake --install` puts where (GNUInstallDirs), in three components that are also the
# three Debian packages cmake/package.cmake makes:
#   runtime  libnetdaq.so.<version> and its SONAME link           -> libnetdaq0
#   dev      headers, libnetdaq.so, the CMake package, netdaq.pc   -> libnetdaq-dev
#   cli      the netdaq command (static libnetdaq), docs, examples  -> netdaq
#   static   libnetdaq.a, netdaq-static.pc (see NETDAQ_INSTALL_STATIC)
# Included by the top-level CMakeLists.txt after the library and the CLI are defined.
include(CMakePackageConfigHelpers)
option(NETDAQ_INSTALL_STATIC "Install libnetdaq.a, its CMake targets and netdaq-static.pc by default (component static)" OFF)
set(NETDAQ_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/netdaq)
set(NETDAQ_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(TARGETS netdaq EXPORT netdaq-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/netdaq DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(EXPORT netdaq-targets NAMESPACE netdaq:: DESTINATION ${NETDAQ_CMAKE_DIR} COMPONENT dev)

# The static library needs what the shared one hides: yaml-cpp, spdlog, fmt, the engines'
# libraries (pkg-config modules) and the CUDA runtime. netdaq-config.cmake finds them only
# when asked for COMPONENTS static, so users of the shared library need none of their headers.
set(NETDAQ_STATIC_PKG_MODULES yaml-cpp spdlog fmt libisal)  # libisal: the RoCEv2 ICRC (src/protocols/crc32.cpp)
set(NETDAQ_STATIC_PKGCONFIG_TARGETS "")   # "VAR module" pairs for pkg_check_modules(IMPORTED_TARGET)
foreach(pair "LIBXDP libxdp" "LIBBPF libbpf" "IBVERBS libibverbs" "RDMACM librdmacm" "PCAP libpcap" "HTTPLIB cpp-httplib" "UCX ucx")
  string(REPLACE " " ";" pair "${pair}")
  list(GET pair 0 var)
  list(GET pair 1 module)
  if("PkgConfig::${var}" IN_LIST NETDAQ_PRIVATE_LIBS)
    string(APPEND NETDAQ_STATIC_PKGCONFIG_TARGETS "  pkg_check_modules(${var} REQUIRED QUIET IMPORTED_TARGET ${module})\n")
    list(APPEND NETDAQ_STATIC_PKG_MODULES ${module})
  endif()
endforeach()
set(NETDAQ_STATIC_EXTRA_LIBS "")   # what netdaq-static.pc adds beyond its Requires
if("dpdk" IN_LIST NETDAQ_ENGINES)
  list(APPEND NETDAQ_STATIC_PKG_MODULES libdpdk)
  string(APPEND NETDAQ_STATIC_EXTRA_LIBS " -lrte_bus_vdev")   # not in libdpdk.pc's public libraries
endif()
if(NETDAQ_HAVE_CUDA)
  string(APPEND NETDAQ_STATIC_EXTRA_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
endif()
# Component static: installed by default only with NETDAQ_INSTALL_STATIC, and on request
# (cmake --install build --component static) in any build.
set(NETDAQ_STATIC_INSTALL COMPONENT static EXCLUDE_FROM_ALL)
if(NETDAQ_INSTALL_STATIC)
  set(NETDAQ_STATIC_INSTALL COMPONENT static)
endif()
install(TARGETS netdaq_static EXPORT netdaq-static-targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} ${NETDAQ_STATIC_INSTALL})
install(EXPORT netdaq-static-targets NAMESPACE netdaq:: DESTINATION ${NETDAQ_CMAKE_DIR} ${NETDAQ_STATIC_INSTALL})

# The CMake package: find_package(netdaq CONFIG REQUIRED [COMPONENTS gpu static <engine>...]).
set(NETDAQ_CUDA_ROOT "")
if(NETDAQ_HAVE_CUDA)
  get_filename_component(NETDAQ_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
string(REPLACE ";" " " NETDAQ_ENGINE_LIST "${NETDAQ_ENGINES}")
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/package/netdaq-config.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/netdaq-config.cmake
                              INSTALL_DESTINATION ${NETDAQ_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/netdaq-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)  # 0.x: a new minor may break the API
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/netdaq-config.cmake ${CMAKE_CURRENT_BINARY_DIR}/netdaq-config-version.cmake
        DESTINATION ${NETDAQ_CMAKE_DIR} COMPONENT dev)

# pkg-config: prefix relative to the .pc file, so a staged or relocated install works as is.
file(RELATIVE_PATH NETDAQ_PC_TO_PREFIX /${NETDAQ_PKGCONFIG_DIR} /)
string(REGEX REPLACE "/$" "" NETDAQ_PC_TO_PREFIX "${NETDAQ_PC_TO_PREFIX}")
string(REPLACE ";" " " NETDAQ_STATIC_PC_REQUIRES "${NETDAQ_STATIC_PKG_MODULES}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/package/netdaq.pc.in ${CMAKE_CURRENT_BINARY_DIR}/netdaq.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/netdaq.pc DESTINATION ${NETDAQ_PKGCONFIG_DIR} COMPONENT dev)
configure_file(${CMAKE_CURRENT_LIST_DIR}/package/netdaq-static.pc.in ${CMAKE_CURRENT_BINARY_DIR}/netdaq-static.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/netdaq-static.pc DESTINATION ${NETDAQ_PKGCONFIG_DIR} ${NETDAQ_STATIC_INSTALL})

# With the command: the docs, the example configs and programs (examples/cpp builds against
# this install), and the README.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cli)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT cli
        PATTERN "__pycache__" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cli)
