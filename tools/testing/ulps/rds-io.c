// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rds-io - RDS traffic whose every message is checked: the AF_RDS workload of
 * the ulp_rds test and of make ulp-bench, for the guest (a static binary).
 *
 * PAIRS socket pairs: sender i is bound to SRC:PORT+2i, receiver i to
 * DST:PORT+2i+1; sender i sends MESSAGES messages to receiver i, one at a
 * time with blocking sendto(), each of a size drawn between --min-size and
 * --max-size (the first of every 64 the smallest, the second the largest),
 * carrying a header (pair, sequence number, send time, length, a checksum of
 * the whole message) and a payload that is a function of (pair, sequence
 * number).
 * Receiver i checks every message: its sender, that it was not truncated,
 * its length, pair and checksum, its payload against the expected one, and
 * that its sequence number is the next one (in order, none lost, none
 * twice); after the last one, that nothing more arrives within --linger-ms.
 *
 * It reports which transport the sockets were bound to (SO_RDS_TRANSPORT)
 * and which one carried the connection SRC -> DST (RDS_INFO_CONNECTIONS),
 * the messages per second, the latency from sendto() to the receiver's
 * check (p50, p99), the RDS fragments the messages took (RDS_FRAG_SIZE
 * bytes of payload each, at least one a message: one receive completion
 * each over the IB transport), and the changes of RDS's counters
 * (RDS_INFO_COUNTERS) over the run: with the IB transport, ib_rx_cq_event
 * counts its receive completions, the fragments' and the ACKs'.
 *
 * Exit status: 0 when every message arrived intact, in order and once (and,
 * with --transport, over that transport); 1 on any error, each printed on
 * stderr; 2 for bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/rds.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SOL_RDS
#define SOL_RDS 276
#endif
/* the loopback transport's t_type (net/rds/rds.h; not in the uapi header) */
#define RDS_TRANS_LOOP_TYPE 3
/* the payload of one fragment, one receive work request (net/rds/rds.h) */
#define RDS_FRAG_SIZE 4096u

#define MSG_MAGIC 0x6f534452u	/* "RDSo" */
#define MAX_PAIRS 256
#define MAX_TOTAL (16u << 20)	/* messages of a run, all pairs */
/* RDS's default send buffer (half of wmem_default) takes about 104 KB */
#define MAX_SIZE 65536

struct msg_hdr {
	uint32_t magic;
	uint32_t pair;
	uint64_t seq;
	uint64_t sent_ns;	/* CLOCK_MONOTONIC at sendto() */
	uint32_t len;		/* the whole message, header included */
	uint32_t csum;		/* csum64() of the message with csum 0, folded */
};

struct pair {
	unsigned int idx;
	int tx, rx;
	struct sockaddr_in tx_addr, rx_addr;
	float *lat_us;		/* per message received, in order */
	uint64_t received, bytes, frags, send_retries;
	uint64_t last_ns;	/* when the last message was checked */
};

