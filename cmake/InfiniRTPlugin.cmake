# infinirt_add_plugin(<name> SOURCES ... [LIBRARIES ...] [EXPORTS_MAP <version script>])
# Builds libinfinirt_<name>.so as a MODULE into lib/infinirt/ of the build tree and installs it
# to lib/infinirt/. A plugin sees only the public headers (infinirt.h, infinirt_plugin.h),
# exports only its entry point, and never links the core or spdlog. Installed plugins are listed
# in the global property INFINIRT_INSTALLED_PLUGIN_TARGETS.
set(INFINIRT_PLUGIN_EXPORTS_MAP ${CMAKE_CURRENT_LIST_DIR}/plugin_exports.map)
function(infinirt_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIRECTORY;EXPORTS_MAP"
                        "SOURCES;LIBRARIES;DEFINITIONS" ${ARGN})
  if(NOT ARG_EXPORTS_MAP)
    set(ARG_EXPORTS_MAP ${INFINIRT_PLUGIN_EXPORTS_MAP})
  endif()
  set(target infinirt_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  if(NOT ARG_OUTPUT_DIRECTORY)
    set(ARG_OUTPUT_DIRECTORY ${INFINIRT_PLUGIN_OUTPUT_DIR})
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME infinirt_${name}
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(${target} PRIVATE ${ARG_DEFINITIONS})
  target_link_libraries(${target} PRIVATE Threads::Threads ${ARG_LIBRARIES})
  target_link_options(${target} PRIVATE ${INFINIRT_NO_UNDEFINED}
    -Wl,--version-script=${ARG_EXPORTS_MAP})
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${ARG_EXPORTS_MAP})
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${INFINIRT_PLUGIN_INSTALL_DIR})
    set_property(GLOBAL APPEND PROPERTY INFINIRT_INSTALLED_PLUGIN_TARGETS ${target})
  endif()
endfunction()
