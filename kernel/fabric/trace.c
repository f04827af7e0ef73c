// SPDX-License-Identifier: GPL-2.0
/* fractos: the tracepoints of fabric/fos_trace.h are defined here. */
#define CREATE_TRACE_POINTS
#include "fos_trace.h"