static struct {
	struct in_addr src, dst;
	unsigned int port, pairs, min_size, max_size, timeout_s, linger_ms;
	unsigned int rcvbuf;	/* 0: the default */
	unsigned long messages;
	const char *transport;
	bool json;
} opt = {
	.port = 18000,
	.pairs = 4,
	.messages = 1000,
	.min_size = sizeof(struct msg_hdr),
	.max_size = 16384,
	.timeout_s = 30,
	.linger_ms = 500,
	.transport = "any",
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static unsigned int threads_done;
static unsigned int errors;

/* An error of the run: printed on stderr, counted, and the run ends. */
static void fail(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&lock);
	fputs("rds-io: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	errors++;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
}

static void thread_done(void)
{
	pthread_mutex_lock(&lock);
	threads_done++;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/*
 * FNV-1a over 64-bit words, then the tail's bytes: any changed, lost or
 * swapped word changes it (the multiplication makes it order-dependent), at
 * a few operations per 8 bytes.
 */
static uint64_t csum64(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull, w;
	size_t i;

	for (i = 0; i + sizeof(w) <= n; i += sizeof(w)) {
		memcpy(&w, p + i, sizeof(w));
		h = (h ^ w) * 0x100000001b3ull;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t mix(uint64_t x)	/* splitmix64's finaliser */
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The size of message SEQ of pair P, header included. */
static uint32_t msg_size(unsigned int p, uint64_t seq)
{
	uint32_t span = opt.max_size - opt.min_size + 1;

	if (seq % 64 == 0)
		return opt.min_size;
	if (seq % 64 == 1)
		return opt.max_size;
	return opt.min_size + mix(((uint64_t)p << 40) ^ seq) % span;
}

/* The payload of message SEQ of pair P: LEN bytes into BUF (xorshift64). */
static void fill_payload(unsigned char *buf, size_t len, unsigned int p,
			 uint64_t seq)
{
	uint64_t x = mix(((uint64_t)p << 40) ^ seq ^ 0x5eed) | 1;
	size_t i;

	for (i = 0; i < len; i += sizeof(x)) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(buf + i, &x, len - i < sizeof(x) ? len - i : sizeof(x));
	}
}

static uint32_t msg_csum(unsigned char *msg, size_t len)
{
	struct msg_hdr *h = (struct msg_hdr *)msg;
	uint32_t saved = h->csum;
	uint64_t c;

	h->csum = 0;
	c = csum64(msg, len);
	h->csum = saved;
	return (uint32_t)(c ^ (c >> 32));
}

static const char *addr_str(const struct sockaddr_in *a, char *buf,
			    size_t len)
{
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, ntohs(a->sin_port));
	return buf;
}

static int set_timeout(int fd, int optname, unsigned int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 };

	return setsockopt(fd, SOL_SOCKET, optname, &tv, sizeof(tv));
}

static void *sender(void *arg)
{
	struct pair *pr = arg;
	unsigned char *buf = malloc(opt.max_size);
	struct msg_hdr *h = (struct msg_hdr *)buf;
	uint64_t seq;
	ssize_t n;

	if (!buf) {
		fail("pair %u: out of memory", pr->idx);
		return NULL;
	}
	for (seq = 0; seq < opt.messages; seq++) {
		uint32_t len = msg_size(pr->idx, seq);

		fill_payload(buf + sizeof(*h), len - sizeof(*h), pr->idx, seq);
		h->magic = MSG_MAGIC;
		h->pair = pr->idx;
		h->seq = seq;
		h->len = len;
		h->sent_ns = now_ns();
		h->csum = msg_csum(buf, len);
		for (;;) {
			n = sendto(pr->tx, buf, len, 0,
				   (struct sockaddr *)&pr->rx_addr,
				   sizeof(pr->rx_addr));
			if (n >= 0 || (errno != EINTR && errno != ENOBUFS))
				break;
			/* ENOBUFS: the receiver's port is congested */
			pr->send_retries++;
			usleep(1000);
		}
		if (n < 0) {
			fail("pair %u: sendto message %llu (%u bytes): %s%s",
			     pr->idx, (unsigned long long)seq, len,
			     strerror(errno),
			     errno == ETIMEDOUT ? " (the send queue stayed full)" : "");
			break;
		}
		if ((size_t)n != len) {
			fail("pair %u: sendto message %llu sent %zd of %u bytes",
			     pr->idx, (unsigned long long)seq, n, len);
			break;
		}
	}
	free(buf);
	thread_done();
	return NULL;
}

/* Check message BUF of N bytes that pair PR received from FROM. */
static bool check_msg(struct pair *pr, unsigned char *buf, ssize_t n,
		      int flags, const struct sockaddr_in *from,
		      unsigned char *expect)
{
	struct msg_hdr *h = (struct msg_hdr *)buf;
	uint64_t want = pr->received;
	char a[64], b[64];
	size_t i;

	if (from->sin_addr.s_addr != pr->tx_addr.sin_addr.s_addr ||
	    from->sin_port != pr->tx_addr.sin_port) {
		fail("pair %u: a message from %s, not from its sender %s",
		     pr->idx, addr_str(from, a, sizeof(a)),
		     addr_str(&pr->tx_addr, b, sizeof(b)));
		return false;
	}
	if (flags & MSG_TRUNC) {
		fail("pair %u: message %llu truncated (larger than %u bytes)",
		     pr->idx, (unsigned long long)want, opt.max_size);
		return false;
	}
	if ((size_t)n < sizeof(*h) || h->magic != MSG_MAGIC) {
		fail("pair %u: message %llu: %zd bytes without a header",
		     pr->idx, (unsigned long long)want, n);
		return false;
	}
	if (h->len != (uint32_t)n || h->pair != pr->idx) {
		fail("pair %u: message %llu: %zd bytes, header says %u bytes of pair %u",
		     pr->idx, (unsigned long long)want, n, h->len, h->pair);
		return false;
	}
	if (msg_csum(buf, n) != h->csum) {
		fail("pair %u: message seq %llu (%zd bytes): checksum %08x, header says %08x",
		     pr->idx, (unsigned long long)h->seq, n, msg_csum(buf, n),
		     h->csum);
		return false;
	}
	if (h->seq < want) {
		fail("pair %u: message %llu received again after %llu (duplicate)",
		     pr->idx, (unsigned long long)h->seq,
		     (unsigned long long)want - 1);
		return false;
	}
	if (h->seq > want) {
		fail("pair %u: message %llu received where %llu was due (%llu lost or out of order)",
		     pr->idx, (unsigned long long)h->seq,
		     (unsigned long long)want,
		     (unsigned long long)(h->seq - want));
		return false;
	}
	if ((uint32_t)n != msg_size(pr->idx, want)) {
		fail("pair %u: message %llu: %zd bytes, %u were sent", pr->idx,
		     (unsigned long long)want, n, msg_size(pr->idx, want));
		return false;
	}
	fill_payload(expect, n - sizeof(*h), pr->idx, want);
	if (memcmp(buf + sizeof(*h), expect, n - sizeof(*h))) {
		for (i = 0; buf[sizeof(*h) + i] == expect[i]; i++)
			;
		fail("pair %u: message %llu: payload byte %zu differs from the one sent",
		     pr->idx, (unsigned long long)want, i);
		return false;
	}
	return true;
}

/* RDS's recvmsg() times out with ETIMEDOUT (recv.c rds_recvmsg()) */
static bool timed_out(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == ETIMEDOUT;
}

static ssize_t recv_one(struct pair *pr, unsigned char *buf, int *flags,
			struct sockaddr_in *from)
{
	struct iovec iov = { .iov_base = buf, .iov_len = opt.max_size };
	struct msghdr mh = {
		.msg_name = from,
		.msg_namelen = sizeof(*from),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	ssize_t n;

	do {
		n = recvmsg(pr->rx, &mh, 0);
	} while (n < 0 && errno == EINTR);
	*flags = mh.msg_flags;
	return n;
}

static void *receiver(void *arg)
{
	struct pair *pr = arg;
	unsigned char *buf = malloc(opt.max_size), *expect = malloc(opt.max_size);
	struct sockaddr_in from;
	int flags;
	ssize_t n;

	if (!buf || !expect) {
		fail("pair %u: out of memory", pr->idx);
		goto out;
	}
	while (pr->received < opt.messages) {
		n = recv_one(pr, buf, &flags, &from);
		if (n < 0 && timed_out(errno)) {
			fail("pair %u: nothing received for %u s after %llu of %lu messages (--timeout)",
			     pr->idx, opt.timeout_s,
			     (unsigned long long)pr->received, opt.messages);
			goto out;
		}
		if (n < 0) {
			fail("pair %u: recvmsg after %llu of %lu messages: %s",
			     pr->idx, (unsigned long long)pr->received,
			     opt.messages, strerror(errno));
			goto out;
		}
		if (!check_msg(pr, buf, n, flags, &from, expect))
			goto out;
		pr->last_ns = now_ns();
		pr->lat_us[pr->received++] =
			(pr->last_ns - ((struct msg_hdr *)buf)->sent_ns) / 1e3;
		pr->bytes += n;
		/* as the IB transport's rds_ib_xmit() cuts a message */
		pr->frags += n ? (n + RDS_FRAG_SIZE - 1) / RDS_FRAG_SIZE : 1;
	}
	if (opt.linger_ms) {
		set_timeout(pr->rx, SO_RCVTIMEO, opt.linger_ms);
		n = recv_one(pr, buf, &flags, &from);
		if (n >= 0)
			fail("pair %u: a message (%zd bytes, seq %llu) after the last one",
			     pr->idx, n,
			     n >= (ssize_t)sizeof(struct msg_hdr) ?
			     (unsigned long long)((struct msg_hdr *)buf)->seq : 0ull);
		else if (!timed_out(errno))
			fail("pair %u: recvmsg after the last message: %s",
			     pr->idx, strerror(errno));
	}
out:
	free(buf);
	free(expect);
	thread_done();
	return NULL;
}

/* What bind()'s EADDRNOTAVAIL means on an AF_RDS socket */
static const char no_transport[] =
	" (no RDS transport takes it: rds_rdma not loaded, or no RDMA device on its netdev?)";

static int rds_socket(const struct in_addr *addr, unsigned int port,
		      struct sockaddr_in *sa)
{
	char a[64];
	int fd;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		fprintf(stderr, "rds-io: error: socket(AF_RDS): %s%s\n",
			strerror(errno),
			errno == EAFNOSUPPORT ? " (is rds.ko loaded?)" : "");
		return -1;
	}
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr = *addr;
	sa->sin_port = htons(port);
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa))) {
		fprintf(stderr, "rds-io: error: bind %s: %s%s\n",
			addr_str(sa, a, sizeof(a)), strerror(errno),
			errno == EADDRNOTAVAIL ? no_transport : "");
		close(fd);
		return -1;
	}
	return fd;
}

