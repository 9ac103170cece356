// chainrt tracing: an empty shared library. Built once per LTTng-UST library that the ROS 2
// wheels vendor, with that library's SONAME (runtime/tracing/CMakeLists.txt), and preloaded
// by `chainrt trace record`: the wheels' libraries then find their NEEDED entry satisfied and
// the vendored LTTng-UST of ABI 0 is never loaded (its only user, the wheel's libtracetools,
// is replaced by tracetools_shim.c; rcl and rmw use no LTTng symbol themselves).
int chainrt_tracing_stub;
