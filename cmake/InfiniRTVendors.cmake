# The vendors and device types, read from their one table, config/vendors.json (what each field
# means is in its "_comment"). Everything the build does per vendor (plugins/, infiniccl, tools/,
# python/, the tests, bench/ and the install test) takes the vendors from the results below, or
# from the C++ header generated here; no other file lists them (vendor_table_single_source).
#
# Results, in the table's row order (plugin order: the tests and the support matrix follow it):
#   INFINIRT_DEVICE_TYPE_NAMES         every row's name: the CPU and types without a plugin too
#   INFINIRT_VENDORS                   the vendor plugins' names (family neither cpu nor none)
#   INFINIRT_CUDA_FAMILY_VENDORS       those built as the CUDA-family translation
#   INFINIRT_OPERATOR_BACKEND_VENDORS  the vendors with an operator backend (libinfiniop_<name>.so)
#   INFINIRT_EMULATED_BACKENDS         "<name>:<variant>:<library file>" per emulated runtime
#   INFINIRT_VENDOR_TARGETS            the vendor plugins' targets, infinirt_<name>
#   INFINIRT_VENDOR_TABLE_FILE         the table's path
#   INFINIRT_VENDOR_TABLE_INCLUDE_DIR  where infinirt_vendor_table.h is generated (the rows as an
#                                      X-macro, for C and C++)
# and the functions infinirt_vendor_get, infinirt_vendors_where, infinirt_vendor_array_length,
# infinirt_vendor_candidates, infinirt_emulated_library, infinirt_emulated_vendor and
# infinirt_default_emulation.
set(INFINIRT_VENDOR_TABLE_FILE ${PROJECT_SOURCE_DIR}/config/vendors.json)
file(READ ${INFINIRT_VENDOR_TABLE_FILE} INFINIRT_VENDOR_TABLE_JSON)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${INFINIRT_VENDOR_TABLE_FILE})

function(infinirt_vendor_table_error message)
  message(FATAL_ERROR "config/vendors.json: ${message}")
endfunction()

# infinirt_vendor_get(<name> <out> [OPTIONAL] <key>...): the value at <key>... of the row <name>
# (JSON text for an object or array; ON/OFF for a boolean). A missing key is an error, or ""
# with OPTIONAL.
function(infinirt_vendor_get name out)
  cmake_parse_arguments(ARG "OPTIONAL" "" "" ${ARGN})
  if(NOT DEFINED INFINIRT_VENDOR_ROW_${name})
    infinirt_vendor_table_error("no row named ${name}")
  endif()
  string(JSON value ERROR_VARIABLE missing
    GET "${INFINIRT_VENDOR_TABLE_JSON}" vendors ${INFINIRT_VENDOR_ROW_${name}}
    ${ARG_UNPARSED_ARGUMENTS})
  if(missing)
    if(NOT ARG_OPTIONAL)
      string(REPLACE ";" "." path "${ARG_UNPARSED_ARGUMENTS}")
      infinirt_vendor_table_error("${name} has no ${path}")
    endif()
    set(value "")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# infinirt_vendors_where(<out> <key>... EQUALS <value>): the rows (of every device type) whose
# value at <key>... is <value>, in table order. A row without the key has none.
function(infinirt_vendors_where out)
  cmake_parse_arguments(ARG "" "EQUALS" "" ${ARGN})
  set(found "")
  foreach(name ${INFINIRT_DEVICE_TYPE_NAMES})
    infinirt_vendor_get(${name} value OPTIONAL ${ARG_UNPARSED_ARGUMENTS})
    if(value STREQUAL ARG_EQUALS)
      list(APPEND found ${name})
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# infinirt_vendor_array_length(<name> <out> <key>...): the length of an array of the row, 0 when
# the row has no such key.
function(infinirt_vendor_array_length name out)
  string(JSON length ERROR_VARIABLE missing
    LENGTH "${INFINIRT_VENDOR_TABLE_JSON}" vendors ${INFINIRT_VENDOR_ROW_${name}} ${ARGN})
  if(missing)
    set(length 0)
  endif()
  set(${out} ${length} PARENT_SCOPE)
endfunction()

# infinirt_vendor_candidates(<name> <section> <out>): the candidates of the row's <section>
# (runtime or collectives) as the lines of a C++ array initializer ("    \"libcudart.so.13\",\n").
# They are compiled in as string literals: a quote or backslash is refused.
function(infinirt_vendor_candidates name section out)
  infinirt_vendor_array_length(${name} count ${section} candidates)
  set(lines "")
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      infinirt_vendor_get(${name} candidate ${section} candidates ${i})
      if(candidate MATCHES "[\"\\\\]")
        infinirt_vendor_table_error("${name}.${section}: quotes and backslashes are not allowed in a candidate: ${candidate}")
      endif()
      string(APPEND lines "    \"${candidate}\",\n")
    endforeach()
  endif()
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

