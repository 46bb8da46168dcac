// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ulp-io - the I/O of make ulp-bench: O_DIRECT reads or writes of one file or
 * block device, timed one by one, for the guest (a static binary: the guest
 * has no fio).
 *
 * Usage: ulp-io read|write PATH BLOCK_BYTES OPS THREADS seq|rand SPAN_BYTES [OPTS]
 *
 * THREADS threads each do OPS / THREADS operations of BLOCK_BYTES, in turn
 * (seq: thread t does blocks t, t + THREADS, ... of SPAN_BYTES) or at random
 * block-aligned offsets below SPAN_BYTES (rand), one at a time.  Writes carry
 * a pattern.  OPTS, comma-separated:
 *
 *   iopoll  each thread does its operations through an io_uring of its own set
 *           up with IORING_SETUP_IOPOLL (raw system calls: no liburing in a
 *           static binary), so that waiting for a completion polls the block
 *           device's poll queues (REQ_POLLED) instead of sleeping for an
 *           interrupt; a device without poll queues completes them by
 *           interrupt all the same, which only the kernel's side can tell
 *   verify  writes carry a pattern of their block's number; reads check each
 *           block against it, a mismatch counting as an error ("bad")
 *
 * One JSON line on stdout:
 *
 *   {"ops":N,"errors":E,"seconds":S,"iops":I,"mb_s":M,"p50_us":X,"p99_us":Y}
 *
 * latencies being each operation's (pread()/pwrite(), or its io_uring
 * submission and completion); with verify, "bad":B (blocks read back wrong)
 * follows.  Exit status 0 when every operation moved its whole block (and
 * read back right), 1 otherwise, 2 for bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct job {
	int fd;
	int write;
	int rand;
	int iopoll;
	int verify;
	size_t bs;
	long ops;	/* of this thread */
	long first;	/* seq: this thread's first block */
	long stride;	/* seq: blocks between two of its operations */
	long blocks;	/* blocks in the span */
	unsigned int seed;
	double *lat;	/* this thread's latencies, in us */
	long errors;
	long bad;	/* verify: blocks read back wrong */
};

/* One io_uring, one operation in flight: its rings as mapped. */
struct uring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int uring_init(struct uring *u, unsigned int flags)
{
	struct io_uring_params p;
	size_t sqlen, cqlen;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	u->fd = syscall(__NR_io_uring_setup, 4, &p);
	if (u->fd < 0)
		return -errno;
	sqlen = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cqlen = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if ((p.features & IORING_FEAT_SINGLE_MMAP) && cqlen > sqlen)
		sqlen = cqlen;
	sq = mmap(NULL, sqlen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  u->fd, IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return -errno;
	cq = sq;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		cq = mmap(NULL, cqlen, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_CQ_RING);
		if (cq == MAP_FAILED)
			return -errno;
	}
	u->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
		       IORING_OFF_SQES);
	if (u->sqes == MAP_FAILED)
		return -errno;
	u->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	u->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	u->sq_array = (unsigned int *)(sq + p.sq_off.array);
	u->cq_head = (unsigned int *)(cq + p.cq_off.head);
	u->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	u->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/*
 * One read or write of @len bytes at @off, submitted and waited for: with
 * IORING_SETUP_IOPOLL, io_uring_enter() polls for the completion.  Returns
 * the bytes moved or -errno.
 */
