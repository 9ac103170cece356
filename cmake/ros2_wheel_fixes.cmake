# ros2_wheel_fixes.cmake: the three CMake exports of the ros-<distro>-* wheels that are wrong on
# any machine but the wheels' builder, corrected for builds against the wheels (rclcpp and the
# packages built by scripts/build_ros2, and a user's packages built on that prefix). No paper
# section: build plumbing.
#
# The wheels' own files are never changed. scripts/build_ros2 puts, in its install prefix, a
# shim <prefix>/share/<pkg>/cmake/<pkg>Config.cmake for every wheel package with a wrong export;
# with that prefix before the virtualenv in CMAKE_PREFIX_PATH, find_package(<pkg>) loads the
# shim, which loads the wheel's real config (chainrt_wheel_config) and corrects what it defined:
#   1. the *__rosidl_generator_py targets name the wheel builder's Python
#      (/opt/python/cp311-cp311/include/python3.11, .../site-packages/numpy/...): dropped
#      (nothing built here compiles against them; the Python generator finds its own Python);
#   2. fastdds' (Jazzy: fastrtps') shared target names /usr/lib64/libtinyxml2.so, which
#      libfastdds does not need (it carries its own tinyxml2): dropped;
#   3. tracetools exports lttng-ust as a link library, while the wheel vendors it under a hashed
#      name that libtracetools already needs: dropped.

function(_chainrt_wheel_fixed_list in out)
  set(kept "")
  foreach(item IN LISTS in)
    if(item MATCHES "^/opt/python/" OR item MATCHES "^/usr/lib64/libtinyxml2\\.so" OR item STREQUAL "lttng-ust")
      continue()
    endif()
    list(APPEND kept "${item}")
  endforeach()
  set(${out} "${kept}" PARENT_SCOPE)
endfunction()

# The imported targets of this directory and the <pkg>_LIBRARIES / <pkg>_INCLUDE_DIRS variables,
# without the three wrong entries.
function(_chainrt_wheel_fix pkg)
  get_directory_property(targets IMPORTED_TARGETS)
  foreach(t IN LISTS targets)
    foreach(prop INTERFACE_INCLUDE_DIRECTORIES INTERFACE_LINK_LIBRARIES)
      get_target_property(v ${t} ${prop})
      if(v)
        _chainrt_wheel_fixed_list("${v}" fixed)
        if(NOT "${fixed}" STREQUAL "${v}")
          set_target_properties(${t} PROPERTIES ${prop} "${fixed}")
        endif()
      endif()
    endforeach()
  endforeach()
  foreach(var ${pkg}_LIBRARIES ${pkg}_INCLUDE_DIRS)
    if(DEFINED ${var})
      _chainrt_wheel_fixed_list("${${var}}" fixed)
      set(${var} "${fixed}" PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

# Load the wheel's config `file` of package `pkg` from its folder `dir` (a macro: the config
# sets its variables in the scope of the find_package() that loaded the shim), then correct it.
macro(chainrt_wheel_config pkg dir file)
  set(${pkg}_DIR "${dir}")
  include("${dir}/${file}")
  _chainrt_wheel_fix(${pkg})
endmacro()
