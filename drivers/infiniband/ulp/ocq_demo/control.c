// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ocq_demo: the control file, /sys/kernel/debug/ocq_demo/control (0600).
 *
 * One command per write(2): "start key=value ..." or "stop".  A command
 * that is malformed or out of range is refused with -EINVAL before
 * anything changes; its one-line reason goes to the kernel log and to the
 * "error=" line of the next read.  A read returns key=value lines, always
 * the same keys.  See Documentation/demo.rst for the protocol.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "ocq_demo.h"

/* the reason of a refused command, at most this long */
#define OD_REASON_LEN 128

static struct dentry *od_debugfs;

static const char *const od_proc_names[OD_NR_PROCS] = {
	[OD_NULL] = "null",
	[OD_ECHO] = "echo",
	[OD_READ] = "read",
	[OD_WRITE] = "write",
};

/* the keys of "start", in the order of their bits in a "seen" mask */
enum od_key {
	OD_K_CONNS,
	OD_K_CREDITS,
	OD_K_CALLS,
	OD_K_DURATION,
	OD_K_MIX,
	OD_K_ECHO,
	OD_K_CHUNK,
	OD_K_PATH,
	OD_K_WORK,
	OD_K_POSTPONE,
	OD_K_DEFER,
	OD_K_RATE,
	OD_K_DIM,
	OD_K_BUSY,
	OD_NR_KEYS,
};

static const char *const od_key_names[OD_NR_KEYS] = {
	[OD_K_CONNS] = "conns",	     [OD_K_CREDITS] = "credits",
	[OD_K_CALLS] = "calls",	     [OD_K_DURATION] = "duration_ms",
	[OD_K_MIX] = "mix",	     [OD_K_ECHO] = "echo_size",
	[OD_K_CHUNK] = "chunk_size", [OD_K_PATH] = "path",
	[OD_K_WORK] = "work_ns",     [OD_K_POSTPONE] = "postpone",
	[OD_K_DEFER] = "defer_us",   [OD_K_RATE] = "rate",
	[OD_K_DIM] = "defer_dim",    [OD_K_BUSY] = "busy_poll_us",
};

/* A refused command: its reason. */
struct od_refusal {
	char why[OD_REASON_LEN];
};

