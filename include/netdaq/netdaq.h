// Umbrella header of the netdaq public API.
#pragma once

#include "netdaq/burst.h"
#include "netdaq/config.h"
#include "netdaq/gpu.h"
#include "netdaq/payload.h"
#include "netdaq/session.h"
#include "netdaq/stats.h"
#include "netdaq/status.h"
