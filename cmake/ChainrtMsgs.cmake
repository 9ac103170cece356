# ChainrtMsgs.cmake: chainrt_msgs, the typed monitoring messages of chainrt's executors
# (msgs/chainrt_msgs, an ordinary ROS 2 interface package), generated with rosidl from the ROS 2
# chainrt uses (the wheels' generators, or a sourced ROS 2's). Included by ChainrtROS2.cmake once
# chainrt::ros2 exists. No paper section: build plumbing.
#
# In the build tree the package is an external project of the build: configured, generated,
# compiled and installed into <build>/chainrt_msgs/install by the first build, then again only
# when one of its files or its configuration changed (ninja sees nothing to do otherwise).
# `cmake --install` of chainrt installs it into chainrt's prefix (its libraries, headers, Python
# package and ament index entry beside chainrt's). CHAINRT_MSGS_PIN_PREFIX names a prefix that
# holds the package already, and nothing is built: an installed chainrtConfig.cmake sets it to
# chainrt's prefix, scripts/sanitizers to the main build's.
#
# Results:
#   chainrt::msgs              INTERFACE target: chainrt_msgs' headers and C++ type support. In
#                              the build tree only the code that uses the messages links it (the
#                              other targets' compile lines, and so their ccache entries, stay as
#                              they are); an installed chainrt::ros2 links it.
#   CHAINRT_MSGS_PREFIX        the prefix that holds the package
#   CHAINRT_MSGS_LIBRARY_DIR   its libraries (for the run-time environment files)
#   CHAINRT_MSGS_PYTHON_DIR    its Python package's folder (the same)

set(_msgs_libparts rosidl_typesupport_cpp rosidl_generator_c)
set(_msgs_py "${Python_EXECUTABLE}")
if(_ros_kind STREQUAL "wheels")
  set(_msgs_py "${_ros_prefix}/bin/python")  # the wheels' generators run in their virtualenv
endif()
if(CHAINRT_MSGS_PIN_PREFIX)
  set(CHAINRT_MSGS_PREFIX "${CHAINRT_MSGS_PIN_PREFIX}")
