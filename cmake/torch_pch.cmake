# <torch/torch.h> precompiled once for the whole build (-DCOINFER_TORCH_PCH=ON; CI's builds).
#
# Parsing <torch/torch.h> costs ~12 s of every translation unit that reaches it (35 units; 24.4 s
# against 12.5 s for models/gnn_model.cpp at -O2 -g0 on this 2-core machine), about 7 minutes of
# compiling in a fresh build (bench/RESULTS.md "CI time"). With this option the header is precompiled
# once per kind of code (one for position-independent code, one for the rest) and every unit that
# includes it, directly or through one of our headers, uses that precompiled header; units that do not
# reach Torch are left alone (forcing the header on them would cost them the ~12 s instead).
#
# Off by default: ccache does not reuse a unit compiled against a precompiled header unless its
# `sloppiness` allows it, so local rebuilds (ccache hits) gain nothing. A unit that starts including
# Torch after the build folder was configured compiles without the precompiled header until CMake runs
# again (correct, only slower).

# Whether FILE reaches <torch/torch.h> through its quoted includes (resolved against FILE's folder
# and the source root, as the compiler does with -I<root>). Memoised per file in global properties.
function(_coinfer_reaches_torch file out)
  get_property(known GLOBAL PROPERTY "coinfer_torch:${file}" SET)
  if(known)
    get_property(value GLOBAL PROPERTY "coinfer_torch:${file}")
    set(${out} ${value} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "coinfer_torch:${file}" FALSE)  # an include cycle ends here
  set(result FALSE)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  get_filename_component(dir "${file}" DIRECTORY)
  foreach(line IN LISTS lines)
    if(line MATCHES "<torch/torch\\.h>")
      set(result TRUE)
    elseif(line MATCHES "\"([^\"]+)\"")
      set(name "${CMAKE_MATCH_1}")
      foreach(candidate "${dir}/${name}" "${CMAKE_SOURCE_DIR}/${name}")
        if(EXISTS "${candidate}" AND NOT IS_DIRECTORY "${candidate}")
          get_filename_component(candidate "${candidate}" ABSOLUTE)
          _coinfer_reaches_torch("${candidate}" reaches)
          if(reaches)
            set(result TRUE)
          endif()
          break()
        endif()
      endforeach()
    endif()
    if(result)
      break()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "coinfer_torch:${file}" ${result})
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Gives every target in ARGN whose sources reach Torch the shared precompiled header; the first such
# target of each kind (position-independent or not) builds it, the others reuse it.
function(coinfer_torch_pch)
  foreach(target IN LISTS ARGN)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      continue()
    endif()
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    set(torch_units "")
    set(other_units "")
    foreach(source IN LISTS sources)
      if(NOT source MATCHES "\\.cpp$")
        continue()
      endif()
      if(IS_ABSOLUTE "${source}")
        set(path "${source}")
      else()
        set(path "${source_dir}/${source}")
      endif()
      get_filename_component(path "${path}" ABSOLUTE)
      _coinfer_reaches_torch("${path}" reaches)
      if(reaches)
        list(APPEND torch_units "${source}")
      else()
        list(APPEND other_units "${source}")
      endif()
    endforeach()
    if(NOT torch_units)
      continue()
    endif()
    get_target_property(pic ${target} POSITION_INDEPENDENT_CODE)
    if(pic OR type MATCHES "^(SHARED|MODULE)_LIBRARY$")
      set(kind pic)
    else()
      set(kind plain)
    endif()
    if(NOT DEFINED owner_${kind})
      target_precompile_headers(${target} PRIVATE <torch/torch.h>)
      set(owner_${kind} ${target})
    else()
      target_precompile_headers(${target} REUSE_FROM ${owner_${kind}})
    endif()
    if(other_units)
      set_source_files_properties(${other_units} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
    list(LENGTH torch_units n)
    message(STATUS "coinfer: ${target}: precompiled <torch/torch.h> for ${n} units (${kind}, from ${owner_${kind}})")
  endforeach()
endfunction()
