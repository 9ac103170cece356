# ChainrtInstall.cmake: `cmake --install` (and `colcon build`) of chainrt into a prefix, so that
# another CMake project (a ROS 2 package in a user's workspace) says
#     find_package(chainrt REQUIRED)
#     target_link_libraries(my_node PRIVATE chainrt::runtime)
# No paper section: packaging. Included once, at the end of the top-level CMakeLists.txt, after
# every module defined its target; the modules' own CMakeLists.txt stay free of install rules.
#
# What is installed (<prefix> = CMAKE_INSTALL_PREFIX):
#   lib/libchainrt_<module>.a         static libraries (position-independent)
#   include/chainrt/...               the public headers of every module
#   lib/cmake/chainrt/                chainrtConfig.cmake, chainrtTargets*.cmake, the version
#                                     file and ChainrtROS2.cmake (see below)
#   bin/chainrt-run                   the model runner (when the runtime is built)
#   bin/chainrt                       the CLI, running the installed Python package
#   lib/python3.X/site-packages/chainrt  the Python package with its compiled extension
#   share/chainrt/package.xml, share/ament_index/resource_index/packages/chainrt
#                                     so ROS 2 tools (ament_index, colcon) see the package
#   lib/chainrt/tracing/, share/chainrt/tracing.json
#                                     what `chainrt trace record` preloads (with LTTng-UST)
#
# Imported targets: chainrt::model, chainrt::sched, chainrt::analysis, chainrt::sim, chainrt::synth,
# chainrt::lame and
# chainrt::runtime (the last only when chainrt was built with ROS 2), chainrt::lame_runtime, and
# chainrt::rclcpp (the rclcpp executor, when built with rclcpp; it needs chainrt::ros2_rclcpp,
# re-created like chainrt::ros2). chainrt::runtime needs
# chainrt::ros2, which is NOT exported with absolute paths: chainrtConfig.cmake re-creates it
# with cmake/ChainrtROS2.cmake (the one place that knows how to link the wheels or a sourced
# ROS 2), pinned to the ROS 2 chainrt was built against.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CHAINRT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/chainrt")
# every target installed below (`cmake --install` needs them built: the ros2_tests target)
set(CHAINRT_INSTALLED_TARGETS "")
set(_chainrt_exported "")
foreach(_m model sched analysis sim synth lame accelerator runtime lame_runtime rclcpp)
  set(_t chainrt_${_m})
  if(NOT TARGET ${_t})
    continue()
  endif()
  # The modules give their include folder as a source path; exported targets use <prefix>/include.
  get_target_property(_inc ${_t} INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT _inc)
    set(_inc "")
  endif()
  set(_wrapped "")
  foreach(_d IN LISTS _inc)
    if(_d MATCHES "^\\$<")
      list(APPEND _wrapped "${_d}")
    else()
      list(APPEND _wrapped "$<BUILD_INTERFACE:${_d}>")
      if(IS_DIRECTORY "${_d}/chainrt")
        install(DIRECTORY "${_d}/chainrt" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
      endif()
    endif()
  endforeach()
  list(APPEND _wrapped "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  set_property(TARGET ${_t} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${_wrapped}")
  set_property(TARGET ${_t} PROPERTY EXPORT_NAME ${_m})
  # the public headers are C++20 (defaulted comparisons, designated initializers): a user's
  # target that links one gets C++20 whatever its own CMAKE_CXX_STANDARD
  target_compile_features(${_t} INTERFACE cxx_std_20)
  list(APPEND _chainrt_exported ${_t})
endforeach()

# `target`'s link to the build-tree target chainrt::<dep> (chainrt::ros2, chainrt::ros2_rclcpp) is
# for the build tree only: the installed config re-creates the dependency (see above).
function(_chainrt_build_tree_link target dep)
  get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
  set(new "")
  foreach(l IN LISTS links)
    if(l STREQUAL "chainrt::${dep}" OR l STREQUAL "chainrt_${dep}")
      list(APPEND new "$<BUILD_INTERFACE:chainrt::${dep}>")
    else()
      list(APPEND new "${l}")
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES "${new}")
endfunction()

