// chainrt model: the one way a message lists executor policies — built from policies.def, so
// that no list of policy names is written anywhere else.
#pragma once

#include <string>

#include "chainrt/model/model.hpp"

namespace chainrt {

// The names of the policies for which `keep` holds (all when null), in policies.def order,
// joined as "a, b, c" (" and " before the last when `and_last`).
std::string policy_list(bool (*keep)(Policy) = nullptr, bool and_last = false);

}  // namespace chainrt
