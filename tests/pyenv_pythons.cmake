# The CPython builds under ~/.pyenv with a shared libpython, for tests that embed an interpreter and
# are built once per version (tests/python_frames, tests/cupti).

# Sets OUT to the pyenv prefixes whose version matches the regular expression MINOR_REGEX (e.g.
# "3\\.1[123]"), newest first, keeping those with libpythonX.Y.so and its Python.h.
function(cuscope_pyenv_pythons out minor_regex)
  file(GLOB prefixes LIST_DIRECTORIES true "$ENV{HOME}/.pyenv/versions/3.*")
  list(SORT prefixes COMPARE NATURAL ORDER DESCENDING)
  set(found)
  foreach(prefix IN LISTS prefixes)
    get_filename_component(version "${prefix}" NAME)
    string(REGEX MATCH "^${minor_regex}" minor "${version}")
    if(minor AND EXISTS "${prefix}/lib/libpython${minor}.so" AND EXISTS "${prefix}/include/python${minor}/Python.h")
      list(APPEND found "${prefix}")
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Builds TARGET against the CPython at PREFIX (its headers, its libpython, found at run time by
# rpath, CUSCOPE_PYTHON_HOME for PYTHONHOME) and discovers its tests as "cpython_X_Y_Z.*", with
# LeakSanitizer told about the interpreter's own allocations.
function(cuscope_embed_pyenv_python target prefix)
  get_filename_component(version "${prefix}" NAME)
  string(REGEX MATCH "^3\\.[0-9]+" minor "${version}")
  string(REPLACE "." "_" suffix "${version}")
  target_include_directories(${target} PRIVATE "${prefix}/include/python${minor}")
  target_link_libraries(${target} PRIVATE "${prefix}/lib/libpython${minor}.so" ${CMAKE_DL_LIBS})
  set_target_properties(${target} PROPERTIES BUILD_RPATH "${prefix}/lib")
  target_compile_definitions(${target} PRIVATE CUSCOPE_PYTHON_HOME="${prefix}")
  gtest_discover_tests(${target} TEST_PREFIX "cpython_${suffix}." DISCOVERY_TIMEOUT 60
    PROPERTIES ENVIRONMENT "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/python_frames/lsan_libpython.supp")
endfunction()
