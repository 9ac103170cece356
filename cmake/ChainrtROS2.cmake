# ChainrtROS2.cmake: finds ROS 2 (rcl + an rmw + std_msgs) for the chainrt runtime, once, for
# every target that needs it. Owned by the runtime; no paper section: build plumbing.
#
# Two sources of ROS 2 are supported:
#   sourced  a user's installation: AMENT_PREFIX_PATH lists a prefix holding include/rcl/rcl/
#            and lib/librcl.so (the standard "include/<pkg>/<pkg>/..." layout of Humble+).
#   wheels   the ros-<distro>-* PyPI wheels installed in the project's virtualenv (CHAINRT_VENV,
#            default <repo>/.venv; scripts/setup gives each ROS 2 line its own, e.g.
#            <repo>/.venv-jazzy). Their shared libraries carry RPATHs that do not resolve
#            from <venv>/lib, their rosidl_generator_py libraries need libpython, and their
#            vendored dependencies live in site-packages/ros_*.libs. We link with DT_RPATH
#            (not RUNPATH) so that these folders also serve the libraries' own dependencies.
# A sourced installation wins; env CHAINRT_ROS=wheels forces the wheels.
#
# CHAINRT_WITH_ROS2: AUTO (skip the runtime with a message when none is found), ON (fail).
#
# Results:
#   CHAINRT_HAVE_ROS2      ON when found
#   chainrt::ros2          INTERFACE target: include dirs, libraries, link and run paths
#   CHAINRT_ROS2_KIND      sourced | wheels
#   CHAINRT_ROS2_PREFIX    the prefix that holds rcl
#   CHAINRT_ROS2_PREFIXES  every prefix used (the sourced AMENT_PREFIX_PATH, or the venv)
#   CHAINRT_ROS_DISTRO     the ROS 2 line found: kilted | jazzy (from rcl's version: 10 | 9; a
#                          sourced ROS 2's ROS_DISTRO). The lines differ in a few APIs and
#                          behaviours; C++ code reads CHAINRT_ROS_DISTRO_<LINE>=1 and the
#                          compatibility header runtime/include/chainrt/runtime/ros_compat.hpp.
#                          A -DCHAINRT_ROS_DISTRO given to CMake (scripts/setup does) must agree.
# CHAINRT_ROS2_PIN_PREFIX/_KIND/_PREFIXES, when set (by an installed chainrtConfig.cmake), name
# the one ROS 2 to use: the one chainrt was built against.
#   CHAINRT_ROS2_ENV       list of VAR=value for running a program that uses ROS 2
#                          (AMENT_PREFIX_PATH, RMW_IMPLEMENTATION)
#   CHAINRT_ROS2_LIBRARY_PATH  the library folders, ':'-separated; NOT needed by our binaries
#                          (the RPATH is enough), only a note for foreign programs
#   CHAINRT_HAVE_RCLCPP    ON when rclcpp (+ action, lifecycle, components) was found:
#   chainrt::ros2_rclcpp   INTERFACE target for code using rclcpp (on top of chainrt::ros2)
#   CHAINRT_RCLCPP_PREFIX  the prefix holding rclcpp: a sourced ROS 2's, or the one
#                          scripts/build_ros2 built against the wheels (<repo>/.ros2/<distro>/install)
#   CHAINRT_RCLCPP_SKIPPED why not (one line), when CHAINRT_HAVE_RCLCPP is OFF
#   chainrt_ros2_link_interfaces(<target> <pkg>...)
#                          link the C++ type support of ROS interface packages (test_msgs, ...)
#   chainrt_ros2_test_environment(<out-var> <test-name>)
#                          CHAINRT_ROS2_ENV plus a ROS_DOMAIN_ID unique to the test and
#                          ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (for ctest ENVIRONMENT)
#   <build>/chainrt_ros2_env.sh    `source`-able file with the same run-time environment
#   <build>/chainrt_ros2_env.json  the same as JSON (read by python/chainrt/runtime.py)
#   chainrt::ros2 also has chainrt_msgs, the executors' monitoring messages (ChainrtMsgs.cmake)

set(CHAINRT_HAVE_ROS2 OFF)
set(CHAINRT_VENV "${PROJECT_SOURCE_DIR}/.venv" CACHE PATH "virtualenv with the ros-<distro> wheels")