static const char *trans_name(int t)
{
	switch (t) {
	case RDS_TRANS_IB:
		return "ib";
	case RDS_TRANS_TCP:
		return "tcp";
	case RDS_TRANS_LOOP_TYPE:
		return "loop";
	default:
		return "?";
	}
}

/* The transport the socket was bound to, by name. */
static const char *bound_transport(int fd)
{
	socklen_t len = sizeof(int);
	int t;

	if (getsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &t, &len))
		return "?";
	return trans_name(t);
}

/*
 * An RDS_INFO_* table into a malloc()ed buffer: its entries' size, or -1.
 * *LEN: its size in bytes.
 */
static int rds_info(int fd, int what, void **buf, socklen_t *len)
{
	int each;

	*buf = NULL;
	*len = 0;
	for (;;) {
		each = getsockopt(fd, SOL_RDS, what, *buf, len);
		if (each >= 0)
			return each;
		if (errno != ENOSPC)
			return -1;
		free(*buf);
		*len += 4096;	/* room for entries added meanwhile */
		*buf = malloc(*len);
		if (!*buf)
			return -1;
	}
}

/* The transport name of the connection SRC -> DST, or "none". */
static void conn_transport(int fd, char *name, size_t size)
{
	struct rds_info_connection *c;
	socklen_t len;
	void *buf;
	int each, i;

	snprintf(name, size, "none");
	each = rds_info(fd, RDS_INFO_CONNECTIONS, &buf, &len);
	for (i = 0; each > 0 && (i + 1) * each <= (int)len; i++) {
		c = (struct rds_info_connection *)((char *)buf + i * each);
		if (c->laddr == opt.src.s_addr && c->faddr == opt.dst.s_addr) {
			snprintf(name, size, "%.*s", TRANSNAMSIZ,
				 (char *)c->transport);
			break;
		}
	}
	free(buf);
}

