# The one way tests are added (tests/*/CMakeLists.txt).
#
# ringsim_test(<name> SOURCES <files...> [LIBS <targets...>] [LABELS <label>]
#              [DEFINES <defs...>] [DEPENDS <targets...>] [ENVIRONMENT <VAR=...>]
#              [TIMEOUT <s>])
#   A GoogleTest program; each test case becomes its own ctest entry (its own
#   process: SimGrid allows one engine per process). One label per program:
#   CMake 3.25's gtest_discover_tests splits a list-valued property into
#   separate keys (a label "sim;nosan" would not survive). A test that calls
#   GTEST_SKIP shows as skipped, never as passed.
# ringsim_qtest(<name> [LIBS ...] [DEFINES ...] [DEPENDS ...])
#   A QTest program (<name>.cpp) run under Qt's offscreen platform, label gui.
# Every GoogleTest program whose label is not in RINGSIM_SANITIZER_SKIP_LABELS
# joins the target `sanitizer_tests` (tests/CMakeLists.txt), which the CI's
# sanitizer stage builds instead of everything.
include(GoogleTest)
set(RINGSIM_SANITIZER_SKIP_LABELS experiments nosan gpu bench
    CACHE STRING "Test labels the sanitizer stage neither builds nor runs (.ci/run)")

function(ringsim_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS;DEFINES;DEPENDS;ENVIRONMENT" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest_main)
  if(T_DEFINES)
    target_compile_definitions(${name} PRIVATE ${T_DEFINES})
  endif()
  if(T_DEPENDS)
    add_dependencies(${name} ${T_DEPENDS})
  endif()
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set(props LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT} SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
  if(T_ENVIRONMENT)
    list(APPEND props ENVIRONMENT "${T_ENVIRONMENT}")
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ${props})
  set(sanitized ON)
  foreach(label IN LISTS T_LABELS)
    if(label IN_LIST RINGSIM_SANITIZER_SKIP_LABELS)
      set(sanitized OFF)
    endif()
  endforeach()
  if(sanitized)
    set_property(GLOBAL APPEND PROPERTY RINGSIM_SANITIZER_TESTS ${name})
  endif()
endfunction()

function(ringsim_qtest name)
  cmake_parse_arguments(T "" "" "LIBS;DEFINES;DEPENDS" ${ARGN})
  add_executable(${name} ${name}.cpp)
  set_target_properties(${name} PROPERTIES AUTOMOC ON)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${T_LIBS} Qt6::Test)
  if(T_DEFINES)
    target_compile_definitions(${name} PRIVATE ${T_DEFINES})
  endif()
  if(T_DEPENDS)
    add_dependencies(${name} ${T_DEPENDS})
  endif()
  add_test(NAME gui.${name} COMMAND ${name})
  set_tests_properties(gui.${name} PROPERTIES ENVIRONMENT "QT_QPA_PLATFORM=offscreen"
                                              LABELS "gui" TIMEOUT 120)
endfunction()