# --- Reading the rows -----------------------------------------------------------------------

set(INFINIRT_KNOWN_FAMILIES cpu cuda_family none)  # and a plugin of its own: the row's name
set(INFINIRT_KNOWN_DLPACK_TYPES kDLCPU kDLCUDA kDLROCM kDLExtDev)

# The checks of one row that CMake can make; the C++ and the tests rely on them.
function(infinirt_check_vendor_row name)
  if(NOT name MATCHES "^[a-z][a-z0-9_]*$")
    infinirt_vendor_table_error("a name must be lower-case letters, digits and _: ${name}")
  endif()
  string(TOUPPER ${name} upper)
  infinirt_vendor_get(${name} enumerator device_type enumerator)
  if(NOT enumerator STREQUAL upper)
    infinirt_vendor_table_error("${name}: device_type.enumerator must be ${upper}")
  endif()
  infinirt_vendor_get(${name} display device_type display)
  if(display STREQUAL "" OR display MATCHES "[\"\\\\]")
    infinirt_vendor_table_error("${name}: device_type.display must be text without quotes")
  endif()
  infinirt_vendor_get(${name} family family)
  if(NOT family IN_LIST INFINIRT_KNOWN_FAMILIES AND NOT family STREQUAL name)
    infinirt_vendor_table_error("${name}: family must be cpu, cuda_family, none or ${name} (a plugin of its own), not ${family}")
  endif()
  infinirt_vendor_get(${name} dlpack dlpack)
  if(NOT dlpack IN_LIST INFINIRT_KNOWN_DLPACK_TYPES)
    infinirt_vendor_table_error("${name}: dlpack must be one of ${INFINIRT_KNOWN_DLPACK_TYPES}")
  endif()
  infinirt_vendor_get(${name} engine OPTIONAL collectives engine)
  if(NOT engine MATCHES "^[a-z][a-z0-9_]*$")
    infinirt_vendor_table_error("${name}: collectives.engine must name an engine (cpu, nccl, ...)")
  endif()
  infinirt_check_vendor_runtime(${name} ${family})
  infinirt_check_vendor_collectives(${name} ${engine})
endfunction()

# A vendor plugin's runtime section: its variable is INFINIRT_<NAME>_RUNTIME.
function(infinirt_check_vendor_runtime name family)
  infinirt_vendor_get(${name} env OPTIONAL runtime env)
  if(family STREQUAL "cpu" OR family STREQUAL "none")
    if(NOT env STREQUAL "")
      infinirt_vendor_table_error("${name}: a type without a vendor plugin has no runtime")
    endif()
    return()
  endif()
  string(TOUPPER "INFINIRT_${name}_RUNTIME" expected)
  if(NOT env STREQUAL expected)
    infinirt_vendor_table_error("${name}: runtime.env must be ${expected}")
  endif()
  infinirt_vendor_candidates(${name} runtime unused)  # checks them
endfunction()

# A collective library's section: its variable is INFINICCL_<NAME>_LIBRARY; the NCCL engine's
# vendors also name the symbol prefix of their NCCL-shaped library.
function(infinirt_check_vendor_collectives name engine)
  infinirt_vendor_get(${name} env OPTIONAL collectives env)
  if(env STREQUAL "")
    if(engine STREQUAL "nccl")
      infinirt_vendor_table_error("${name}: the NCCL engine needs the vendor's library (collectives.env, library, symbol_prefix, candidates)")
    endif()
    return()
  endif()
  string(TOUPPER "INFINICCL_${name}_LIBRARY" expected)
  infinirt_vendor_get(${name} library collectives library)
  if(NOT env STREQUAL expected OR library MATCHES "[\"\\\\]")
    infinirt_vendor_table_error("${name}: collectives.env must be ${expected}, collectives.library free of quotes")
  endif()
  if(engine STREQUAL "nccl")
    infinirt_vendor_get(${name} prefix collectives symbol_prefix)
    if(NOT prefix MATCHES "^[a-z]+$")
      infinirt_vendor_table_error("${name}: collectives.symbol_prefix must be lower-case letters")
    endif()
  endif()
  infinirt_vendor_candidates(${name} collectives unused)  # checks them
endfunction()

# The device types' values are InfiniCore's, consecutive from 0, so that INFINI_DEVICE_TYPE_COUNT
# sizes an array indexed by type.
function(infinirt_check_device_type_values)
  set(values "")
  foreach(name ${INFINIRT_DEVICE_TYPE_NAMES})
    infinirt_vendor_get(${name} value device_type value)
    if(value IN_LIST values)
      infinirt_vendor_table_error("device type value ${value} is taken twice")
    endif()
    list(APPEND values ${value})
  endforeach()
  list(LENGTH values count)
  math(EXPR last "${count} - 1")
  foreach(value RANGE ${last})
    if(NOT value IN_LIST values)
      infinirt_vendor_table_error("the device type values must be consecutive from 0: ${value} is missing")
    endif()
  endforeach()