# Why the rcl runtime cannot be built: an error with CHAINRT_WITH_ROS2=ON, else a status line
# (the caller returns).
function(_chainrt_ros2_unusable why hint)
  if(CHAINRT_WITH_ROS2 STREQUAL "ON")
    message(FATAL_ERROR "chainrt: CHAINRT_WITH_ROS2=ON but ${why}. ${hint}")
  endif()
  message(STATUS "chainrt: ${why}; the rcl runtime (runtime/, tests/cpp/runtime) is SKIPPED. ${hint}")
endfunction()

# ON in `out` when every path of `paths` exists under `prefix`.
function(_chainrt_ros2_has prefix paths out)
  set(ok ON)
  foreach(p IN LISTS paths)
    if(NOT EXISTS "${prefix}/${p}")
      set(ok OFF)
    endif()
  endforeach()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

function(_chainrt_ros2_is_prefix prefix out)
  _chainrt_ros2_has("${prefix}" "include/rcl/rcl/rcl.h;lib/librcl.so" ok)
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

set(_ros_prefix "")
set(_ros_kind "")
set(_ros_all_prefixes "")
if(CHAINRT_ROS2_PIN_PREFIX)
  # An installed chainrtConfig.cmake: exactly the ROS 2 that chainrt was built against.
  _chainrt_ros2_is_prefix("${CHAINRT_ROS2_PIN_PREFIX}" _ok)
  if(_ok)
    set(_ros_prefix "${CHAINRT_ROS2_PIN_PREFIX}")
    set(_ros_kind "${CHAINRT_ROS2_PIN_KIND}")
    set(_ros_all_prefixes ${CHAINRT_ROS2_PIN_PREFIXES})
  endif()
elseif(NOT "$ENV{CHAINRT_ROS}" STREQUAL "wheels" AND DEFINED ENV{AMENT_PREFIX_PATH})
  string(REPLACE ":" ";" _ament "$ENV{AMENT_PREFIX_PATH}")
  foreach(p ${_ament})
    _chainrt_ros2_is_prefix("${p}" _ok)
    if(_ok AND NOT _ros_prefix)
      set(_ros_prefix "${p}")
      set(_ros_kind sourced)
    endif()
  endforeach()
  if(_ros_prefix)
    set(_ros_all_prefixes ${_ament})
  endif()
endif()
if(_ros_prefix)
  # AMENT_PREFIX_PATH may point at a virtualenv with the wheels (e.g. after sourcing
  # chainrt_ros2_env.sh): that prefix needs the wheels' treatment.
  file(GLOB _wheel_marker LIST_DIRECTORIES true "${_ros_prefix}/lib/python3*/site-packages/ros_rcl.libs")
  if(_wheel_marker)
    set(_ros_kind wheels)
  endif()
endif()
if(NOT _ros_prefix AND NOT CHAINRT_ROS2_PIN_PREFIX)
  _chainrt_ros2_is_prefix("${CHAINRT_VENV}" _ok)
  if(_ok)
    set(_ros_prefix "${CHAINRT_VENV}")
    set(_ros_kind wheels)
    set(_ros_all_prefixes "${CHAINRT_VENV}")
  endif()
endif()

if(NOT _ros_prefix)
  _chainrt_ros2_unusable("no ROS 2 found: neither AMENT_PREFIX_PATH ($ENV{AMENT_PREFIX_PATH}) nor CHAINRT_VENV (${CHAINRT_VENV}) holds include/rcl/rcl/rcl.h and lib/librcl.so"
                         "Run scripts/setup (wheels) or source your ROS 2 installation.")
  return()
endif()

# Include folders: every include/<pkg> of every prefix (the Humble+ layout).
set(_ros_includes "")
set(_ros_libdirs "")
# Every include/<pkg> folder of `prefix` (the Humble+ layout), appended to the list `out`.
function(_chainrt_ros2_package_includes prefix out)
  set(dirs ${${out}})
  file(GLOB pkgs LIST_DIRECTORIES true "${prefix}/include/*")
  foreach(d ${pkgs})
    if(IS_DIRECTORY "${d}")
      list(APPEND dirs "${d}")
    endif()
  endforeach()
  set(${out} "${dirs}" PARENT_SCOPE)
endfunction()
foreach(p ${_ros_all_prefixes})
  _chainrt_ros2_package_includes("${p}" _ros_includes)
  if(IS_DIRECTORY "${p}/lib")
    list(APPEND _ros_libdirs "${p}/lib")
  endif()
