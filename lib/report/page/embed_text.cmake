# Writes a C++ source that defines one text file's bytes as a string constant:
#
#   cmake -DINPUT=style.css -DOUTPUT=style_css.cc -DNAME=kStyle -DNAMESPACE=cuscope::report::page
#         -P embed_text.cmake
#
# defines `const std::string_view NAMESPACE::NAME` holding exactly the bytes of INPUT (declare it
# `extern` in a header). The text travels as raw string literals, so it stays readable in the
# generated file; it is cut at line ends into literals of at most kChunkBytes bytes, which the
# compiler joins again, because compilers limit the length of a single literal (C++ only promises
# 65536 characters). The script fails when the text contains the literal's closing delimiter or a
# line too long for one literal, rather than writing a source that does not compile or means
# something else.
cmake_minimum_required(VERSION 3.20)

foreach(arg INPUT OUTPUT NAME NAMESPACE)
  if(NOT DEFINED ${arg})
    message(FATAL_ERROR "embed_text.cmake: -D${arg}=... is required")
  endif()
endforeach()

set(delimiter "cuscope_text")
set(chunk_bytes 8000)

file(READ "${INPUT}" text)
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "embed_text.cmake: ${INPUT} contains ')${delimiter}\"', which would end the literal early")
endif()

string(LENGTH "${text}" remaining)
set(literals "")
set(offset 0)
while(remaining GREATER 0)
  if(remaining GREATER chunk_bytes)
    # Cut after the last line end that fits, never inside a line (or a UTF-8 sequence).
    string(SUBSTRING "${text}" ${offset} ${chunk_bytes} window)
    string(FIND "${window}" "\n" last_newline REVERSE)
    if(last_newline EQUAL -1)
      message(FATAL_ERROR "embed_text.cmake: ${INPUT} has a line longer than ${chunk_bytes} bytes")
    endif()
    math(EXPR length "${last_newline} + 1")
  else()
    set(length ${remaining})
  endif()
  string(SUBSTRING "${text}" ${offset} ${length} chunk)
  string(APPEND literals "    R\"${delimiter}(${chunk})${delimiter}\"\n")
  math(EXPR offset "${offset} + ${length}")
  math(EXPR remaining "${remaining} - ${length}")
endwhile()
if(literals STREQUAL "")
  set(literals "    \"\"\n")
endif()

get_filename_component(input_name "${INPUT}" NAME)
set(source "// Generated from ${input_name} by embed_text.cmake: edit that file, not this one.
#include <string_view>

namespace ${NAMESPACE} {
namespace {
constexpr char kText[] =
${literals};
}  // namespace

extern const std::string_view ${NAME};
const std::string_view ${NAME}(kText, sizeof kText - 1);

}  // namespace ${NAMESPACE}
")

file(WRITE "${OUTPUT}" "${source}")
