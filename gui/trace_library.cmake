# ringsim_trace: the GUI's trace reader, model and summary. Plain C++ (no Qt),
# so it is built in every configuration: the simulator's, CLI and fuzz tests
# read traces with it even when the GUI itself is off.
set(_g ${PROJECT_SOURCE_DIR}/gui)
add_library(ringsim_trace STATIC
  ${_g}/event_text.cpp ${_g}/lane_layout.cpp ${_g}/lod.cpp ${_g}/time_view.cpp
  ${_g}/trace_model.cpp ${_g}/trace_reader.cpp ${_g}/trace_summary.cpp)
target_include_directories(ringsim_trace PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(ringsim_trace PUBLIC nlohmann_json::nlohmann_json)