endforeach()

# Libraries the runtime uses directly (rcl, its C utilities, C++ message type support).
set(_ros_libnames rcl rcutils rmw rcl_yaml_param_parser rosidl_runtime_c rosidl_typesupport_cpp
    rosidl_typesupport_c std_msgs__rosidl_typesupport_cpp std_msgs__rosidl_typesupport_c
    std_msgs__rosidl_generator_c builtin_interfaces__rosidl_generator_c
    rcl_interfaces__rosidl_typesupport_cpp rcl_interfaces__rosidl_typesupport_c
    rosgraph_msgs__rosidl_typesupport_cpp)
set(_ros_libs "")
foreach(n ${_ros_libnames})
  unset(_lib CACHE)
  find_library(_lib NAMES ${n} PATHS ${_ros_libdirs} NO_DEFAULT_PATH)
  if(NOT _lib)
    if(CHAINRT_WITH_ROS2 STREQUAL "ON")
      message(FATAL_ERROR "chainrt: ROS 2 at ${_ros_prefix} lacks lib${n}.so (is std_msgs installed?)")
    endif()
    message(STATUS "chainrt: ROS 2 at ${_ros_prefix} lacks lib${n}.so; the rcl runtime is SKIPPED")
    unset(_lib CACHE)
    return()
  endif()
  list(APPEND _ros_libs "${_lib}")
  unset(_lib CACHE)
endforeach()

# The ROS 2 line: rcl's major version names it (9 Jazzy, 10 Kilted); a sourced ROS 2 also says
# it in ROS_DISTRO.
set(_rcl_xml "${_ros_prefix}/share/rcl/package.xml")
set(_found_distro "")
if(EXISTS "${_rcl_xml}")
  file(STRINGS "${_rcl_xml}" _v REGEX "<version>")
  string(REGEX MATCH "<version>([0-9]+)\\." _m "${_v}")
  if(CMAKE_MATCH_1 STREQUAL "9")
    set(_found_distro jazzy)
  elseif(CMAKE_MATCH_1 STREQUAL "10")
    set(_found_distro kilted)
  endif()
endif()
if(NOT _found_distro AND _ros_kind STREQUAL "sourced" AND "$ENV{ROS_DISTRO}" MATCHES "^(kilted|jazzy)$")
  set(_found_distro "$ENV{ROS_DISTRO}")
endif()
if(NOT _found_distro)
  _chainrt_ros2_unusable("the ROS 2 at ${_ros_prefix} is neither Kilted (rcl 10) nor Jazzy (rcl 9), the lines chainrt supports"
                         "Run scripts/setup (the wheels of either line) or source Kilted or Jazzy.")
  return()
endif()
if(CHAINRT_ROS_DISTRO AND NOT CHAINRT_ROS_DISTRO STREQUAL _found_distro)
  message(FATAL_ERROR "chainrt: CHAINRT_ROS_DISTRO=${CHAINRT_ROS_DISTRO}, but the ROS 2 at ${_ros_prefix} "
                      "is ${_found_distro} (each line has its own build folder: scripts/setup)")
endif()
set(CHAINRT_ROS_DISTRO "${_found_distro}" CACHE STRING "the ROS 2 line (kilted, jazzy)" FORCE)
string(TOUPPER "${CHAINRT_ROS_DISTRO}" _distro_upper)

# rclcpp: in the sourced ROS 2, or built by scripts/build_ros2 against the wheels into a prefix of
# the checkout (.ros2/<CHAINRT_ROS_DISTRO>/install). Pinned by an installed chainrtConfig.cmake.
set(CHAINRT_HAVE_RCLCPP OFF)
set(CHAINRT_RCLCPP_SKIPPED "")
set(_rclcpp_prefix "")
function(_chainrt_has_rclcpp prefix out)
  _chainrt_ros2_has("${prefix}" "include/rclcpp/rclcpp/rclcpp.hpp;include/rclcpp_components" ok)
  set(${out} ${ok} PARENT_SCOPE)
endfunction()
if(DEFINED CHAINRT_ROS2_PIN_RCLCPP_PREFIX)
  if(CHAINRT_ROS2_PIN_RCLCPP_PREFIX)
    set(_rclcpp_prefix "${CHAINRT_ROS2_PIN_RCLCPP_PREFIX}")
  endif()
