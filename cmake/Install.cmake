# `cmake --install <build> [--prefix DIR]`: the programs into bin/ and, when
# help2man is found, their man pages into share/man/man1 (one `ringsim: man
# pages` status line says which). Nothing else is needed at run time: the
# catalog, kernels and model data are compiled in (cmake/EmbedFile.cmake), and
# a program finds its siblings (ringsim-mpi, ringsim for children) next to
# itself (proc::sibling_exe), so an installed ringsim works from any directory.
include(GNUInstallDirs)
set(RINGSIM_PROGRAMS "")
foreach(t ringsim ringsim-mpi ringsim-mpi-nccl ringsim-gui ringsim-plot)
  if(TARGET ${t})
    list(APPEND RINGSIM_PROGRAMS ${t})
  endif()
endforeach()
install(TARGETS ${RINGSIM_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Shell completion for ringsim (cli/completion/: each asks `ringsim __complete`
# for its words), where bash-completion, zsh and fish look for them.
install(FILES ${PROJECT_SOURCE_DIR}/cli/completion/ringsim.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ringsim)
install(FILES ${PROJECT_SOURCE_DIR}/cli/completion/_ringsim
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
install(FILES ${PROJECT_SOURCE_DIR}/cli/completion/ringsim.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
message(STATUS "ringsim: shell completion: bash, zsh, fish -> share/{bash-completion,zsh,fish}")

# Man pages from each program's own --help (so they cannot drift from it),
# built with the programs (target ringsim_man, part of `all`). ringsim-mpi-nccl
# has none: its --help needs a CUDA device. The environment lets ringsim-mpi
# print its help as root and ringsim-gui without a display.
find_program(RINGSIM_HELP2MAN help2man)
set(RINGSIM_MAN_PAGES "")
if(RINGSIM_SANITIZE OR RINGSIM_TSAN)
  # A sanitizer build's programs are for its tests only: their --help would run
  # under the sanitizer at build time (and OpenMPI's leaks fail LeakSanitizer).
  message(STATUS "ringsim: man pages: OFF (sanitizer build)")
elseif(RINGSIM_HELP2MAN)
  set(man_dir ${CMAKE_BINARY_DIR}/man)
  # Each page gets EXAMPLES, EXIT STATUS and SEE ALSO from cli/man/PAGE.h2m.in
  # (help2man --include), and the docs/ paths its help text cites become the
  # installed documentation's (the docs are installed below).
  set(RINGSIM_DOCDIR ${CMAKE_INSTALL_FULL_DOCDIR})
  function(ringsim_man_include page out)
    configure_file(${PROJECT_SOURCE_DIR}/cli/man/${page}.h2m.in ${man_dir}/include/${page}.h2m @ONLY)
    set(${out} ${man_dir}/include/${page}.h2m PARENT_SCOPE)
  endfunction()
  set(names_ringsim "predict ring attention (context parallelism) on a cluster")
  set(names_ringsim-mpi "run ring attention for real across MPI ranks")
  set(names_ringsim-gui "timeline viewer for ringsim traces")
  set(names_ringsim-plot "draw an experiment's plot from its plot spec")
  foreach(t ${RINGSIM_PROGRAMS})
    if(t STREQUAL "ringsim-mpi-nccl")
      continue()
    endif()
    set(page ${man_dir}/${t}.1)
    ringsim_man_include(${t} inc)
    add_custom_command(
      OUTPUT ${page}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
      COMMAND ${CMAKE_COMMAND} -E env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
              QT_QPA_PLATFORM=offscreen ${RINGSIM_HELP2MAN} --no-info --no-discard-stderr
              --version-string=${PROJECT_VERSION} "--name=${names_${t}}" --include=${inc}
              --output=${page} $<TARGET_FILE:${t}>
      COMMAND sed -i "s|docs/|${RINGSIM_DOCDIR}/|g" ${page}
      DEPENDS ${t} ${inc}
      COMMENT "Man page ${t}.1 (help2man)"
      VERBATIM)
    list(APPEND RINGSIM_MAN_PAGES ${page})
  endforeach()
  # One page per subcommand, ringsim-plan(1) and so on, from `ringsim CMD
  # --help` (git's convention: `man ringsim-plan`).
  foreach(cmd run minblock hardware plan infer sweep verify profile experiment calibrate validate)
    set(page ${man_dir}/ringsim-${cmd}.1)
    ringsim_man_include(ringsim-${cmd} inc)
    add_custom_command(
      OUTPUT ${page}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
      COMMAND ${RINGSIM_HELP2MAN} --no-info --no-discard-stderr --version-string=${PROJECT_VERSION}
              "--help-option=${cmd} --help" "--name=ringsim ${cmd}: see ringsim(1)"
              --include=${inc} --output=${page} $<TARGET_FILE:ringsim>
      COMMAND sed -i "s|docs/|${RINGSIM_DOCDIR}/|g" ${page}
      DEPENDS ringsim ${inc}
      COMMENT "Man page ringsim-${cmd}.1 (help2man)"
      VERBATIM)
    list(APPEND RINGSIM_MAN_PAGES ${page})
  endforeach()
  add_custom_target(ringsim_man ALL DEPENDS ${RINGSIM_MAN_PAGES})
  # The documentation the pages (and the programs' help) cite.
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
  install(FILES ${RINGSIM_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  list(JOIN RINGSIM_PROGRAMS ", " progs)
  message(STATUS "ringsim: man pages: ON (help2man; ${progs}) -> share/man/man1")
else()
  message(STATUS "ringsim: man pages: SKIPPED (help2man not found; Debian: help2man)")
endif()
