/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel-version differences met by the test modules, kept out of their .c
 * files.
 */
#ifndef _OCQ_TEST_COMPAT_H
#define _OCQ_TEST_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>

/*
 * The last argument of ib_device_ops.create_cq: the udata up to 6.10, the
 * uverbs attribute bundle from 6.11 on.  Kernel callers pass NULL either way.
 */
#if KERNEL_VERSION(6, 11, 0) <= LINUX_VERSION_CODE
#define ocq_compat_create_cq_arg struct uverbs_attr_bundle
#else
#define ocq_compat_create_cq_arg struct ib_udata
#endif

#endif /* _OCQ_TEST_COMPAT_H */