elseif(_ros_kind STREQUAL "sourced")
  foreach(p ${_ros_all_prefixes})
    _chainrt_has_rclcpp("${p}" _ok)
    if(_ok AND NOT _rclcpp_prefix)
      set(_rclcpp_prefix "${p}")
    endif()
  endforeach()
  if(NOT _rclcpp_prefix)
    set(CHAINRT_RCLCPP_SKIPPED "the sourced ROS 2 (${_ros_prefix}) has no rclcpp with rclcpp_components")
  endif()
else()
  set(CHAINRT_RCLCPP_PREFIX "${PROJECT_SOURCE_DIR}/.ros2/${CHAINRT_ROS_DISTRO}/install" CACHE PATH
      "prefix with rclcpp built against the wheels (scripts/build_ros2)")
  _chainrt_has_rclcpp("${CHAINRT_RCLCPP_PREFIX}" _ok)
  if(_ok)
    set(_rclcpp_prefix "${CHAINRT_RCLCPP_PREFIX}")
    # the prefix's own packages (interfaces, ament index) next to the wheels'
    list(INSERT _ros_all_prefixes 0 "${_rclcpp_prefix}")
    list(INSERT _ros_libdirs 0 "${_rclcpp_prefix}/lib")
  else()
    set(CHAINRT_RCLCPP_SKIPPED "no rclcpp in ${CHAINRT_RCLCPP_PREFIX} (scripts/setup builds it from the ROS 2 sources in ../shared/vendor/ros2-src or CHAINRT_ROS2_SRC)")
  endif()
  # a rebuild of rclcpp reconfigures (scripts/setup reconfigures after the first one)
  if(EXISTS "${CHAINRT_RCLCPP_PREFIX}/setup.sh")
    set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
                 "${CHAINRT_RCLCPP_PREFIX}/setup.sh")
  endif()
endif()

# The type support libraries of ROS interface packages, from the prefixes searched.
function(_chainrt_ros2_interface_libs out)
  set(libs "")
  foreach(pkg ${ARGN})
    foreach(part rosidl_typesupport_cpp rosidl_typesupport_c rosidl_generator_c)
      unset(_il CACHE)
      find_library(_il NAMES ${pkg}__${part} PATHS ${_CHAINRT_ROS2_LIBDIRS} NO_DEFAULT_PATH)
      if(_il)
        list(APPEND libs "${_il}")
      endif()
      unset(_il CACHE)
    endforeach()
  endforeach()
  set(${out} "${libs}" PARENT_SCOPE)
endfunction()

set(_ros_rpath ${_ros_libdirs})
set(_ros_link_options "")
if(_ros_kind STREQUAL "wheels")
  # Vendored dependencies of the wheels (tinyxml2, ssl, lttng, yaml, ...).
  file(GLOB _wheel_libs LIST_DIRECTORIES true "${_ros_prefix}/lib/python3*/site-packages/ros_*.libs")
  list(APPEND _ros_rpath ${_wheel_libs})
  # The rosidl_generator_py libraries reference libpython symbols without a NEEDED entry.
  set(_venv_py "${_ros_prefix}/bin/python")
  execute_process(COMMAND "${_venv_py}" -c
      "import sysconfig; print(sysconfig.get_config_var('LIBDIR') or ''); print(sysconfig.get_config_var('LDVERSION') or '')"
    OUTPUT_VARIABLE _pyinfo OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _pyrc)
  if(_pyrc EQUAL 0)
    string(REPLACE "\n" ";" _pyinfo "${_pyinfo}")
    list(GET _pyinfo 0 _pylibdir)
    list(GET _pyinfo 1 _pyver)
    list(APPEND _ros_rpath "${_pylibdir}")
    list(APPEND _ros_link_options "-L${_pylibdir}")
    set(_pylib "-lpython${_pyver}")
  else()
    set(_pylib "-lpython3.11")
  endif()
  list(APPEND _ros_link_options "LINKER:--no-as-needed" "${_pylib}" "LINKER:--as-needed")
endif()
list(APPEND _ros_link_options "LINKER:--allow-shlib-undefined" "LINKER:--disable-new-dtags")
foreach(d ${_ros_rpath})
  list(APPEND _ros_link_options "LINKER:-rpath,${d}")
  list(APPEND _ros_link_options "-L${d}")
