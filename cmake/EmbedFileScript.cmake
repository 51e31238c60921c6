# Writes the file as a C++ array of bytes (no raw-string delimiter to collide with).
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}" "// Generated from ${IN}; do not edit.\nnamespace ringsim::embedded {\nstatic const char ${SYMBOL}_data[] = {${bytes} 0x00};\nextern const char* const ${SYMBOL} = ${SYMBOL}_data;\n}\n")
