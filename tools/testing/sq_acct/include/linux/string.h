/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef _SHIM_LINUX_STRING_H
#define _SHIM_LINUX_STRING_H

#include <string.h>

#endif