endforeach()

add_library(chainrt_ros2 INTERFACE)
add_library(chainrt::ros2 ALIAS chainrt_ros2)
target_include_directories(chainrt_ros2 SYSTEM INTERFACE ${_ros_includes})
target_link_libraries(chainrt_ros2 INTERFACE ${_ros_libs} Threads::Threads)
target_compile_definitions(chainrt_ros2 INTERFACE CHAINRT_ROS_DISTRO_${_distro_upper}=1
                           CHAINRT_ROS_DISTRO_NAME="${CHAINRT_ROS_DISTRO}")
target_link_options(chainrt_ros2 INTERFACE ${_ros_link_options})
set(_CHAINRT_ROS2_LIBDIRS ${_ros_libdirs} CACHE INTERNAL "library folders of the ROS 2 in use")

function(chainrt_ros2_link_interfaces target)
  _chainrt_ros2_interface_libs(libs ${ARGN})
  target_link_libraries(${target} PRIVATE ${libs})
endfunction()

if(_rclcpp_prefix)
  set(_rc_includes "")
  _chainrt_ros2_package_includes("${_rclcpp_prefix}" _rc_includes)
  set(_rc_libs "")
  set(_missing "")
  foreach(n rclcpp rclcpp_action rclcpp_lifecycle component_manager class_loader ament_index_cpp
            libstatistics_collector rcl_action rcl_lifecycle rcpputils tracetools)
    unset(_lib CACHE)
    find_library(_lib NAMES ${n} PATHS "${_rclcpp_prefix}/lib" ${_ros_libdirs} NO_DEFAULT_PATH)
    if(_lib)
      list(APPEND _rc_libs "${_lib}")
    else()
      list(APPEND _missing ${n})
    endif()
    unset(_lib CACHE)
  endforeach()
  _chainrt_ros2_interface_libs(_rc_iface statistics_msgs lifecycle_msgs action_msgs unique_identifier_msgs
      composition_interfaces builtin_interfaces rcl_interfaces rosgraph_msgs service_msgs
      type_description_interfaces std_msgs)
  if(_missing)
    set(CHAINRT_RCLCPP_SKIPPED "rclcpp at ${_rclcpp_prefix} lacks lib(s) ${_missing}")
  else()
    add_library(chainrt_ros2_rclcpp INTERFACE)
    add_library(chainrt::ros2_rclcpp ALIAS chainrt_ros2_rclcpp)
    target_include_directories(chainrt_ros2_rclcpp SYSTEM INTERFACE ${_rc_includes})
    target_link_libraries(chainrt_ros2_rclcpp INTERFACE chainrt::ros2 ${_rc_libs} ${_rc_iface} ${CMAKE_DL_LIBS})
    set(CHAINRT_HAVE_RCLCPP ON)
    set(CHAINRT_RCLCPP_PREFIX "${_rclcpp_prefix}")
    # For a separate CMake project (a user's package) built against the same ROS 2: its
    # CMAKE_PREFIX_PATH, and its linker flags (the wheels need the run paths and the flags above).
    set(CHAINRT_ROS2_CMAKE_PREFIX_PATH ${_ros_all_prefixes})
    set(CHAINRT_ROS2_LDFLAGS "")
    if(_ros_kind STREQUAL "wheels")
      set(CHAINRT_ROS2_LDFLAGS "-Wl,--as-needed -Wl,--allow-shlib-undefined -Wl,--disable-new-dtags")
      foreach(d ${_ros_rpath})
        string(APPEND CHAINRT_ROS2_LDFLAGS " -Wl,-rpath,${d} -Wl,-rpath-link,${d}")
      endforeach()
    endif()
    message(STATUS "chainrt: rclcpp at ${_rclcpp_prefix}")
  endif()
endif()
if(NOT CHAINRT_HAVE_RCLCPP)
  message(STATUS "chainrt: the rclcpp executor (rclcpp/, tests/cpp/rclcpp) is SKIPPED: ${CHAINRT_RCLCPP_SKIPPED}")
endif()

# chainrt_msgs, the executors' monitoring messages (generated here; cmake/ChainrtMsgs.cmake)
include("${CMAKE_CURRENT_LIST_DIR}/ChainrtMsgs.cmake")