static __printf(2, 3) int od_refuse(struct od_refusal *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void od_params_default(struct od_params *p)
{
	int i;

	memset(p, 0, sizeof(*p));
	p->conns = 2;
	p->credits = 16;
	p->duration_ms = 20000;
	for (i = 0; i < OD_NR_PROCS; i++)
		p->mix[i] = 1;
	p->echo_size = 64;
	p->chunk_size = 65536;
	p->path = OD_OCQ_FLOW;
}

/* ---- parsing ---- */

static int od_parse_num(const char *key, const char *val, u64 min, u64 max,
			u64 *out, struct od_refusal *r)
{
	u64 v;

	if (kstrtou64(val, 10, &v))
		return od_refuse(r, "%s: bad number '%s'", key, val);
	if (v < min || v > max)
		return od_refuse(r, "%s: %llu out of range %llu..%llu", key, v,
				 min, max);
	*out = v;
	return 0;
}

static int od_parse_u32(const char *key, const char *val, u32 min, u32 max,
			u32 *out, struct od_refusal *r)
{
	u64 v;
	int ret = od_parse_num(key, val, min, max, &v, r);

	if (!ret)
		*out = v;
	return ret;
}

static int od_parse_path(const char *val, enum od_path *out,
			 struct od_refusal *r)
{
	int i = match_string(od_path_names, OD_NR_PATHS, val);

	if (i < 0)
		return od_refuse(r, "path: unknown path '%s'", val);
	*out = i;
	return 0;
}

/* One "name:weight" of a mix. */
static int od_parse_weight(char *item, u32 *mix, unsigned long *seen,
			   struct od_refusal *r)
{
	char *w = strchr(item, ':');
	int i;

	if (!w)
		return od_refuse(r, "mix: '%s' is not name:weight", item);
	*w++ = '\0';
	i = match_string(od_proc_names, OD_NR_PROCS, item);
	if (i < 0)
		return od_refuse(r, "mix: unknown procedure '%s'", item);
	if (__test_and_set_bit(i, seen))
		return od_refuse(r, "mix: procedure '%s' given twice", item);
	return od_parse_u32("mix", w, 0, OD_MAX_WEIGHT, &mix[i], r);
}

static int od_parse_mix(char *val, u32 *mix, struct od_refusal *r)
{
	unsigned long seen = 0;
	u32 m[OD_NR_PROCS] = {}, total = 0;
	char *item;
	int i, ret;

	while ((item = strsep(&val, ","))) {
		ret = od_parse_weight(item, m, &seen, r);
		if (ret)
			return ret;
	}
	for (i = 0; i < OD_NR_PROCS; i++)
		total += m[i];
	if (!total)
		return od_refuse(r, "mix: every weight is 0");
	memcpy(mix, m, sizeof(m));
	return 0;
}

static int od_parse_key(enum od_key k, char *val, struct od_params *p,
			struct od_refusal *r)
{
	const char *key = od_key_names[k];
	u32 b;
	int ret;

	switch (k) {
	case OD_K_CONNS:
		return od_parse_u32(key, val, 1, OD_MAX_CONNS, &p->conns, r);
	case OD_K_CREDITS:
		return od_parse_u32(key, val, 1, OD_MAX_CREDITS, &p->credits,
				    r);
	case OD_K_CALLS:
		return od_parse_num(key, val, 0, U32_MAX, &p->calls, r);
	case OD_K_DURATION:
		return od_parse_u32(key, val, 0, 3600000, &p->duration_ms, r);
	case OD_K_MIX:
		return od_parse_mix(val, p->mix, r);
	case OD_K_ECHO:
		return od_parse_u32(key, val, 1, OD_MAX_ECHO, &p->echo_size, r);
	case OD_K_CHUNK:
		return od_parse_u32(key, val, OD_MIN_CHUNK, OD_MAX_CHUNK,
				    &p->chunk_size, r);
	case OD_K_PATH:
		return od_parse_path(val, &p->path, r);
	case OD_K_WORK:
		return od_parse_u32(key, val, 0, OD_MAX_WORK_NS, &p->work_ns,
				    r);
	case OD_K_POSTPONE:
		ret = od_parse_u32(key, val, 0, 1, &b, r);
		if (!ret)
			p->postpone = b;
		return ret;
	case OD_K_DEFER:
		return od_parse_u32(key, val, 0, IB_OCQ_MAX_DEFER_USECS,
				    &p->defer_us, r);
	case OD_K_RATE:
		return od_parse_u32(key, val, 0, OD_MAX_RATE, &p->rate, r);
	case OD_K_DIM:
		ret = od_parse_u32(key, val, 0, 1, &b, r);
		if (!ret)
			p->defer_dim = b;
		return ret;
	case OD_K_BUSY:
		return od_parse_u32(key, val, 0, IB_OCQ_MAX_SUSPEND_USECS,
				    &p->busy_poll_us, r);
	default:
		return od_refuse(r, "internal: key %d", k);
	}
}

/* One "key=value" of a start command. */
static int od_parse_pair(char *tok, struct od_params *p, unsigned long *seen,
			 struct od_refusal *r)
{
	char *val = strchr(tok, '=');
	int k;

	if (!val)
		return od_refuse(r, "'%s' is not key=value", tok);
	*val++ = '\0';
	k = match_string(od_key_names, OD_NR_KEYS, tok);
	if (k < 0)
		return od_refuse(r, "unknown key '%s'", tok);
	if (__test_and_set_bit(k, seen))
		return od_refuse(r, "key '%s' given twice", tok);
	if (!*val)
		return od_refuse(r, "%s: empty value", tok);
	return od_parse_key(k, val, p, r);
}

static char *od_next_token(char **s)
{
	char *tok;

	do {
		tok = strsep(s, " \t\n");
	} while (tok && !*tok);
	return tok;
}

/* The keys of a call, which the open loop's messages do not have. */
#define OD_CALL_KEYS \
	(BIT(OD_K_CREDITS) | BIT(OD_K_MIX) | BIT(OD_K_ECHO) | BIT(OD_K_CHUNK))

/* rate > 0: refuse the keys of calls, and carry no procedure. */
static int od_check_open_loop(struct od_params *p, unsigned long seen,
			      struct od_refusal *r)
{
	int k;

	if (!p->rate)
		return 0;
	for_each_set_bit(k, &seen, OD_NR_KEYS)
		if (BIT(k) & OD_CALL_KEYS)
			return od_refuse(r, "%s: not with rate (open loop)",
					 od_key_names[k]);
	memset(p->mix, 0, sizeof(p->mix));
	p->mix[OD_NULL] = 1;
	return 0;
}

static int od_parse_start(char *args, struct od_params *p, struct od_refusal *r)
{
	unsigned long seen = 0;
	char *tok;
	int ret;

	od_params_default(p);
	while ((tok = od_next_token(&args))) {
		ret = od_parse_pair(tok, p, &seen, r);
		if (ret)
			return ret;
	}
	if (!p->calls && !p->duration_ms)
		return od_refuse(r, "calls and duration_ms are both 0");
	/* a postponed arm never arms by itself: nothing to defer */
	if (p->defer_us && p->postpone)
		return od_refuse(r,
				 "defer_us and postpone=1 exclude each other");
	if (p->defer_us && !od_path_is_ocq(p->path))
		return od_refuse(r, "defer_us: only on the ocq-* paths");
	/* software DIM picks the delay up to defer_us: it needs the ceiling */
	if (p->defer_dim && !p->defer_us)
		return od_refuse(r, "defer_dim=1 needs defer_us (its ceiling)");
	if (p->busy_poll_us && !od_path_is_ocq(p->path))
		return od_refuse(r, "busy_poll_us: only on the ocq-* paths");
	/* what ib_ocq_attr.suspend_usecs excludes */
	if (p->busy_poll_us && (p->postpone || p->defer_dim))
		return od_refuse(r, "busy_poll_us: not with %s",
				 p->postpone ? "postpone" : "defer_dim");
	return od_check_open_loop(p, seen, r);
}

/* ---- commands ---- */

static int od_cmd_start(char *args, struct od_refusal *r)
{
	struct od_params p;
	int ret;

	ret = od_parse_start(args, &p, r);
	if (ret)
		return ret;
	if (od_run.active)
		return od_refuse(r, "start: a run is active, stop it first");
	ret = od_run_start(&p);
	if (ret)
		snprintf(r->why, sizeof(r->why), "start: run failed: %d", ret);
	return ret;
}

static int od_command(char *buf, struct od_refusal *r)
{
	char *cmd = od_next_token(&buf);

	if (!cmd)
		return od_refuse(r, "empty command");
	if (!strcmp(cmd, "start"))
		return od_cmd_start(buf, r);
	if (strcmp(cmd, "stop"))
		return od_refuse(r, "unknown command '%s'", cmd);
	if (od_next_token(&buf))
		return od_refuse(r, "stop takes no argument");
	if (!od_run.active)
		return od_refuse(r, "stop: no run active");
	return od_run_stop();
}

static ssize_t od_control_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	struct od_refusal r = {};
	char *buf;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (len >= PAGE_SIZE) {
		ret = od_refuse(&r, "command longer than a page");
		buf = NULL;
	} else {
		buf = memdup_user_nul(ubuf, len);
		if (IS_ERR(buf))
			return PTR_ERR(buf);
		/* a command is text: a NUL inside would hide what follows it */
		if (strlen(buf) != len)
			ret = od_refuse(&r, "a NUL byte in the command");
	}
	mutex_lock(&od_mutex);
	if (buf && !r.why[0])
		ret = od_command(buf, &r);
	if (r.why[0]) {
		pr_info("control: %s\n", r.why);
		strscpy(od_run.error, r.why, sizeof(od_run.error));
	} else if (!ret) {
		od_run.error[0] = '\0';
	}
	mutex_unlock(&od_mutex);
	kfree(buf);
	return ret ? ret : len;
}