if(TARGET chainrt_runtime)
  _chainrt_build_tree_link(chainrt_runtime ros2)
  install(TARGETS chainrt-run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  list(APPEND CHAINRT_INSTALLED_TARGETS chainrt-run)
  install(FILES "${PROJECT_SOURCE_DIR}/cmake/ChainrtROS2.cmake" "${PROJECT_SOURCE_DIR}/cmake/ChainrtMsgs.cmake"
          DESTINATION ${CHAINRT_INSTALL_CMAKEDIR})
  set(CHAINRT_CONFIG_WITH_RUNTIME ON)
  set(CHAINRT_CONFIG_ROS2_KIND "${CHAINRT_ROS2_KIND}")
  set(CHAINRT_CONFIG_ROS2_PREFIX "${CHAINRT_ROS2_PREFIX}")
  set(CHAINRT_CONFIG_ROS2_PREFIXES "${CHAINRT_ROS2_PREFIXES}")
  set(CHAINRT_CONFIG_VENV "${CHAINRT_VENV}")
else()
  set(CHAINRT_CONFIG_WITH_RUNTIME OFF)
endif()

if(TARGET chainrt_rclcpp)
  # chainrt::ros2_rclcpp, as chainrt::ros2: re-created by the installed config, pinned to the
  # rclcpp chainrt was built against.
  _chainrt_build_tree_link(chainrt_rclcpp ros2_rclcpp)
  install(TARGETS chainrt_component_container RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  list(APPEND CHAINRT_INSTALLED_TARGETS chainrt_component_container)
  set(CHAINRT_CONFIG_WITH_RCLCPP ON)
  set(CHAINRT_CONFIG_RCLCPP_PREFIX "${CHAINRT_RCLCPP_PREFIX}")
else()
  set(CHAINRT_CONFIG_WITH_RCLCPP OFF)
  set(CHAINRT_CONFIG_RCLCPP_PREFIX "")
endif()

list(APPEND CHAINRT_INSTALLED_TARGETS ${_chainrt_exported})
install(TARGETS ${_chainrt_exported} EXPORT chainrtTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT chainrtTargets NAMESPACE chainrt:: DESTINATION ${CHAINRT_INSTALL_CMAKEDIR})
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/chainrtConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/chainrtConfig.cmake" INSTALL_DESTINATION ${CHAINRT_INSTALL_CMAKEDIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/chainrtConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/chainrtConfig.cmake" "${PROJECT_BINARY_DIR}/chainrtConfigVersion.cmake"
  DESTINATION ${CHAINRT_INSTALL_CMAKEDIR})

# ROS 2 package metadata: the manifest and the ament index marker (`ros2 pkg list` lists it).
install(FILES "${PROJECT_SOURCE_DIR}/package.xml" DESTINATION ${CMAKE_INSTALL_DATADIR}/chainrt)
file(WRITE "${PROJECT_BINARY_DIR}/ament_index_marker/chainrt" "")
install(FILES "${PROJECT_BINARY_DIR}/ament_index_marker/chainrt"
  DESTINATION ${CMAKE_INSTALL_DATADIR}/ament_index/resource_index/packages)
install(FILES "${PROJECT_SOURCE_DIR}/examples/two_chains.yaml"
  DESTINATION ${CMAKE_INSTALL_DATADIR}/chainrt/examples)

# The tracing libraries that `chainrt trace record` preloads (runtime/tracing/, docs/tracing.md),
# with the same layout as <build>/tracing/, in a private folder lib/chainrt/tracing/: never lib/
# itself, where the tracetools-compatible libtracetools.so would shadow the real tracetools of
# every package of a merged workspace (colcon puts <prefix>/lib on LD_LIBRARY_PATH).
# share/chainrt/tracing.json is <build>/chainrt_tracing.json with each path made relative to the
# folder of tracing.json, so the prefix can be moved; the installed Python package finds it as
# <its prefix>/share/chainrt/tracing.json (python/chainrt/tracing_record.py).
if(TARGET chainrt_tracing AND EXISTS "${PROJECT_BINARY_DIR}/chainrt_tracing.json")
  set(_tr_build "${PROJECT_BINARY_DIR}/tracing")
  set(_tr_dest "${CMAKE_INSTALL_LIBDIR}/chainrt/tracing")
  install(TARGETS chainrt_tracing LIBRARY DESTINATION ${_tr_dest})
  install(TARGETS chainrt_tracetools LIBRARY DESTINATION ${_tr_dest}/tracetools)
  list(APPEND CHAINRT_INSTALLED_TARGETS chainrt_tracing chainrt_tracetools)
  set(_i 0)
  while(TARGET chainrt_tracing_stub${_i})
    install(TARGETS chainrt_tracing_stub${_i} LIBRARY DESTINATION ${_tr_dest}/stubs)
    list(APPEND CHAINRT_INSTALLED_TARGETS chainrt_tracing_stub${_i})
    math(EXPR _i "${_i} + 1")
  endwhile()
  if(IS_ABSOLUTE "${_tr_dest}" OR IS_ABSOLUTE "${CMAKE_INSTALL_DATADIR}")
    message(FATAL_ERROR "chainrt: the tracing install needs a relative CMAKE_INSTALL_LIBDIR and DATADIR")
  endif()
  file(RELATIVE_PATH _tr_rel "/p/${CMAKE_INSTALL_DATADIR}/chainrt" "/p/${_tr_dest}")
  file(READ "${PROJECT_BINARY_DIR}/chainrt_tracing.json" _tr_json)
  string(JSON _lib GET "${_tr_json}" chainrt)
  string(REPLACE "${_tr_build}/" "${_tr_rel}/" _lib "${_lib}")
  string(JSON _tr_json SET "${_tr_json}" chainrt "\"${_lib}\"")
  string(JSON _n LENGTH "${_tr_json}" ros2_preload)
  if(_n GREATER 0)
    math(EXPR _last "${_n} - 1")
    foreach(_k RANGE ${_last})
      string(JSON _lib GET "${_tr_json}" ros2_preload ${_k})
      string(REPLACE "${_tr_build}/" "${_tr_rel}/" _lib "${_lib}")
      string(JSON _tr_json SET "${_tr_json}" ros2_preload ${_k} "\"${_lib}\"")
    endforeach()
  endif()
  string(FIND "${_tr_json}" "${PROJECT_BINARY_DIR}" _pos)
  if(_pos GREATER -1)
    message(FATAL_ERROR "chainrt: a tracing library outside ${_tr_build} is not installed: ${_tr_json}")
  endif()
  file(WRITE "${PROJECT_BINARY_DIR}/install_tracing/tracing.json" "${_tr_json}\n")
  install(FILES "${PROJECT_BINARY_DIR}/install_tracing/tracing.json"
    DESTINATION ${CMAKE_INSTALL_DATADIR}/chainrt)
endif()

# The Python package (with chainrt._core and chainrt._rclpy_exec, built into
# <build>/python/chainrt/) and a `chainrt` launcher
# that runs it with the interpreter chainrt was built with (it has numpy, matplotlib, PyYAML
# and, for the wheels, rclpy).
if(CHAINRT_BUILD_PYTHON AND TARGET _core)
  set(_pyexe "${Python_EXECUTABLE}")
  if(NOT _pyexe)
    find_package(Python 3.10 COMPONENTS Interpreter REQUIRED)
    set(_pyexe "${Python_EXECUTABLE}")
  endif()
  execute_process(COMMAND "${_pyexe}" -c "import sys; print(f'python{sys.version_info[0]}.{sys.version_info[1]}')"
    OUTPUT_VARIABLE _pyver OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(CHAINRT_INSTALL_PYTHONDIR "${CMAKE_INSTALL_LIBDIR}/${_pyver}/site-packages")
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/python/chainrt" DESTINATION ${CHAINRT_INSTALL_PYTHONDIR}
    PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE PATTERN "*.so" EXCLUDE)
  foreach(_ext _core _rclpy_exec)
    if(TARGET ${_ext})
      install(TARGETS ${_ext} LIBRARY DESTINATION ${CHAINRT_INSTALL_PYTHONDIR}/chainrt)
      list(APPEND CHAINRT_INSTALLED_TARGETS ${_ext})
    endif()
  endforeach()
  install(CODE "
    set(_py \"${_pyexe}\")
    set(_dest \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/chainrt\")
    file(WRITE \"\${_dest}\" \"#!\${_py}\n# chainrt CLI of this install prefix (generated by cmake --install)\nimport os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), '${CHAINRT_INSTALL_PYTHONDIR}'))\nfrom chainrt.cli import main\nsys.exit(main())\n\")
    file(CHMOD \"\${_dest}\" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
    message(STATUS \"Installing: \${_dest}\")")
endif()
