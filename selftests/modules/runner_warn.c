// SPDX-License-Identifier: GPL-2.0
/*
 * runner_warn - a kernel WARN on purpose, for the runner's own tests
 * (selftests/runner/runner_warn_*.sh, make check-runner).
 *
 * With warn=1 its init WARNs once and the module loads; with warn=0 it loads
 * and says nothing.  The runner fails a test during which the WARN comes,
 * unless the test declares it with "# expect-warn:", and fails a test that
 * declares it when it does not come.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/module.h>

static bool warn;
module_param(warn, bool, 0444);
MODULE_PARM_DESC(warn, "WARN once at load time");

static int __init runner_warn_init(void)
{
	WARN(warn, "runner_warn: a WARN on purpose\n");
	return 0;
}

static void __exit runner_warn_exit(void)
{
}

module_init(runner_warn_init);
module_exit(runner_warn_exit);
MODULE_DESCRIPTION("a WARN on purpose, for the test runner's own tests");
MODULE_LICENSE("GPL");
