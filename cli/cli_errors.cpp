#include <iostream>

#include "cli/commands.hpp"
#include "core/input_error.hpp"
#include "core/lut.hpp"

namespace coinfer::cli {

int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const LutMissingError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace coinfer::cli
