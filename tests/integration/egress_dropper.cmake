# netdaq_test_egress_dropper(<target>): adds EgressDropper (egress_dropper.cpp) and its eBPF
# program (bpf/drop_every_nth.bpf.c, embedded) to a test executable. Without the afxdp engine
# (libbpf, clang) the class is built without the object and every attach fails saying why.
function(netdaq_test_egress_dropper target)
  set(dir ${PROJECT_SOURCE_DIR}/tests/integration)
  target_sources(${target} PRIVATE ${dir}/egress_dropper.cpp)
  if("afxdp" IN_LIST NETDAQ_ENGINES)
    include(${PROJECT_SOURCE_DIR}/cmake/bpf_object.cmake)
    netdaq_bpf_object(SOURCE ${dir}/bpf/drop_every_nth.bpf.c SYMBOL netdaq_test_drop_every_nth_obj
                      OUT_SOURCES embedded INCLUDES ${dir}/bpf DEPENDS ${dir}/bpf/drop_every_nth_abi.h)
    target_sources(${target} PRIVATE ${embedded})
    target_link_libraries(${target} PRIVATE PkgConfig::LIBBPF)
    target_compile_definitions(${target} PRIVATE NETDAQ_TEST_EGRESS_DROPPER=1)
  endif()
endfunction()