set(CHAINRT_HAVE_ROS2 ON)
set(CHAINRT_ROS2_KIND ${_ros_kind})
set(CHAINRT_ROS2_PREFIX "${_ros_prefix}")
set(CHAINRT_ROS2_PREFIXES "${_ros_all_prefixes}")
# the run-time environment also has chainrt_msgs (its Python package: chainrt.monitor_msg)
string(REPLACE ";" ":" _ament_value "${_ros_all_prefixes};${CHAINRT_MSGS_PREFIX}")
string(REPLACE ";" ":" _ldpath_value "${_ros_rpath};${CHAINRT_MSGS_LIBRARY_DIR}")
set(_rmw "$ENV{RMW_IMPLEMENTATION}")
if(NOT _rmw OR _ros_kind STREQUAL "wheels")
  set(_rmw rmw_fastrtps_cpp)  # the wheels' rcl is linked to Fast DDS directly
endif()
set(CHAINRT_ROS2_ENV
  "AMENT_PREFIX_PATH=${_ament_value}"
  "RMW_IMPLEMENTATION=${_rmw}")
# Not needed by binaries linked to chainrt::ros2 (their DT_RPATH has these folders); for other
# programs (e.g. a Python process loading the wheels' libraries through ctypes).
set(CHAINRT_ROS2_LIBRARY_PATH "${_ldpath_value}")
message(STATUS "chainrt: ROS 2 ${CHAINRT_ROS_DISTRO} (${_ros_kind}) at ${_ros_prefix}, rmw ${_rmw}")

# ctest ENVIRONMENT for a ROS test: a domain id of its own (so that concurrent test programs
# and other engineers' runs do not discover each other) and discovery limited to this host.
set_property(GLOBAL PROPERTY CHAINRT_ROS2_NEXT_DOMAIN 40)
function(chainrt_ros2_test_environment out name)
  get_property(d GLOBAL PROPERTY CHAINRT_ROS2_NEXT_DOMAIN)
  math(EXPR next "${d} + 1")
  if(next GREATER 200)
    set(next 40)
  endif()
  set_property(GLOBAL PROPERTY CHAINRT_ROS2_NEXT_DOMAIN ${next})
  set(${out} ${CHAINRT_ROS2_ENV} "ROS_DOMAIN_ID=${d}" "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"
      "RCUTILS_LOGGING_BUFFERED_STREAM=1" "CHAINRT_TEST_NAME=${name}" PARENT_SCOPE)
endfunction()

# The same environment for shells and for the Python package.
set(_sh "# generated by cmake/ChainrtROS2.cmake: run-time environment of the chainrt runtime\n")
set(_json "{\n  \"kind\": \"${_ros_kind}\",\n  \"distro\": \"${CHAINRT_ROS_DISTRO}\",\n  \"prefix\": \"${_ros_prefix}\",")
set(_sep "")
string(APPEND _sh "# LD_LIBRARY_PATH is not needed by chainrt binaries (RPATH); for other programs:\n")
string(APPEND _sh "# export LD_LIBRARY_PATH=\"${CHAINRT_ROS2_LIBRARY_PATH}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\"\n")
string(APPEND _json "\n  \"library_path\": \"${CHAINRT_ROS2_LIBRARY_PATH}\",\n  \"env\": {")
foreach(kv ${CHAINRT_ROS2_ENV})
  string(FIND "${kv}" "=" _eq)
  string(SUBSTRING "${kv}" 0 ${_eq} _k)
  math(EXPR _vs "${_eq} + 1")
  string(SUBSTRING "${kv}" ${_vs} -1 _v)
  string(APPEND _sh "export ${_k}=\"${_v}\"\n")
  string(APPEND _json "${_sep}\n    \"${_k}\": \"${_v}\"")
  set(_sep ",")
endforeach()
# chainrt_msgs' Python package, for a plain rclpy program (chainrt's own find it themselves)
string(APPEND _sh "export PYTHONPATH=\"${CHAINRT_MSGS_PYTHON_DIR}\${PYTHONPATH:+:\$PYTHONPATH}\"\n")
string(APPEND _json "\n  },\n  \"python_path\": \"${CHAINRT_MSGS_PYTHON_DIR}\"\n}\n")
file(WRITE "${CMAKE_BINARY_DIR}/chainrt_ros2_env.sh" "${_sh}")
file(WRITE "${CMAKE_BINARY_DIR}/chainrt_ros2_env.json" "${_json}")