struct counters {
	int n;
	struct rds_info_counter *c;
};

static void counters_read(int fd, struct counters *k)
{
	socklen_t len;
	void *buf;
	int each = rds_info(fd, RDS_INFO_COUNTERS, &buf, &len);

	k->c = buf;
	k->n = each == (int)sizeof(*k->c) ? len / each : 0;
}

/* Counter NAME's value in K, 0 if it has none. */
static uint64_t counter(const struct counters *k, const char *name)
{
	int i;

	for (i = 0; i < k->n; i++)
		if (!strncmp((char *)k->c[i].name, name, sizeof(k->c[i].name)))
			return k->c[i].value;
	return 0;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static void print_counters(const struct counters *k0,
			   const struct counters *k1)
{
	const char *sep = "";
	int i;

	for (i = 0; i < k1->n; i++) {
		uint64_t d = k1->c[i].value -
			     counter(k0, (char *)k1->c[i].name);

		if (!d)
			continue;
		if (opt.json)
			printf("%s\"%.32s\":%llu", sep, (char *)k1->c[i].name,
			       (unsigned long long)d);
		else
			printf("%s%.32s +%llu", sep, (char *)k1->c[i].name,
			       (unsigned long long)d);
		sep = opt.json ? "," : " ";
	}
}

static void print_help(FILE *f)
{
	fprintf(f,
		"usage: rds-io [OPTIONS]\n"
		"RDS messages over socket pairs, every one checked (payload, order, loss).\n"
		"  -s, --src ADDR        senders' IPv4 address (default 10.11.12.1)\n"
		"  -d, --dst ADDR        receivers' IPv4 address (default: --src)\n"
		"  -p, --port PORT       sender i binds PORT+2i, receiver i PORT+2i+1 (default 18000)\n"
		"  -n, --pairs N         socket pairs, 1..%d (default 4)\n"
		"  -m, --messages M      messages per pair (default 1000)\n"
		"      --min-size BYTES  smallest message, at least %zu (the header; default)\n"
		"      --max-size BYTES  largest message, at most %d (default 16384)\n"
		"  -t, --timeout S       fail when a receiver gets nothing, or a send waits, for S s\n"
		"                        (default 30)\n"
		"      --linger-ms MS    after the last message, wait MS ms for a stray one (default\n"
		"                        500; 0: do not)\n"
		"      --rcvbuf BYTES    the receivers' SO_RCVBUF (SO_RCVBUFFORCE, so beyond rmem_max\n"
		"                        as root); a receiver whose queue passes half of it is\n"
		"                        congested and its sender waits\n"
		"      --transport T     fail unless the connection SRC -> DST is carried by T:\n"
		"                        ib, tcp, loop or any (default any)\n"
		"      --json            one JSON line on stdout instead of the text report\n"
		"  -h, --help            this text\n"
		"Exit status: 0 every message arrived intact, in order and once; 1 an error\n"
		"(printed on stderr); 2 bad usage.\n",
		MAX_PAIRS, sizeof(struct msg_hdr), MAX_SIZE);
}

static bool parse_uint(const char *s, unsigned long lo, unsigned long hi,
		       unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 0);
	return !errno && *s && !*end && *v >= lo && *v <= hi;
}

