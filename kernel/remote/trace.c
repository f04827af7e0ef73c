// SPDX-License-Identifier: GPL-2.0
/* fractos: the tracepoints of remote/trace.h are defined here. */
#define CREATE_TRACE_POINTS
#include "trace.h"
