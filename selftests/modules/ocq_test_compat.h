/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel-version differences met by the test modules, kept out of their .c
 * files.
 */
#ifndef _OCQ_TEST_COMPAT_H
#define _OCQ_TEST_COMPAT_H

#include <linux/sizes.h>
#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_ocq.h>

/*
 * The last argument of ib_device_ops.create_cq: the udata up to 6.10, the
 * uverbs attribute bundle from 6.11 on.  Kernel callers pass NULL either way.
 */
#if KERNEL_VERSION(6, 11, 0) <= LINUX_VERSION_CODE
#define ocq_compat_create_cq_arg struct uverbs_attr_bundle
#else
#define ocq_compat_create_cq_arg struct ib_udata
#endif

/*
 * The engine's leases (ib_ocq_attr.pause_ms) came with the new poll helper
 * statuses, the provider error and lease statistics and the attribute
 * limits.  Before them, the tests of those fixes still build, with the new
 * names mapped onto the old ones and the new fields read as 0, so that they
 * show how the old engine fails.
 */
#ifdef IB_OCQ_MAX_PAUSE_MS
#define OCQ_TEST_HAVE_LEASE 1
#define ocq_compat_set_pause_ms(attr, ms) ((attr)->pause_ms = (ms))
#define ocq_compat_provider_errors(s) ((s)->provider_errors)
#define ocq_compat_lease_resumes(s) ((s)->lease_resumes)
#else
#define OCQ_TEST_HAVE_LEASE 0
#define IB_PN_MORE IB_PN_SUCCESS
#define IB_PN_REPOLL IB_PN_POLL_NEEDED
#define IB_PN_ARMED IB_PN_COMPLETED
#define IB_PN_EMPTY_ARMED IB_PN_NOT_DONE
#define IB_OCQ_MAX_PAUSE_MS 60000
#define IB_OCQ_DEFAULT_PAUSE_MS 1000
#define IB_OCQ_MAX_BUDGET SZ_1M
#define ocq_compat_set_pause_ms(attr, ms) ((void)(attr), (void)(ms))
#define ocq_compat_provider_errors(s) ((void)(s), 0ULL)
#define ocq_compat_lease_resumes(s) ((void)(s), 0ULL)
#endif

#ifndef IB_POLL_ARM_TRIES
#define IB_POLL_ARM_TRIES 8
#endif
#ifndef IB_OCQ_HOL_DONES
#define IB_OCQ_HOL_DONES 4
#endif

#endif /* _OCQ_TEST_COMPAT_H */