endfunction()

set(INFINIRT_DEVICE_TYPE_NAMES "")
set(INFINIRT_VENDORS "")
set(INFINIRT_CUDA_FAMILY_VENDORS "")
set(INFINIRT_OPERATOR_BACKEND_VENDORS "")
set(INFINIRT_EMULATED_BACKENDS "")
string(JSON row_count LENGTH "${INFINIRT_VENDOR_TABLE_JSON}" vendors)
math(EXPR last_row "${row_count} - 1")
foreach(row RANGE ${last_row})
  string(JSON name GET "${INFINIRT_VENDOR_TABLE_JSON}" vendors ${row} name)
  if(DEFINED INFINIRT_VENDOR_ROW_${name})
    infinirt_vendor_table_error("two rows are named ${name}")
  endif()
  set(INFINIRT_VENDOR_ROW_${name} ${row})
  list(APPEND INFINIRT_DEVICE_TYPE_NAMES ${name})
  infinirt_check_vendor_row(${name})
  infinirt_vendor_get(${name} family family)
  if(family STREQUAL "cpu" OR family STREQUAL "none")
    continue()
  endif()
  list(APPEND INFINIRT_VENDORS ${name})
  if(family STREQUAL "cuda_family")
    list(APPEND INFINIRT_CUDA_FAMILY_VENDORS ${name})
  endif()
  infinirt_vendor_get(${name} operator_backend operator_backend)
  if(operator_backend)
    list(APPEND INFINIRT_OPERATOR_BACKEND_VENDORS ${name})
  endif()
  infinirt_vendor_array_length(${name} emulated_count emulated)
  if(emulated_count GREATER 0)
    math(EXPR last_emulated "${emulated_count} - 1")
    foreach(i RANGE ${last_emulated})
      infinirt_vendor_get(${name} variant emulated ${i} variant)
      infinirt_vendor_get(${name} library emulated ${i} library)
      list(APPEND INFINIRT_EMULATED_BACKENDS ${name}:${variant}:${library})
      set(INFINIRT_EMULATED_VENDOR_${variant} ${name})
    endforeach()
  endif()
endforeach()
infinirt_check_device_type_values()

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
  message(FATAL_ERROR "no emulated variant ${variant} in config/vendors.json")
endfunction()

# infinirt_default_emulation(<vendor> <variant out> <library file out>): the emulated runtime a
# vendor's tests run over unless they say otherwise: its first, the complete one.
function(infinirt_default_emulation vendor variant_out library_out)
  infinirt_vendor_get(${vendor} variant emulated 0 variant)
  infinirt_vendor_get(${vendor} library emulated 0 library)
  set(${variant_out} ${variant} PARENT_SCOPE)
  set(${library_out} ${library} PARENT_SCOPE)
endfunction()

# infinirt_emulated_vendor(<variant> <out variable>): the vendor an emulated variant stands for.
function(infinirt_emulated_vendor variant out)
  if(NOT DEFINED INFINIRT_EMULATED_VENDOR_${variant})
    message(FATAL_ERROR "no emulated variant ${variant} in config/vendors.json")
  endif()
  set(${out} ${INFINIRT_EMULATED_VENDOR_${variant}} PARENT_SCOPE)
endfunction()

# --- The table for C and C++: infinirt_vendor_table.h ---------------------------------------

# One X-macro entry per row: X(name, ENUMERATOR, family, collective engine, DLPack device type,
# operator backend 0 or 1), in table order.
function(infinirt_vendor_table_entries out)
  set(entries "")
  foreach(name ${INFINIRT_DEVICE_TYPE_NAMES})
    string(TOUPPER ${name} upper)
    infinirt_vendor_get(${name} family family)
    infinirt_vendor_get(${name} engine OPTIONAL collectives engine)
    if(engine STREQUAL "")
      set(engine none)
    endif()
    infinirt_vendor_get(${name} dlpack dlpack)
    infinirt_vendor_get(${name} operator_backend operator_backend)
    if(operator_backend)
      set(operator_backend 1)
    else()
      set(operator_backend 0)
    endif()
    string(APPEND entries
      "  X(${name}, ${upper}, ${family}, ${engine}, ${dlpack}, ${operator_backend}) \\\n")
  endforeach()
  set(${out} "${entries}" PARENT_SCOPE)
endfunction()

set(INFINIRT_VENDOR_TABLE_INCLUDE_DIR ${PROJECT_BINARY_DIR}/generated)
infinirt_vendor_table_entries(INFINIRT_VENDOR_TABLE_ENTRIES)
configure_file(${CMAKE_CURRENT_LIST_DIR}/infinirt_vendor_table.h.in
  ${INFINIRT_VENDOR_TABLE_INCLUDE_DIR}/infinirt_vendor_table.h @ONLY)
