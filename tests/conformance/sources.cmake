# The conformance suite's sources: the one list that both the CTest program (conformance_test,
# tests/conformance/CMakeLists.txt) and infinirt-selftest (tools/selftest) compile.
set(INFINIRT_CONFORMANCE_DIR ${CMAKE_CURRENT_LIST_DIR})
set(INFINIRT_CONFORMANCE_SOURCES
  ${INFINIRT_CONFORMANCE_DIR}/capture_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/copies_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/device_config_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/device_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/errors_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/events_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/graph_nodes_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/graph_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/ipc_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/memory_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/native_handles_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/pitched_test.cc
  ${INFINIRT_CONFORMANCE_DIR}/../common/raw_enum_calls.c
  ${INFINIRT_CONFORMANCE_DIR}/skip_record.cc
  ${INFINIRT_CONFORMANCE_DIR}/streams_test.cc)
