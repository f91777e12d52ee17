# Debian packages from the tree (CPack DEB): `cmake --build build --target package` or
# `cd build && cpack -G DEB` writes libnetdaq0, libnetdaq-dev and netdaq .debs into the build
# directory, one per component of cmake/install.cmake. Depends: come from dpkg-shlibdeps on the
# linked libraries; libnetdaq-dev also depends on libnetdaq0 of the same version.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME netdaq)
set(CPACK_PACKAGE_VENDOR netdaq)
set(CPACK_PACKAGE_CONTACT "netdaq developers <netdaq@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "line-rate packet acquisition into CPU or GPU memory")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)   # CPACK_COMPONENT_<X>_DEPENDS become Depends: (= version)
set(CPACK_COMPONENTS_ALL runtime dev cli)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # <package>_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_STRIP_FILES ON)                  # RelWithDebInfo builds carry ~60 MB of debug info
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libnetdaq${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)   # libnetdaq0 (the one with a shared library): shlibs and the ldconfig trigger
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "netdaq's shared library (engines: ${NETDAQ_ENGINE_LIST})")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libnetdaq-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_COMPONENT_DEV_DESCRIPTION "netdaq's headers, CMake package (find_package(netdaq)) and pkg-config file")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME netdaq)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION net)
set(CPACK_COMPONENT_CLI_DESCRIPTION "the netdaq command (run, bench, validate, capture; libnetdaq linked in), docs and examples")
include(CPack)
