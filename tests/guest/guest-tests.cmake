# The tests that need a kernel the dev and CI machines lack run in a QEMU guest booting
# Debian's stock kernel with this root filesystem shared read-only (tests/guest/), all in one
# boot (guest-tests.sh), as one ctest test: guest_kernel_tests. Included by
# tests/integration/CMakeLists.txt.
#   - DpdkTap.* (the dpdk engine): the tap PMD's rte_flow is made of TC modules (multiq,
#     flower, skbedit, gact) this kernel lacks. Here the steering tests skip, saying why, and
#     DpdkTap.FlowsAreRefusedWhereTheKernelLacksTc checks the refusal; in the guest a missing
#     module fails them (NETDAQ_REQUIRE_TAP_FLOWS=1).
#   - GroDrops.*: the socket engine's per-datagram GRO drop counter on an older kernel, whose
#     udp_fail_queue_rcv_skb tracepoint has no skb (it then loads its fexit program instead).
#   - Software RoCE (roce-sw-check.sh): rxe against netdaq's RoCEv2 receiver and sensor emulator
#     (issue 32), over a veth pair whose netdaq end is in a namespace of its own.
#   - RDMA: Soft-RoCE (rdma_rxe) between two devices over a veth pair (rdma-lab.sh): rdma-core's
#     and perftest's own tools (rdma-peers-check.sh), then netdaq's RDMA tests
#     (tests/integration/rdma/) and `netdaq run examples/rdma-pair.yaml`, when the rdma engine
#     is built.
# CI=true in the guest: nothing there passes by skipping. The guest kernel is fetched once into
# the build directory (a fixture with its own time limit). The guest runs on TCG (no nested
# KVM) and takes a whole CPU: RUN_SERIAL keeps it from starving the timing-bound tests
# (full-speed testpmd senders) of the 2-core machine. ~1.5 minutes.
set(NETDAQ_GUEST_CACHE ${CMAKE_BINARY_DIR}/guest CACHE PATH "Where tests/guest/ keeps the guest kernel")
add_test(NAME guest_kernel_prepare COMMAND ${PROJECT_SOURCE_DIR}/tests/guest/prepare-guest.sh ${NETDAQ_GUEST_CACHE})
set_tests_properties(guest_kernel_prepare PROPERTIES FIXTURES_SETUP guest_kernel LABELS "integration;guest"
                                                     TIMEOUT 900)
set(NETDAQ_GUEST_PARTS --gro $<TARGET_FILE:netdaq_integration_tests>)
if("dpdk" IN_LIST NETDAQ_ENGINES)
  list(APPEND NETDAQ_GUEST_PARTS --dpdk $<TARGET_FILE:netdaq_integration_tests>)
endif()
if("afxdp" IN_LIST NETDAQ_ENGINES)  # the software RoCE path against rxe: afxdp receives and sends
  list(APPEND NETDAQ_GUEST_PARTS --roce-sw $<TARGET_FILE:netdaq_cli>)
endif()
if(TARGET netdaq_rdma_tests)
  list(APPEND NETDAQ_GUEST_PARTS --rdma $<TARGET_FILE:netdaq_rdma_tests> $<TARGET_FILE:netdaq_cli>)
else()
  list(APPEND NETDAQ_GUEST_PARTS --rdma-peers)
endif()
add_test(NAME guest_kernel_tests
         COMMAND ${PROJECT_SOURCE_DIR}/tests/guest/run-in-guest.sh --cache ${NETDAQ_GUEST_CACHE} --timeout 1500
                 --env CI=true -- ${PROJECT_SOURCE_DIR}/tests/guest/guest-tests.sh ${NETDAQ_GUEST_PARTS})
set_tests_properties(guest_kernel_tests PROPERTIES FIXTURES_REQUIRED guest_kernel RUN_SERIAL TRUE
                     LABELS "integration;guest;rdma" TIMEOUT 1600 SKIP_RETURN_CODE 77)