/* ---- reading ---- */

static void od_show_result(struct seq_file *m, const struct od_result *r)
{
	int i;

	seq_printf(m, "calls=%llu\n", r->calls);
	seq_printf(m, "calls_target=%llu\n", od_run.p.calls);
	seq_printf(m, "issued=%llu\n", r->issued);
	seq_printf(m, "bytes=%llu\nerrors=%llu\n", r->bytes, r->errors);
	seq_printf(m, "credit_stalls=%llu\nreorders=%llu\n", r->credit_stalls,
		   r->reorders);
	seq_printf(m, "lost=%llu\nfailed=%llu\n", r->lost, r->failed);
	seq_printf(m, "duplicated=%llu\n", r->duplicated);
	seq_printf(m, "dropped=%llu\nbacklog=%llu\n", r->dropped, r->backlog);
	seq_printf(m, "completions=%llu\nevents=%llu\n", r->completions,
		   r->events);
	seq_printf(m, "runs=%llu\nempty_runs=%llu\n", r->runs, r->empty_runs);
	seq_printf(m, "repolls=%llu\narms=%llu\n", r->repolls, r->arms);
	seq_printf(m, "signaled=%llu\nsends=%llu\n", r->signaled, r->sends);
	seq_puts(m, "lat_hist=");
	for (i = 0; i < OD_HIST; i++)
		seq_printf(m, "%s%llu", i ? "," : "", r->hist[i]);
	seq_printf(m, "\ncpu_ns=%llu\n", r->cpu_ns);
}

