# ChainrtAmentPrefix.cmake: chainrt as a ROS 2 package for ROS 2's tools, so that
#     ros2 run chainrt chainrt_component_container --ros-args -p chainrt.model:=system.yaml
# and launch_ros (ComposableNodeContainer(package="chainrt", ...), python/chainrt/launch.py) find
# chainrt's programs. ROS 2 finds a package's programs in <prefix>/lib/<package>/ of a prefix on
# AMENT_PREFIX_PATH whose ament index names the package (python/chainrt/ament.py). No paper
# section: packaging. Included after ChainrtInstall.cmake (the targets exist then).
#
#   <build>/ament_prefix/   the build folder's prefix: the index entry, package.xml and, in
#                           lib/chainrt/, links to the build's programs (target
#                           chainrt_ament_prefix, part of `all` and of ros2_tests)
#   <install prefix>/lib/chainrt/   the same programs of an install (the index entry and
#                           package.xml: ChainrtInstall.cmake). Always lib/, whatever
#                           CMAKE_INSTALL_LIBDIR is: ROS 2's tools look there.
#
# The programs: chainrt_component_container (rclcpp/), chainrt-run (runtime/) when built, and the
# `chainrt` command line of the virtualenv (CHAINRT_VENV) or of the install.
set(CHAINRT_AMENT_PREFIX "${CMAKE_BINARY_DIR}/ament_prefix")
file(MAKE_DIRECTORY "${CHAINRT_AMENT_PREFIX}/share/ament_index/resource_index/packages"
  "${CHAINRT_AMENT_PREFIX}/share/chainrt" "${CHAINRT_AMENT_PREFIX}/lib/chainrt")
file(WRITE "${CHAINRT_AMENT_PREFIX}/share/ament_index/resource_index/packages/chainrt" "")
configure_file("${PROJECT_SOURCE_DIR}/package.xml" "${CHAINRT_AMENT_PREFIX}/share/chainrt/package.xml" COPYONLY)

set(_chainrt_links "")
foreach(_t chainrt_component_container chainrt-run)
  if(TARGET ${_t})
    list(APPEND _chainrt_links COMMAND ${CMAKE_COMMAND} -E create_symlink
      "$<TARGET_FILE:${_t}>" "${CHAINRT_AMENT_PREFIX}/lib/chainrt/${_t}")
    install(TARGETS ${_t} RUNTIME DESTINATION lib/chainrt)
  endif()
endforeach()
if(CHAINRT_VENV AND EXISTS "${CHAINRT_VENV}/bin/chainrt")
  list(APPEND _chainrt_links COMMAND ${CMAKE_COMMAND} -E create_symlink
    "${CHAINRT_VENV}/bin/chainrt" "${CHAINRT_AMENT_PREFIX}/lib/chainrt/chainrt")
endif()
add_custom_target(chainrt_ament_prefix ALL ${_chainrt_links}
  COMMENT "chainrt's programs in ${CHAINRT_AMENT_PREFIX}/lib/chainrt" VERBATIM)
foreach(_t chainrt_component_container chainrt-run)
  if(TARGET ${_t})
    add_dependencies(chainrt_ament_prefix ${_t})
  endif()
endforeach()
set_property(GLOBAL APPEND PROPERTY CHAINRT_ROS2_TEST_PROGRAMS chainrt_ament_prefix)

# the installed CLI (bin/chainrt, written by ChainrtInstall.cmake) as a program of the package
if(CHAINRT_BUILD_PYTHON AND TARGET _core)
  install(CODE "
    set(_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/chainrt\")
    file(MAKE_DIRECTORY \"\${_dir}\")
    file(CREATE_LINK \"../../${CMAKE_INSTALL_BINDIR}/chainrt\" \"\${_dir}/chainrt\" SYMBOLIC)")
endif()
