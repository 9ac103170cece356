# chainrt: which ROS 2 line (distribution) a script works on, and its folders. Sourced by
# scripts/setup, scripts/build_ros2 and scripts/test; the one place that decides.
#
#   a sourced ROS 2 (AMENT_PREFIX_PATH names a prefix with rcl that is not a chainrt virtualenv)
#       decides: its ROS_DISTRO (set by its setup.bash); CHAINRT_ROS_DISTRO may only agree.
#       CHAINRT_ROS=wheels ignores it.
#   otherwise CHAINRT_ROS_DISTRO, default kilted.
#
# The lines chainrt supports are those of scripts/ros2_wheels.txt. Each line has its own
# virtualenv and build folder, so that both live side by side in one checkout:
#   kilted  .venv          build           .ros2/kilted/install (rclcpp built by build_ros2)
#   jazzy   .venv-jazzy    build-jazzy     .ros2/jazzy/install
# CHAINRT_BUILD_DIR overrides the build folder (relative to the checkout, or absolute).
#
# After chainrt_ros_line: CHAINRT_ROS_DISTRO, chainrt_sourced_ros (the sourced prefix or ""),
# chainrt_venv and chainrt_build (absolute). Returns 1 with a one-line message on stderr for an
# unknown line or a disagreement.

CHAINRT_DEFAULT_ROS_DISTRO=kilted

chainrt_ros_lines() {  # the supported lines, in the order of scripts/ros2_wheels.txt
  awk '!/^[[:space:]]*(#|$)/ && !seen[$1]++ {print $1}' "$1/scripts/ros2_wheels.txt"
}

chainrt_ros_line() {
  local root="$1" p wanted="${CHAINRT_ROS_DISTRO:-}" lines
  chainrt_sourced_ros=""
  if [ "${CHAINRT_ROS:-}" != wheels ] && [ -n "${AMENT_PREFIX_PATH:-}" ]; then
    local _prefixes
    IFS=: read -r -a _prefixes <<<"$AMENT_PREFIX_PATH"
    for p in "${_prefixes[@]}"; do
      if [ -f "$p/include/rcl/rcl/rcl.h" ] && ! compgen -G "$p/lib/python3*/site-packages/ros_rcl.libs" >/dev/null; then
        chainrt_sourced_ros="$p"; break
      fi
    done
  fi
  if [ -n "$chainrt_sourced_ros" ]; then
    if [ -z "${ROS_DISTRO:-}" ]; then
      echo "chainrt: the sourced ROS 2 at $chainrt_sourced_ros sets no ROS_DISTRO (source its setup.bash)" >&2
      return 1
    fi
    if [ -n "$wanted" ] && [ "$wanted" != "$ROS_DISTRO" ]; then
      echo "chainrt: CHAINRT_ROS_DISTRO=$wanted, but the sourced ROS 2 is $ROS_DISTRO (open a shell without it, or set CHAINRT_ROS=wheels)" >&2
      return 1
    fi
    CHAINRT_ROS_DISTRO="$ROS_DISTRO"
  else
    CHAINRT_ROS_DISTRO="${wanted:-$CHAINRT_DEFAULT_ROS_DISTRO}"
  fi
  lines="$(chainrt_ros_lines "$root" | tr '\n' ' ')"
  case " $lines" in
    *" $CHAINRT_ROS_DISTRO "*) ;;
    *) if [ -n "$chainrt_sourced_ros" ]; then
         echo "chainrt: the sourced ROS 2 is $CHAINRT_ROS_DISTRO; chainrt supports ${lines% }" >&2
       else
         echo "chainrt: unknown ROS 2 distribution '$CHAINRT_ROS_DISTRO' (CHAINRT_ROS_DISTRO: one of ${lines% })" >&2
       fi
       return 1 ;;
  esac
  export CHAINRT_ROS_DISTRO
  if [ "$CHAINRT_ROS_DISTRO" = "$CHAINRT_DEFAULT_ROS_DISTRO" ]; then
    chainrt_venv="$root/.venv"; chainrt_build="$root/build"
  else
    chainrt_venv="$root/.venv-$CHAINRT_ROS_DISTRO"; chainrt_build="$root/build-$CHAINRT_ROS_DISTRO"
  fi
  if [ -n "${CHAINRT_BUILD_DIR:-}" ]; then
    case "$CHAINRT_BUILD_DIR" in
      /*) chainrt_build="$CHAINRT_BUILD_DIR" ;;
      *) chainrt_build="$root/$CHAINRT_BUILD_DIR" ;;
    esac
  fi
}

# The ros-<distro>-* requirements of a line (scripts/ros2_wheels.txt), one per line.
chainrt_ros_wheels() {
  awk -v d="$2" '$1 == d {print $2}' "$1/scripts/ros2_wheels.txt"
}
