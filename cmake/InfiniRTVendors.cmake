# The one list of vendor plugins. Everything that names vendors (plugins/, the tests, bench/ and
# the install test) takes them from here.
#
#   infinirt_vendor(<name> [CUDA_FAMILY] EMULATED <variant>:<library file> ...)
#
# <name> is the plugin's name (libinfinirt_<name>.so, folder plugins/<name>/, variable
# INFINIRT_<NAME>_RUNTIME). CUDA_FAMILY: the plugin is the shared CUDA-family translation with
# the vendor's spec, plugins/<name>/<name>_spec.cc. EMULATED: the host-emulated runtimes of
# tests/emulated_runtimes the tests run the plugin over, the complete one first, each as the
# variant (a folder of the build's emulated/ directory) and the library file the plugin opens.
#
# Results: INFINIRT_VENDORS (names, in this order), INFINIRT_CUDA_FAMILY_VENDORS and
# INFINIRT_EMULATED_BACKENDS ("<name>:<variant>:<library file>" for every emulated runtime).
set(INFINIRT_VENDORS "")
set(INFINIRT_CUDA_FAMILY_VENDORS "")
set(INFINIRT_EMULATED_BACKENDS "")

macro(infinirt_vendor name)
  cmake_parse_arguments(INFINIRT_VENDOR_ARG "CUDA_FAMILY" "" "EMULATED" ${ARGN})
  list(APPEND INFINIRT_VENDORS ${name})
  if(INFINIRT_VENDOR_ARG_CUDA_FAMILY)
    list(APPEND INFINIRT_CUDA_FAMILY_VENDORS ${name})
  endif()
  foreach(emulated ${INFINIRT_VENDOR_ARG_EMULATED})
    list(APPEND INFINIRT_EMULATED_BACKENDS ${name}:${emulated})
  endforeach()
endmacro()

infinirt_vendor(nvidia CUDA_FAMILY EMULATED nvidia:libcudart.so.13)
infinirt_vendor(iluvatar CUDA_FAMILY EMULATED iluvatar:libcudart.so)
infinirt_vendor(hygon CUDA_FAMILY EMULATED hygon:libcudart.so)
infinirt_vendor(moore CUDA_FAMILY EMULATED moore:libmusart.so)
# metax_maca_hip: a MACA whose mcMallocHost takes flags and whose attributes are numbered in
# HIP's order (the defensive paths).
infinirt_vendor(metax CUDA_FAMILY EMULATED metax:libmcruntime.so metax_hpcc:libhcruntime.so
                metax_maca_hip:libmcruntime.so)
# ascend_minimal and cambricon_6_0: older runtimes with fewer functions (the NotSupported and
# fallback paths).
infinirt_vendor(ascend EMULATED ascend:libascendcl.so ascend_minimal:libascendcl.so)
infinirt_vendor(cambricon EMULATED cambricon:libcnrt.so cambricon_6_0:libcnrt.so)

# The targets of the vendor plugins: infinirt_<name>.
set(INFINIRT_VENDOR_TARGETS ${INFINIRT_VENDORS})
list(TRANSFORM INFINIRT_VENDOR_TARGETS PREPEND infinirt_)

# infinirt_emulated_library(<variant> <out variable>): the library file of an emulated variant.
function(infinirt_emulated_library variant out)
  foreach(entry ${INFINIRT_EMULATED_BACKENDS})
    string(REPLACE ":" ";" fields ${entry})
    list(GET fields 1 entry_variant)
    if(entry_variant STREQUAL variant)
      list(GET fields 2 file)
      set(${out} ${file} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "no emulated variant ${variant} in cmake/InfiniRTVendors.cmake")
endfunction()
