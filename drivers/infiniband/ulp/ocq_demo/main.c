// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_demo: module entry points and parameters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/workqueue.h>
#include "ocq_demo.h"

char *od_addr = "10.11.12.1";
module_param_named(addr, od_addr, charp, 0444);
MODULE_PARM_DESC(addr,
		 "IPv4 address the server listens on (default 10.11.12.1)");

int od_port = 20049;
module_param_named(port, od_port, int, 0444);
MODULE_PARM_DESC(port, "port the server listens on (default 20049)");

unsigned long od_disconnect_after;
module_param_named(disconnect_after, od_disconnect_after, ulong, 0644);
MODULE_PARM_DESC(disconnect_after, "test hook: hang up conn 0 after N calls");

unsigned int od_stall_ms = OD_STALL_MS;
module_param_named(stall_ms, od_stall_ms, uint, 0644);
MODULE_PARM_DESC(stall_ms, "end a run silent this long (ms, default 5000)");
unsigned int od_log_errors = OD_LOG_ERRORS;
module_param_named(log_errors, od_log_errors, uint, 0644);
MODULE_PARM_DESC(log_errors, "errors of a run that are logged (default 10)");

struct workqueue_struct *od_wq;

const char *const od_path_names[OD_NR_PATHS] = {
	[OD_OCQ_STRICT] = "ocq-strict",
	[OD_OCQ_FLOW] = "ocq-flow",
	[OD_OCQ_PARALLEL] = "ocq-parallel",
	[OD_UP_WQ] = "upstream-wq",
	[OD_UP_UNBOUND] = "upstream-unbound",
	[OD_UP_SOFTIRQ] = "upstream-softirq",
	[OD_NAIVE] = "naive",
	[OD_LOCKED] = "locked",
};

const char *const od_state_names[] = {
	[OD_IDLE] = "idle",	  [OD_RUNNING] = "running", [OD_DONE] = "done",
	[OD_STOPPED] = "stopped", [OD_ABORTED] = "aborted",
};

static int __init od_init(void)
{
	int ret;

	if (od_port <= 0 || od_port > 65535)
		return -EINVAL;
	od_wq = alloc_workqueue("ocq_demo", WQ_MEM_RECLAIM, 0);
	if (!od_wq)
		return -ENOMEM;
	ret = od_paths_init();
	if (ret)
		goto out_destroy_wq;
	od_run_init();
	ret = od_control_init();
	if (ret)
		goto out_paths_exit;
	return 0;

out_paths_exit:
	od_paths_exit();
out_destroy_wq:
	destroy_workqueue(od_wq);
	return ret;
}

static void __exit od_exit(void)
{
	/* no new command can come in; then a running run is stopped */
	od_control_exit();
	od_run_exit();
	destroy_workqueue(od_wq);
	od_paths_exit();
}

module_init(od_init);
module_exit(od_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("RPC-over-RDMA style demo ULP for ordered completion queues");
