#pragma once
// A value that is one of several kinds, each a struct with only its own fields (a scenario event,
// core/scenario.hpp; a rescheduling trigger, sched/rescheduler.hpp): the variant `what`, asked with
// is<Kind>() and as<Kind>() (null when it is another kind). Overloaded builds a visitor from lambdas.
#include <variant>

namespace coinfer {

template <class... Kinds>
struct OneOfKinds {
  using What = std::variant<Kinds...>;
  What what;

  template <class Kind>
  bool is() const {
    return std::holds_alternative<Kind>(what);
  }
  template <class Kind>
  const Kind* as() const {
    return std::get_if<Kind>(&what);
  }
};

// std::visit(Overloaded{[](const A&) {...}, [](const B&) {...}}, v)
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace coinfer