static bool in_range(const char *name, unsigned long v, unsigned long lo,
		     unsigned long hi)
{
	if (v >= lo && v <= hi)
		return true;
	fprintf(stderr, "rds-io: %s %lu: out of range %lu..%lu%s\n", name, v, lo,
		hi, !strcmp(name, "--messages") ? " (16 Mi messages in all)" :
		    !strcmp(name, "--port") ? " (for --pairs)" : "");
	return false;
}

static const char *opt_name(const struct option *lopts, int c)
{
	for (; lopts->name; lopts++)
		if (lopts->val == c)
			return lopts->name;
	return "?";
}

/* Parse the command line into opt; false (after a message) on bad usage. */
static bool parse_args(int argc, char **argv)
{
	enum { O_MIN = 256, O_MAX, O_LINGER, O_RCVBUF, O_TRANSPORT, O_JSON };
	static const struct option lopts[] = {
		{ "src", required_argument, NULL, 's' },
		{ "dst", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "pairs", required_argument, NULL, 'n' },
		{ "messages", required_argument, NULL, 'm' },
		{ "min-size", required_argument, NULL, O_MIN },
		{ "max-size", required_argument, NULL, O_MAX },
		{ "timeout", required_argument, NULL, 't' },
		{ "linger-ms", required_argument, NULL, O_LINGER },
		{ "rcvbuf", required_argument, NULL, O_RCVBUF },
		{ "transport", required_argument, NULL, O_TRANSPORT },
		{ "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *src = "10.11.12.1", *dst = NULL;
	unsigned long v;
	int c;

	while ((c = getopt_long(argc, argv, "s:d:p:n:m:t:h", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			src = optarg;
			continue;
		case 'd':
			dst = optarg;
			continue;
		case O_TRANSPORT:
			opt.transport = optarg;
			if (strcmp(optarg, "ib") && strcmp(optarg, "tcp") &&
			    strcmp(optarg, "loop") && strcmp(optarg, "any")) {
				fprintf(stderr, "rds-io: --transport: ib, tcp, loop or any, not '%s'\n",
					optarg);
				return false;
			}
			continue;
		case O_JSON:
			opt.json = true;
			continue;
		case 'h':
			print_help(stdout);
			exit(0);
		case '?':
			print_help(stderr);
			return false;
		}
		/* the numeric options */
		if (!parse_uint(optarg, 0, ~0ul >> 1, &v)) {
			fprintf(stderr, "rds-io: %s: not a number: '%s'\n",
				opt_name(lopts, c), optarg);
			return false;
		}
		switch (c) {
		case 'p':
			opt.port = v;
			break;
		case 'n':
			opt.pairs = v;
			break;
		case 'm':
			opt.messages = v;
			break;
		case 't':
			opt.timeout_s = v;
			break;
		case O_MIN:
			opt.min_size = v;
			break;
		case O_MAX:
			opt.max_size = v;
			break;
		case O_LINGER:
			opt.linger_ms = v;
			break;
		case O_RCVBUF:
			opt.rcvbuf = v;
			break;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "rds-io: unexpected argument '%s'\n", argv[optind]);
		print_help(stderr);
		return false;
	}
	if (!inet_pton(AF_INET, src, &opt.src) ||
	    !inet_pton(AF_INET, dst ? dst : src, &opt.dst)) {
		fprintf(stderr, "rds-io: --src, --dst: an IPv4 address, not '%s'\n",
			dst && inet_pton(AF_INET, src, &opt.src) ? dst : src);
		return false;
	}
	if (!in_range("--pairs", opt.pairs, 1, MAX_PAIRS) ||
	    !in_range("--messages", opt.messages, 1, MAX_TOTAL / opt.pairs) ||
	    !in_range("--max-size", opt.max_size, sizeof(struct msg_hdr), MAX_SIZE) ||
	    !in_range("--min-size", opt.min_size, sizeof(struct msg_hdr), opt.max_size) ||
	    !in_range("--timeout", opt.timeout_s, 1, 3600) ||
	    !in_range("--linger-ms", opt.linger_ms, 0, 60000) ||
	    !in_range("--rcvbuf", opt.rcvbuf, 0, 1u << 30) ||
	    !in_range("--port", opt.port, 1, 65536 - 2 * opt.pairs))
		return false;
	return true;
}

/* SO_RCVBUFFORCE (CAP_NET_ADMIN), else SO_RCVBUF (up to rmem_max) */
static int set_rcvbuf(int fd, unsigned int bytes)
{
	int v = bytes;

	if (!setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)))
		return 0;
	return setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
}

/* Open and bind every pair's sockets. */
static bool open_pairs(struct pair *prs)
{
	struct pair *pr;
	unsigned int i;

	for (i = 0; i < opt.pairs; i++) {
		pr = &prs[i];
		pr->idx = i;
		pr->tx = rds_socket(&opt.src, opt.port + 2 * i, &pr->tx_addr);
		if (pr->tx < 0)
			return false;
		pr->rx = rds_socket(&opt.dst, opt.port + 2 * i + 1, &pr->rx_addr);
		if (pr->rx < 0)
			return false;
		if (set_timeout(pr->tx, SO_SNDTIMEO, opt.timeout_s * 1000) ||
		    set_timeout(pr->rx, SO_RCVTIMEO, opt.timeout_s * 1000)) {
			fprintf(stderr, "rds-io: error: SO_SNDTIMEO/SO_RCVTIMEO: %s\n",
				strerror(errno));
			return false;
		}
		if (opt.rcvbuf && set_rcvbuf(pr->rx, opt.rcvbuf)) {
			fprintf(stderr, "rds-io: error: SO_RCVBUF %u: %s\n", opt.rcvbuf,
				strerror(errno));
			return false;
		}
		pr->lat_us = calloc(opt.messages, sizeof(*pr->lat_us));
		if (!pr->lat_us) {
			fprintf(stderr, "rds-io: error: out of memory\n");
			return false;
		}
	}
	return true;
}

/* Run the pairs' threads; the number of errors. */
static unsigned int run_pairs(struct pair *prs)
{
	pthread_t tid;
	unsigned int i, started = 0;

	for (i = 0; i < opt.pairs; i++) {
		if (pthread_create(&tid, NULL, receiver, &prs[i]) ||
		    pthread_create(&tid, NULL, sender, &prs[i])) {
			fail("pthread_create: %s", strerror(errno));
			break;
		}
		started += 2;
	}
	/* the threads are left running on an error: exit() ends them */
	pthread_mutex_lock(&lock);
	while (!errors && threads_done < started)
		pthread_cond_wait(&cond, &lock);
	i = errors;
	pthread_mutex_unlock(&lock);
	return i;
}

static void report(struct pair *prs, double secs, const char *tx_t,
		   const char *rx_t, const char *conn_t,
		   const struct counters *k0, const struct counters *k1)
{
	uint64_t msgs = 0, bytes = 0, frags = 0, retries = 0, n = 0;
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];
	float *all = malloc(opt.pairs * opt.messages * sizeof(*all));
	float p50 = 0, p99 = 0;
	unsigned int i;

	for (i = 0; i < opt.pairs; i++) {
		msgs += prs[i].received;
		bytes += prs[i].bytes;
		frags += prs[i].frags;
		retries += prs[i].send_retries;
		if (all) {
			memcpy(all + n, prs[i].lat_us,
			       prs[i].received * sizeof(*all));
			n += prs[i].received;
		}
	}
	if (all && n) {
		qsort(all, n, sizeof(*all), cmp_float);
		p50 = all[(size_t)(n * 0.50)];
		p99 = all[(size_t)(n * 0.99) < n ? (size_t)(n * 0.99) : n - 1];
	}
	free(all);
	inet_ntop(AF_INET, &opt.src, src, sizeof(src));
	inet_ntop(AF_INET, &opt.dst, dst, sizeof(dst));
	if (opt.json) {
		printf("{\"ops\":%llu,\"errors\":%u,\"seconds\":%.3f,\"iops\":%.1f,\"mb_s\":%.2f,\"p50_us\":%.0f,\"p99_us\":%.0f,\"pairs\":%u,\"bytes\":%llu,\"frags\":%llu,\"send_retries\":%llu,\"bound\":\"%s\",\"conn\":\"%s\",\"counters\":{",
		       (unsigned long long)msgs, errors, secs, msgs / secs,
		       bytes / secs / 1e6, p50, p99, opt.pairs,
		       (unsigned long long)bytes, (unsigned long long)frags,
		       (unsigned long long)retries, tx_t, conn_t);
		print_counters(k0, k1);
		printf("}}\n");
		return;
	}
	printf("rds-io: %u pairs x %lu messages of %u..%u bytes, %s -> %s\n",
	       opt.pairs, opt.messages, opt.min_size, opt.max_size, src, dst);
	printf("rds-io: sockets bound to the %s (senders) and %s (receivers) transport; connection %s -> %s: %s\n",
	       tx_t, rx_t, src, dst, conn_t);
	printf("rds-io: %llu messages, %llu bytes (%llu RDS fragments) in %.3f s: %.0f messages/s, %.2f MB/s; latency p50 %.0f us, p99 %.0f us; %llu send retries (congestion)\n",
	       (unsigned long long)msgs, (unsigned long long)bytes,
	       (unsigned long long)frags, secs, msgs / secs, bytes / secs / 1e6,
	       p50, p99, (unsigned long long)retries);
	printf("rds-io: counters: ");
	print_counters(k0, k1);
	printf("\n");
}

