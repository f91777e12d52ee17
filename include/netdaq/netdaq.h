// Umbrella header of the netdaq public API.
#pragma once

#include "netdaq/app_block.h"
#include "netdaq/burst.h"
#include "netdaq/config.h"
#include "netdaq/engine_info.h"
#include "netdaq/engines/afxdp.h"
#include "netdaq/engines/dpdk.h"
#include "netdaq/engines/pcap.h"
#include "netdaq/engines/rdma.h"
#include "netdaq/engines/socket.h"
#include "netdaq/gpu.h"
#include "netdaq/metrics.h"
#include "netdaq/payload.h"
#include "netdaq/session.h"
#include "netdaq/stats.h"
#include "netdaq/status.h"