else()
  include(ExternalProject)
  set(CHAINRT_MSGS_PREFIX "${CMAKE_BINARY_DIR}/chainrt_msgs/install")
  set(_msgs_src "${PROJECT_SOURCE_DIR}/msgs/chainrt_msgs")
  # The package's libraries find each other and ROS 2's through their run path ($ORIGIN: the
  # libraries' folder; $ORIGIN/../../..: the same folder seen from the Python extension modules
  # in lib/python3.X/site-packages/chainrt_msgs), wherever the prefix is installed.
  set(_msgs_rpath "\$ORIGIN" "\$ORIGIN/../../.." ${_ros_rpath})
  set(_msgs_ldflags "-Wl,--allow-shlib-undefined -Wl,--disable-new-dtags")
  # The wheels' CMake exports as scripts/build_ros2 corrects them in rclcpp's prefix (its shims,
  # cmake/ros2_wheel_fixes.cmake), also where rclcpp itself could not be built there.
  set(_msgs_prefixes ${_ros_all_prefixes})
  if(_ros_kind STREQUAL "wheels" AND CHAINRT_RCLCPP_PREFIX AND EXISTS "${CHAINRT_RCLCPP_PREFIX}/share/chainrt_wheel_fixes"
     AND NOT CHAINRT_RCLCPP_PREFIX IN_LIST _msgs_prefixes)
    list(INSERT _msgs_prefixes 0 "${CHAINRT_RCLCPP_PREFIX}")
  endif()
  # The package's CMake configuration, in one file: a change reconfigures and rebuilds it.
  set(_msgs_init "")
  foreach(kv "CMAKE_BUILD_TYPE=Release" "BUILD_TESTING=OFF" "CMAKE_INSTALL_PREFIX=${CHAINRT_MSGS_PREFIX}"
             "CMAKE_PREFIX_PATH=${_msgs_prefixes}" "Python3_EXECUTABLE=${_msgs_py}" "Python_EXECUTABLE=${_msgs_py}"
             "CMAKE_INSTALL_RPATH=${_msgs_rpath}" "CMAKE_SHARED_LINKER_FLAGS=${_msgs_ldflags}"
             "CMAKE_MODULE_LINKER_FLAGS=${_msgs_ldflags}" "CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER}"
             "CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}")
    string(FIND "${kv}" "=" _eq)
    string(SUBSTRING "${kv}" 0 ${_eq} _k)
    math(EXPR _vs "${_eq} + 1")
    string(SUBSTRING "${kv}" ${_vs} -1 _v)
    string(APPEND _msgs_init "set(${_k} \"${_v}\" CACHE STRING \"\" FORCE)\n")
  endforeach()
  set(_msgs_init_file "${CMAKE_BINARY_DIR}/chainrt_msgs/init.cmake")
  file(CONFIGURE OUTPUT "${_msgs_init_file}" CONTENT "${_msgs_init}")  # written only when it changed
  # ament's CMake finds the type support packages through the ament index
  string(REPLACE ";" ":" _msgs_ament "${_msgs_prefixes}")
  set(_msgs_env "${CMAKE_COMMAND}" -E env "AMENT_PREFIX_PATH=${_msgs_ament}" "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}")
  set(_msgs_byproducts "")
  foreach(part ${_msgs_libparts})
    list(APPEND _msgs_byproducts "${CHAINRT_MSGS_PREFIX}/lib/libchainrt_msgs__${part}.so")
  endforeach()
  file(GLOB _msgs_files CONFIGURE_DEPENDS "${_msgs_src}/msg/*.msg")
  ExternalProject_Add(chainrt_msgs_build
    PREFIX "${CMAKE_BINARY_DIR}/chainrt_msgs"
    SOURCE_DIR "${_msgs_src}"
    BINARY_DIR "${CMAKE_BINARY_DIR}/chainrt_msgs/build"
    INSTALL_DIR "${CHAINRT_MSGS_PREFIX}"
    CONFIGURE_COMMAND ${_msgs_env} "${CMAKE_COMMAND}" -C "${_msgs_init_file}" -G "${CMAKE_GENERATOR}" -S <SOURCE_DIR> -B <BINARY_DIR>
    BUILD_COMMAND ${_msgs_env} "${CMAKE_COMMAND}" --build <BINARY_DIR>
    INSTALL_COMMAND ${_msgs_env} "${CMAKE_COMMAND}" --install <BINARY_DIR>
    BUILD_BYPRODUCTS ${_msgs_byproducts}
    LOG_CONFIGURE ON LOG_BUILD ON LOG_INSTALL ON LOG_OUTPUT_ON_FAILURE ON)
  ExternalProject_Add_StepDependencies(chainrt_msgs_build configure "${_msgs_init_file}"
    "${_msgs_src}/CMakeLists.txt" "${_msgs_src}/package.xml" ${_msgs_files})
  # `cmake --install` of chainrt installs the package into chainrt's prefix
  install(DIRECTORY "${CHAINRT_MSGS_PREFIX}/" DESTINATION "." USE_SOURCE_PERMISSIONS)
endif()
set(CHAINRT_MSGS_LIBRARY_DIR "${CHAINRT_MSGS_PREFIX}/lib")
# its Python package (ament's layout: lib/python3.X/site-packages of the generating Python)
execute_process(COMMAND "${_msgs_py}" -c "import sys; print('%d.%d' % sys.version_info[:2])"
  OUTPUT_VARIABLE _msgs_pyver OUTPUT_STRIP_TRAILING_WHITESPACE)
set(CHAINRT_MSGS_PYTHON_DIR "${CHAINRT_MSGS_PREFIX}/lib/python${_msgs_pyver}/site-packages")

set(_msgs_links "")
foreach(part ${_msgs_libparts})
  list(APPEND _msgs_links "${CHAINRT_MSGS_LIBRARY_DIR}/libchainrt_msgs__${part}.so")
endforeach()
add_library(chainrt_msgs INTERFACE)
add_library(chainrt::msgs ALIAS chainrt_msgs)
target_include_directories(chainrt_msgs SYSTEM INTERFACE "${CHAINRT_MSGS_PREFIX}/include/chainrt_msgs")
target_link_libraries(chainrt_msgs INTERFACE ${_msgs_links})
target_link_options(chainrt_msgs INTERFACE "LINKER:-rpath,${CHAINRT_MSGS_LIBRARY_DIR}")
if(CHAINRT_MSGS_PIN_PREFIX)
  target_link_libraries(chainrt_ros2 INTERFACE chainrt_msgs)
else()
  add_dependencies(chainrt_msgs chainrt_msgs_build)  # followed by every target that links it
endif()
