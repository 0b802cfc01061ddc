#pragma once
// Reads a binary file format in a forked child: libhdf5 1.10 crashes (and can loop) on some corrupt
// metadata (found by tests/fuzz), which must end as a clear InputError, never take the program down.
// The child runs `parse` under a memory cap (core/limits.hpp kLutReaderMemoryBytes) with default
// signal handlers and returns its bytes through a pipe; the parent waits at most kLutReaderTimeoutS.
// An InputError thrown in the child comes back as an InputError naming the file and key; a crash, a
// timeout or a memory blow-up becomes an InputError naming `what` ("LUT file", "sample set").
#include <functional>
#include <string>

namespace coinfer {

std::string read_isolated(const std::string& path, const std::string& what, const std::function<std::string()>& parse);

}  // namespace coinfer