int main(int argc, char **argv)
{
	struct counters k0 = {}, k1 = {};
	char conn_t[TRANSNAMSIZ + 1];
	const char *tx_t, *rx_t;
	unsigned int nerr;
	struct pair *prs;
	uint64_t t0, t1 = 0;
	unsigned int i;
	double secs;

	if (!parse_args(argc, argv))
		return 2;
	prs = calloc(opt.pairs, sizeof(*prs));
	if (!prs || !open_pairs(prs))
		return 1;
	tx_t = bound_transport(prs[0].tx);
	rx_t = bound_transport(prs[0].rx);
	counters_read(prs[0].tx, &k0);
	t0 = now_ns();
	nerr = run_pairs(prs);
	for (i = 0; i < opt.pairs; i++)
		t1 = prs[i].last_ns > t1 ? prs[i].last_ns : t1;
	secs = (t1 > t0 ? t1 - t0 : 1) / 1e9;
	counters_read(prs[0].tx, &k1);
	conn_transport(prs[0].tx, conn_t, sizeof(conn_t));
	if (!nerr && strcmp(opt.transport, "any")) {
		const char *want = !strcmp(opt.transport, "ib")  ? "infiniband" :
				   !strcmp(opt.transport, "tcp") ? "tcp" :
								   "loopback";

		if (strcmp(conn_t, want))
			fail("the connection was carried by '%s', not '%s' (--transport %s)",
			     conn_t, want, opt.transport);
	}
	report(prs, secs, tx_t, rx_t, conn_t, &k0, &k1);
	pthread_mutex_lock(&lock);
	nerr = errors;
	pthread_mutex_unlock(&lock);
	fflush(stdout);
	/* exit(), not return: it also ends threads an error left behind */
	exit(nerr ? 1 : 0);
}
