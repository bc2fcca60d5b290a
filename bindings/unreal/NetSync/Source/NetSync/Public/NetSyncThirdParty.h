// The netsync headers, included the way Unreal wants third-party code:
// between THIRD_PARTY_INCLUDES_START and _END (warnings of the engine's
// stricter settings stay off inside them). Include this, never the
// headers directly.

#pragma once

#include "CoreMinimal.h"

THIRD_PARTY_INCLUDES_START
#include "netsync.hpp"
#include "netsync_unreal_convert.hpp"
THIRD_PARTY_INCLUDES_END
