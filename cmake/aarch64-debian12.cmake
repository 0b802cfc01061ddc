# Cross-compiling the runtime for arm64 (Raspberry Pi OS bookworm, Debian 12 on a Jetson or any arm64
# board) on an x86_64 Debian 12 machine: Debian's cross compiler (g++-aarch64-linux-gnu, 12.2 like the
# boards' own g++) against the headers and libraries of an arm64 Debian 12 root that scripts/board.sh
# makes and fills with the runtime's packages (LibTorch, HDF5, yaml-cpp, ...). The programs built run
# on the boards, and here inside that root under qemu-user emulation (scripts/board.sh test).
#
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-debian12.cmake \
#         -DCOINFER_SYSROOT=/var/cache/coinfer/board-arm64 -DCOINFER_RUNTIME_ONLY=ON
#
# (scripts/board.sh build does exactly that.) COINFER_SYSROOT may also come from the environment.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# The toolchain file is read again for every try_compile: the root travels through the environment.
if(COINFER_SYSROOT)
  set(ENV{COINFER_SYSROOT} "${COINFER_SYSROOT}")
endif()
if(NOT DEFINED ENV{COINFER_SYSROOT} OR NOT EXISTS "$ENV{COINFER_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "the arm64 cross build needs an arm64 Debian 12 root: -DCOINFER_SYSROOT=DIR "
                      "(scripts/board.sh setup makes one; scripts/board.sh path prints where)")
endif()
set(CMAKE_SYSROOT "$ENV{COINFER_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH "$ENV{COINFER_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # build tools are the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)    # libraries, headers and CMake packages the root's
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads the root's .pc files and prefixes their paths with the root.
set(ENV{PKG_CONFIG_DIR} "")
set(ENV{PKG_CONFIG_LIBDIR} "$ENV{COINFER_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:$ENV{COINFER_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "$ENV{COINFER_SYSROOT}")

# The linker finds a library's own dependencies (LibTorch's BLAS, protobuf, ...) in the root. Debian
# installs BLAS through update-alternatives, whose absolute links point into the host's /etc, so the
# OpenBLAS folder is named directly.
set(_coinfer_rpath_link "-Wl,-rpath-link,$ENV{COINFER_SYSROOT}/usr/lib/aarch64-linux-gnu:$ENV{COINFER_SYSROOT}/lib/aarch64-linux-gnu")
foreach(_blas openblas-pthread blas lapack)
  if(EXISTS "$ENV{COINFER_SYSROOT}/usr/lib/aarch64-linux-gnu/${_blas}")
    string(APPEND _coinfer_rpath_link ":$ENV{COINFER_SYSROOT}/usr/lib/aarch64-linux-gnu/${_blas}")
  endif()
endforeach()
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_coinfer_rpath_link}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_coinfer_rpath_link}")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${_coinfer_rpath_link}")