static long uring_rw(struct uring *u, int fd, int write, void *buf,
		     size_t len, off_t off)
{
	unsigned int tail = *u->sq_tail, idx = tail & *u->sq_mask, head;
	struct io_uring_sqe *sqe = &u->sqes[idx];
	long ret;
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = write ? IORING_OP_WRITE : IORING_OP_READ;
	sqe->fd = fd;
	sqe->addr = (unsigned long)buf;
	sqe->len = len;
	sqe->off = off;
	u->sq_array[idx] = idx;
	/* the entry before the tail that publishes it */
	__atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
	do
		ret = syscall(__NR_io_uring_enter, u->fd, 1, 1,
			      IORING_ENTER_GETEVENTS, NULL, 0);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	for (;;) {
		head = *u->cq_head;
		/* the completion's fields after the tail that publishes it */
		if (head != __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE))
			break;
		ret = syscall(__NR_io_uring_enter, u->fd, 0, 1,
			      IORING_ENTER_GETEVENTS, NULL, 0);
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
	res = u->cqes[head & *u->cq_mask].res;
	__atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

/* verify: the content of block @blk, 64-bit words that differ per block */
static void pattern(uint64_t *w, size_t bs, long blk)
{
	uint64_t x = ((uint64_t)blk + 1) * 0x9e3779b97f4a7c15ULL;
	size_t i;

	for (i = 0; i < bs / sizeof(*w); i++)
		w[i] = x + i;
}

static int pattern_ok(const uint64_t *w, size_t bs, long blk)
{
	uint64_t x = ((uint64_t)blk + 1) * 0x9e3779b97f4a7c15ULL;
	size_t i;

	for (i = 0; i < bs / sizeof(*w); i++)
		if (w[i] != x + i)
			return 0;
	return 1;
}

/* One operation of @j on block @blk; the bytes moved or -errno. */
static long one_op(struct job *j, struct uring *u, void *buf, long blk)
{
	off_t off = (off_t)blk * j->bs;

	if (j->verify && j->write)
		pattern(buf, j->bs, blk);
	if (j->iopoll)
		return uring_rw(u, j->fd, j->write, buf, j->bs, off);
	return j->write ? pwrite(j->fd, buf, j->bs, off) :
			  pread(j->fd, buf, j->bs, off);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	struct job *j = arg;
	struct uring u = { .fd = -1 };
	void *buf;
	long i;
	int ret;

	if (posix_memalign(&buf, 4096, j->bs)) {
		j->errors = j->ops;
		return NULL;
	}
	if (j->iopoll) {
		ret = uring_init(&u, IORING_SETUP_IOPOLL);
		if (ret) {
			fprintf(stderr, "ulp-io: io_uring_setup(IORING_SETUP_IOPOLL): %s\n",
				strerror(-ret));
			j->errors = j->ops;
			free(buf);
			return NULL;
		}
	}
	memset(buf, 0xa5 ^ (j->first & 0xff), j->bs);
	for (i = 0; i < j->ops; i++) {
		long blk = j->rand ? (long)(rand_r(&j->seed) % j->blocks) :
				     (j->first + i * j->stride) % j->blocks;
		double t0 = now_s();
		long n = one_op(j, &u, buf, blk);

		j->lat[i] = (now_s() - t0) * 1e6;
		if (n != (long)j->bs) {
			if (n < 0 && j->errors < 3)
				fprintf(stderr, "ulp-io: block %ld: %s\n", blk,
					strerror((int)-n));
			j->errors++;
		} else if (j->verify && !j->write &&
			   !pattern_ok(buf, j->bs, blk)) {
			j->bad++;
			j->errors++;
		}
	}
	if (j->iopoll)
		close(u.fd);
	free(buf);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, long n, double p)
{
	long i = (long)(n * p);

	return n ? v[i < n ? i : n - 1] : 0;
}

int main(int argc, char **argv)
{
	long ops, threads, t, n = 0, errors = 0, bad = 0;
	int fd, wr, iopoll = 0, verify = 0;
	unsigned long long span;
	char *opts, *o, *save;
	struct job *jobs;
	pthread_t *tids;
	double t0, secs, *all;
	size_t bs;

	if ((argc != 8 && argc != 9) ||
	    (strcmp(argv[1], "read") && strcmp(argv[1], "write")) ||
	    (strcmp(argv[6], "seq") && strcmp(argv[6], "rand"))) {
		fprintf(stderr, "usage: ulp-io read|write PATH BLOCK_BYTES OPS THREADS seq|rand SPAN_BYTES [iopoll,verify]\n");
		return 2;
	}
	opts = argc == 9 ? argv[8] : NULL;
	for (o = opts ? strtok_r(opts, ",", &save) : NULL; o;
	     o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "iopoll")) {
			iopoll = 1;
		} else if (!strcmp(o, "verify")) {
			verify = 1;
		} else {
			fprintf(stderr, "ulp-io: unknown option '%s' (iopoll, verify)\n", o);
			return 2;
		}
	}
	wr = !strcmp(argv[1], "write");
	bs = strtoul(argv[3], NULL, 0);
	ops = strtol(argv[4], NULL, 0);
	threads = strtol(argv[5], NULL, 0);
	span = strtoull(argv[7], NULL, 0);
	if (!bs || bs % 4096 || ops < 1 || threads < 1 || threads > 64 ||
	    span < bs) {
		fprintf(stderr, "ulp-io: BLOCK_BYTES a multiple of 4096, OPS >= 1, 1..64 THREADS, SPAN_BYTES >= BLOCK_BYTES\n");
		return 2;
	}
	fd = open(argv[2], (wr ? O_WRONLY | O_CREAT : O_RDONLY) | O_DIRECT, 0644);
	if (fd < 0) {
		fprintf(stderr, "ulp-io: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	jobs = calloc(threads, sizeof(*jobs));
	tids = calloc(threads, sizeof(*tids));
	all = calloc(ops, sizeof(*all));
	if (!jobs || !tids || !all)
		return 1;
	for (t = 0; t < threads; t++) {
		struct job *j = &jobs[t];

		j->fd = fd;
		j->write = wr;
		j->iopoll = iopoll;
		j->verify = verify;
		j->rand = !strcmp(argv[6], "rand");
		j->bs = bs;
		j->ops = ops / threads + (t < ops % threads);
		j->first = t;
		j->stride = threads;
		j->blocks = span / bs;
		j->seed = 12345 + t;
		j->lat = all + n;
		n += j->ops;
	}
	t0 = now_s();
	for (t = 0; t < threads; t++)
		if (pthread_create(&tids[t], NULL, run, &jobs[t]))
			return 1;
	for (t = 0; t < threads; t++) {
		pthread_join(tids[t], NULL);
		errors += jobs[t].errors;
		bad += jobs[t].bad;
	}
	secs = now_s() - t0;
	close(fd);
	qsort(all, ops, sizeof(*all), cmp_double);
	printf("{\"ops\":%ld,\"errors\":%ld,\"seconds\":%.3f,\"iops\":%.1f,\"mb_s\":%.2f,\"p50_us\":%.0f,\"p99_us\":%.0f",
	       ops, errors, secs, ops / secs, ops * (double)bs / secs / 1e6,
	       pct(all, ops, 0.50), pct(all, ops, 0.99));
	if (verify)
		printf(",\"bad\":%ld", bad);
	printf("}\n");
	return errors ? 1 : 0;
}