static int od_control_show(struct seq_file *m, void *unused)
{
	struct od_run *run = &od_run;
	struct od_result live;
	const struct od_result *r = &run->res;
	u64 elapsed = 0;

	mutex_lock(&od_mutex);
	if (run->active) {
		od_run_result(run, &live);
		r = &live;
		elapsed = ktime_get_ns() - run->t_start;
	} else if (run->t_end) {
		elapsed = run->t_end - run->t_start;
	}
	seq_printf(m, "state=%s\n", od_state_names[READ_ONCE(run->state)]);
	seq_printf(m, "path=%s\n", od_path_names[run->p.path]);
	seq_printf(m, "conns=%u\ncredits=%u\n", run->p.conns, run->p.credits);
	seq_printf(m, "rate=%u\n", run->p.rate);
	seq_printf(m, "elapsed_ms=%llu\n", elapsed / NSEC_PER_MSEC);
	od_show_result(m, r);
	seq_printf(m, "error=%s\n", run->error);
	mutex_unlock(&od_mutex);
	return 0;
}

static int od_control_open(struct inode *inode, struct file *file)
{
	return single_open(file, od_control_show, NULL);
}

static const struct file_operations od_control_fops = {
	.owner = THIS_MODULE,
	.open = od_control_open,
	.read = seq_read,
	.write = od_control_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/**
 * od_control_init - create the control file
 *
 * Return: 0 (debugfs failures are not fatal to a module).
 */
int od_control_init(void)
{
	od_params_default(&od_run.p);
	od_debugfs = debugfs_create_dir("ocq_demo", NULL);
	debugfs_create_file("control", 0600, od_debugfs, NULL,
			    &od_control_fops);
	return 0;
}

/**
 * od_control_exit - remove the control file, waiting for its users
 */
void od_control_exit(void)
{
	debugfs_remove_recursive(od_debugfs);
}
