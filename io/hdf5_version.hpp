#pragma once
// The HDF5 library version, for `coinfer version`, without exposing <hdf5.h> to the includer.
#include <string>

namespace coinfer::h5 {

// "major.minor.release" of the HDF5 library this process runs with.
std::string library_version();

}  // namespace coinfer::h5
