# netdaq_bpf_object(SOURCE <file.bpf.c> SYMBOL <name> OUT_SOURCES <var> [INCLUDES dir...] [DEPENDS file...]):
# compiles an eBPF program with clang (NETDAQ_BPF_CLANG) and appends to <var> a generated C++
# source that embeds the object in the library's .rodata as <name>[] .. <name>_end[]. libbpf
# opens it with bpf_object__open_mem; CO-RE relocations bind it to the running kernel.
execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch OUTPUT_VARIABLE NETDAQ_MULTIARCH
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
function(netdaq_bpf_object)
  cmake_parse_arguments(B "" "SOURCE;SYMBOL;OUT_SOURCES" "INCLUDES;DEPENDS" ${ARGN})
  get_filename_component(base ${B_SOURCE} NAME_WE)
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/${base}.bpf.o)
  set(includes)
  foreach(dir ${B_INCLUDES})
    list(APPEND includes -I${dir})
  endforeach()
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${NETDAQ_BPF_CLANG} -O2 -g -target bpf -Wall -Werror -I/usr/include/${NETDAQ_MULTIARCH} ${includes}
            -c ${B_SOURCE} -o ${obj}
    DEPENDS ${B_SOURCE} ${B_DEPENDS}
    COMMENT "Compiling the eBPF program ${base}")
  set(NETDAQ_BPF_OBJ ${obj})
  set(NETDAQ_BPF_SYMBOL ${B_SYMBOL})
  set(embed ${CMAKE_CURRENT_BINARY_DIR}/${base}_object.cpp)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/bpf_object.cpp.in ${embed} @ONLY)
  set_source_files_properties(${embed} PROPERTIES OBJECT_DEPENDS ${obj})
  set(${B_OUT_SOURCES} ${${B_OUT_SOURCES}} ${embed} PARENT_SCOPE)
endfunction()
