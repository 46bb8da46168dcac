// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ulp-io - the I/O of make ulp-bench: O_DIRECT reads or writes of one file or
 * block device, timed one by one, for the guest (a static binary: the guest
 * has no fio).
 *
 * Usage: ulp-io read|write PATH BLOCK_BYTES OPS THREADS seq|rand SPAN_BYTES
 *
 * THREADS threads each do OPS / THREADS operations of BLOCK_BYTES, in turn
 * (seq: thread t does blocks t, t + THREADS, ... of SPAN_BYTES) or at random
 * block-aligned offsets below SPAN_BYTES (rand), one at a time.  Writes carry
 * a pattern.  One JSON line on stdout:
 *
 *   {"ops":N,"errors":E,"seconds":S,"iops":I,"mb_s":M,"p50_us":X,"p99_us":Y}
 *
 * latencies being each pread()/pwrite()'s.  Exit status 0 when every
 * operation moved its whole block, 1 otherwise, 2 for bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct job {
	int fd;
	int write;
	int rand;
	size_t bs;
	long ops;	/* of this thread */
	long first;	/* seq: this thread's first block */
	long stride;	/* seq: blocks between two of its operations */
	long blocks;	/* blocks in the span */
	unsigned int seed;
	double *lat;	/* this thread's latencies, in us */
	long errors;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	struct job *j = arg;
	void *buf;
	long i;

	if (posix_memalign(&buf, 4096, j->bs)) {
		j->errors = j->ops;
		return NULL;
	}
	memset(buf, 0xa5 ^ (j->first & 0xff), j->bs);
	for (i = 0; i < j->ops; i++) {
		long blk = j->rand ? (long)(rand_r(&j->seed) % j->blocks) :
				     (j->first + i * j->stride) % j->blocks;
		off_t off = (off_t)blk * j->bs;
		double t0 = now_s();
		ssize_t n = j->write ? pwrite(j->fd, buf, j->bs, off) :
				       pread(j->fd, buf, j->bs, off);

		j->lat[i] = (now_s() - t0) * 1e6;
		if (n != (ssize_t)j->bs)
			j->errors++;
	}
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
	long ops, threads, t, n = 0, errors = 0;
	unsigned long long span;
	struct job *jobs;
	pthread_t *tids;
	double t0, secs, *all;
	size_t bs;
	int fd, wr;

	if (argc != 8 || (strcmp(argv[1], "read") && strcmp(argv[1], "write")) ||
	    (strcmp(argv[6], "seq") && strcmp(argv[6], "rand"))) {
		fprintf(stderr, "usage: ulp-io read|write PATH BLOCK_BYTES OPS THREADS seq|rand SPAN_BYTES\n");
		return 2;
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
	}
	secs = now_s() - t0;
	close(fd);
	qsort(all, ops, sizeof(*all), cmp_double);
	printf("{\"ops\":%ld,\"errors\":%ld,\"seconds\":%.3f,\"iops\":%.1f,\"mb_s\":%.2f,\"p50_us\":%.0f,\"p99_us\":%.0f}\n",
	       ops, errors, secs, ops / secs, ops * (double)bs / secs / 1e6,
	       pct(all, ops, 0.50), pct(all, ops, 0.99));
	return errors ? 1 : 0;
}
