// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host tests of include/rdma/ib_sq_acct.h: the header is compiled as C by
 * sq_acct_glue.c against the shims in include/, and driven from here.
 *
 * - unit tests of the counters, the policy and the error paths;
 * - random post/cancel/reap/flush sequences checked step by step against
 *   a reference model that counts in unbounded (non-wrapping) integers,
 *   started at 0, just below 2^64 and just below 2^63;
 * - the shared CQ credit, alone and under four queues;
 * - threads: posters and a reaper running concurrently (run under TSan
 *   with "make tsan");
 * - a streaming simulation that reports the signaled fraction per policy.
 *
 * Output is KTAP; the exit status is 0 only if every test passed.
 */
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sq_acct_glue.h"

namespace {

enum {
	POLICY_DEFAULT,
	POLICY_MARKER,
	POLICY_ALL
};
const char *const policy_name[] = {"default", "marker", "all"};

constexpr int kEINVAL = 22, kENOMEM = 12, kENOSPC = 28, kEIO = 5;

int failures; // checks failed in the current test

#define CHECK(cond)                                                                             \
	do {                                                                                    \
		if (!(cond)) {                                                                  \
			failures++;                                                             \
			std::fprintf(stderr, "# %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, \
				     #cond);                                                    \
			return;                                                                 \
		}                                                                               \
	} while (0)

struct Rng {
	uint64_t s;
	explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
	uint64_t next()
	{
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		return s;
	}
	uint32_t below(uint32_t n) { return (uint32_t)(next() % n); }
	bool chance(uint32_t pct) { return below(100) < pct; }
};

// Records every release hook call.
struct Releases {
	std::vector<std::pair<uint64_t, uintptr_t>> log; // (seq, ctx)
	static void cb(void *opaque, uint64_t seq, void *ctx)
	{
		static_cast<Releases *>(opaque)->log.emplace_back(seq, (uintptr_t)ctx);
	}
};

struct Sq {
	struct sqt *t = nullptr;
	explicit Sq(uint32_t depth, int policy, uint64_t start, Releases *r,
		    struct sqt_credit *cc = nullptr)
	{
		int err;

		t = sqt_new(depth, policy, start, cc, r ? Releases::cb : nullptr, r, &err);
		if (!t) {
			std::fprintf(stderr, "# sqt_new: %d\n", err);
			std::abort();
		}
	}
	~Sq()
	{
		sqt_release_all(t); // teardown: the QP is drained by now
		sqt_free(t);
	}
	Sq(const Sq &) = delete;
	Sq &operator=(const Sq &) = delete;
};

/* ------------------------------------------------------------------ */
/* Reference model: the documented rules in non-wrapping arithmetic.   */
/* ------------------------------------------------------------------ */

struct Model {
	struct Slot {
		uintptr_t ctx;
		bool signaled;
	};
	int64_t head = 0, tail = 0, sig = -1; // relative to start
	uint32_t limit;
	int policy;
	int64_t *credit; // shared model credit or nullptr
	std::deque<Slot> slots; // [tail, head)
	uint64_t posts = 0, nsig = 0, blocked = 0, blocked_cq = 0, reaped = 0, released = 0;
	uint32_t max_depth = 0;
	// last reservation, for cancel
	int64_t t_first = 0, t_prev_sig = 0;
	uint32_t t_n = 0;
	bool t_signal = false;

	Model(uint32_t l, int p, int64_t *c = nullptr) : limit(l), policy(p), credit(c) {}

	bool want(uint32_t n, bool need) const
	{
		int64_t last = head + n - 1;

		if (need || policy == POLICY_ALL)
			return true;
		if (last - sig >= limit / 2)
			return true;
		if (policy != POLICY_DEFAULT)
			return false;
		if (head + n - tail < (int64_t)(limit - limit / 8))
			return false;
		bool unreaped = sig >= tail;
		bool recent = last - sig < limit / 4;
		return !(unreaped && recent);
	}

	int reserve(uint32_t n, bool need, uintptr_t ctx)
	{
		if (n == 0 || n > limit)
			return -kEINVAL;
		if (head - tail + n > limit) {
			blocked++;
			return -kENOSPC;
		}
		bool s = want(n, need);
		if (s && credit) {
			if (*credit < 1) {
				blocked_cq++;
				return -kENOSPC;
			}
			--*credit;
		}
		t_first = head;
		t_n = n;
		t_signal = s;
		t_prev_sig = sig;
		for (uint32_t i = 0; i + 1 < n; i++)
			slots.push_back({0, false});
		slots.push_back({ctx, s});
		if (s) {
			sig = head + n - 1;
			nsig++;
		}
		posts += n;
		head += n;
		max_depth = std::max<uint32_t>(max_depth, (uint32_t)(head - tail));
		return 0;
	}

	void cancel(uint32_t posted)
	{
		if (t_signal) {
			sig = t_prev_sig;
			nsig--;
			if (credit)
				++*credit;
		}
		posts -= t_n - posted;
		for (uint32_t i = posted; i < t_n; i++)
			slots.pop_back();
		head = t_first + posted;
	}

	void retire_front(std::vector<std::pair<int64_t, uintptr_t>> &out)
	{
		Slot s = slots.front();

		slots.pop_front();
		if (s.signaled && credit)
			++*credit;
		if (s.ctx) {
			released++;
			out.emplace_back(tail, s.ctx);
		}
		tail++;
	}

	int reap(int64_t seq, std::vector<std::pair<int64_t, uintptr_t>> &out)
	{
		if (seq < tail)
			return 0;
		if (seq >= head)
			return -kEINVAL;
		int n = (int)(seq + 1 - tail);
		while (tail <= seq)
			retire_front(out);
		reaped += n;
		return n;
	}

	uint32_t release_all(std::vector<std::pair<int64_t, uintptr_t>> &out)
	{
		uint32_t n = (uint32_t)(head - tail);

		while (tail < head)
			retire_front(out);
		return n;
	}

	bool has_signaled_outstanding() const
	{
		return std::any_of(slots.begin(), slots.end(),
				   [](const Slot &s) { return s.signaled; });
	}
};

/* ------------------------------------------------------------------ */
/* Unit tests                                                          */
/* ------------------------------------------------------------------ */

void test_seq_compare()
{
	const uint64_t max = UINT64_MAX;

	CHECK(sqt_seq_before(1, 2) && !sqt_seq_before(2, 1) && !sqt_seq_before(5, 5));
	CHECK(sqt_seq_before(max, 0) && sqt_seq_after(0, max));
	CHECK(sqt_seq_before(max - 3, 4) && sqt_seq_after(4, max - 3));
	CHECK(sqt_seq_before((1ull << 63) - 1, 1ull << 63));
	CHECK(!sqt_seq_after(7, 7));
}

void test_init_errors()
{
	int err;
	struct sqt *t;

	CHECK(!sqt_new(0, POLICY_DEFAULT, 0, nullptr, nullptr, nullptr, &err) && err == -kEINVAL);
	CHECK(!sqt_new(1, POLICY_DEFAULT, 0, nullptr, nullptr, nullptr, &err) && err == -kEINVAL);
	CHECK(!sqt_new(8, 3, 0, nullptr, nullptr, nullptr, &err) && err == -kEINVAL);
	CHECK(!sqt_new((1u << 30) + 1, POLICY_ALL, 0, nullptr, nullptr, nullptr, &err) &&
	      err == -kEINVAL);
	sqt_fail_alloc = 1;
	t = sqt_new(8, POLICY_DEFAULT, 0, nullptr, nullptr, nullptr, &err);
	sqt_fail_alloc = 0;
	CHECK(!t && err == -kENOMEM);
	for (uint32_t d : {2u, 3u, 8u, 9u, 100u, 128u}) {
		Sq sq(d, POLICY_DEFAULT, 0, nullptr);
		uint32_t r = sqt_ring_size(sq.t);

		CHECK(r >= d && (r & (r - 1)) == 0 && r < 2 * d);
		CHECK(sqt_space(sq.t) == d && sqt_outstanding(sq.t) == 0);
	}
	{
		// destroy with requests outstanding warns
		struct sqt *t2 = sqt_new(4, POLICY_ALL, 0, nullptr, nullptr, nullptr, &err);
		uint64_t first;
		bool sig;

		CHECK(t2 && sqt_reserve(t2, 1, false, nullptr, &first, &sig) == 0);
		sqt_free(t2);
		CHECK(sqt_warnings == 1);
		sqt_warnings = 0;
	}
	struct sqt_credit *cc = sqt_credit_new(0, &err);
	CHECK(!cc && err == -kEINVAL);
	cc = sqt_credit_new(0x80000000u, &err);
	CHECK(!cc && err == -kEINVAL);
}

// (head - tail) < limit: the depth-th reservation fills the queue, the next fails.
void test_limit(uint64_t start)
{
	Releases rel;
	Sq sq(8, POLICY_MARKER, start, &rel);
	struct sqt_stats st;
	uint64_t first, last_sig = 0;
	bool sig;

	for (uint32_t i = 0; i < 8; i++) {
		CHECK(sqt_reserve(sq.t, 1, false, (void *)(uintptr_t)(i + 1), &first, &sig) == 0);
		CHECK(first == start + i);
		if (sig)
			last_sig = first;
	}
	CHECK(sqt_outstanding(sq.t) == 8 && sqt_space(sq.t) == 0);
	CHECK(sqt_reserve(sq.t, 1, false, nullptr, &first, &sig) == -kENOSPC);
	CHECK(sqt_head(sq.t) == start + 8);
	sqt_get_stats(sq.t, &st);
	CHECK(st.posts == 8 && st.blocked == 1 && st.max_depth == 8);
	// Marker policy, depth 8: signals at the 4th and 8th request.
	CHECK(st.signaled == 2 && last_sig == start + 7);
	CHECK(sqt_reap(sq.t, start + 3) == 4);
	CHECK(rel.log.size() == 4 && rel.log[0].first == start && rel.log[3].second == 4);
	CHECK(sqt_space(sq.t) == 4);
	// Chains: 5 do not fit, 4 do.
	CHECK(sqt_reserve(sq.t, 5, false, nullptr, &first, &sig) == -kENOSPC);
	CHECK(sqt_reserve(sq.t, 4, false, (void *)(uintptr_t)99, &first, &sig) == 0);
	CHECK(first == start + 8);
	// Already retired: ignored.  Never posted: -EINVAL and a warning.
	CHECK(sqt_reap(sq.t, start + 1) == 0);
	int w = sqt_warnings;
	CHECK(sqt_reap(sq.t, start + 12) == -kEINVAL && sqt_warnings == w + 1);
	CHECK(sqt_reserve(sq.t, 0, false, nullptr, &first, &sig) == -kEINVAL);
	CHECK(sqt_reserve(sq.t, 9, false, nullptr, &first, &sig) == -kEINVAL);
	sqt_warnings = w;
	CHECK(sqt_release_all(sq.t) == 8);
	CHECK(rel.log.size() == 9 && rel.log.back().first == start + 11 &&
	      rel.log.back().second == 99);
	CHECK(sqt_tail(sq.t) == sqt_head(sq.t));
}

// Marker positions, ALL, and need_signal.
void test_policy_patterns(uint64_t start)
{
	{
		Sq sq(16, POLICY_MARKER, start, nullptr);
		uint64_t first;
		bool sig;
		std::string pat;

		for (int i = 0; i < 16; i++) {
			CHECK(sqt_reserve(sq.t, 1, i == 2, nullptr, &first, &sig) == 0);
			pat += sig ? 'S' : '.';
			if (i % 4 == 3)
				CHECK(sqt_reap(sq.t, first) >= 0);
		}
		// need at #2, then a marker every 8 after the last signal
		CHECK(pat == "..S.......S.....");
	}
	{
		Sq sq(4, POLICY_ALL, start, nullptr);
		uint64_t first;
		bool sig;

		for (int i = 0; i < 100; i++) {
			CHECK(sqt_reserve(sq.t, 1, false, nullptr, &first, &sig) == 0 && sig);
			CHECK(sqt_reap(sq.t, first) == 1);
		}
	}
	{
		// Default, depth 16, nothing reaped: the marker at 8, then the
		// nearly-full rule (>= 14 outstanding) fires when the last signal
		// is 4 or more requests old.
		Sq sq(16, POLICY_DEFAULT, start, nullptr);
		uint64_t first;
		bool sig;
		std::string pat;

		for (int i = 0; i < 16; i++) {
			CHECK(sqt_reserve(sq.t, 1, false, nullptr, &first, &sig) == 0);
			pat += sig ? 'S' : '.';
		}
		CHECK(pat == ".......S.....S..");
	}
}

// ib_sq_acct_post_send(): flags, seq, and every failure path.
void test_post_send(uint64_t start)
{
	Releases rel;
	int err;
	struct sqt_credit *cc = sqt_credit_new(4, &err);
	CHECK(cc);
	{
		Sq sq(8, POLICY_ALL, start, &rel, cc);
		uint64_t seq = 0;

		CHECK(sqt_post_send(sq.t, 3, false, (void *)(uintptr_t)7, &seq) == 0);
		CHECK(seq == start + 2 && sqt_post_nwr == 3);
		CHECK(sqt_post_flags[0] == 1 && sqt_post_flags[1] == 1); // FENCE kept
		CHECK(sqt_post_flags[2] == (1u | SQT_SIGNALED_FLAG));
		CHECK(sqt_credit_avail(cc) == 3);

		// fails on the first WR: everything undone, credit back
		sqt_post_fail_at = 0;
		sqt_post_err = -kEIO;
		CHECK(sqt_post_send(sq.t, 2, false, (void *)(uintptr_t)8, &seq) == -kEIO);
		CHECK(sqt_head(sq.t) == start + 3 && sqt_signaled(sq.t) == start + 2);
		CHECK(sqt_credit_avail(cc) == 3);

		// fails on the third of four: two stay outstanding, without context
		sqt_post_fail_at = 2;
		CHECK(sqt_post_send(sq.t, 4, false, (void *)(uintptr_t)9, &seq) == -kEIO);
		CHECK(sqt_head(sq.t) == start + 5 && sqt_signaled(sq.t) == start + 2);
		CHECK(sqt_credit_avail(cc) == 3);

		// a driver that leaves bad_wr unset: treated as nothing posted
		sqt_post_fail_at = 1;
		sqt_post_leave_bad_unset = true;
		CHECK(sqt_post_send(sq.t, 2, false, (void *)(uintptr_t)10, &seq) == -kEIO);
		sqt_post_leave_bad_unset = false;
		sqt_post_fail_at = -1;
		CHECK(sqt_head(sq.t) == start + 5);

		struct sqt_stats st;
		sqt_get_stats(sq.t, &st);
		CHECK(st.posts == 5 && st.signaled == 1);

		CHECK(sqt_post_send(sq.t, 1, false, (void *)(uintptr_t)11, &seq) == 0);
		CHECK(seq == start + 5 && sqt_credit_avail(cc) == 2);
		CHECK(sqt_reap(sq.t, start + 2) == 3);
		CHECK(sqt_credit_avail(cc) == 3);
		// flush completions of the two orphans, then the signaled one
		CHECK(sqt_reap(sq.t, start + 3) == 1 && sqt_reap(sq.t, start + 4) == 1);
		CHECK(sqt_reap(sq.t, start + 5) == 1 && sqt_credit_avail(cc) == 4);
		CHECK(rel.log.size() == 2 && rel.log[0].second == 7 && rel.log[1].second == 11);
		CHECK(sqt_warnings == 0);
	}
	sqt_credit_free(cc);
}

void test_credit_basic()
{
	int err;
	struct sqt_credit *cc = sqt_credit_new(5, &err);

	CHECK(cc);
	CHECK(sqt_credit_get(cc, 3) && sqt_credit_avail(cc) == 2);
	CHECK(!sqt_credit_get(cc, 3) && sqt_credit_avail(cc) == 2); // all or nothing
	CHECK(sqt_credit_blocked(cc) == 1);
	CHECK(sqt_credit_get(cc, 2) && !sqt_credit_get(cc, 1));
	sqt_credit_put(cc, 5);
	CHECK(sqt_credit_avail(cc) == 5 && sqt_warnings == 0);
	sqt_credit_put(cc, 1); // more than taken: warns
	CHECK(sqt_warnings == 1);
	sqt_warnings = 0;
	sqt_credit_free(cc);
}

/* ------------------------------------------------------------------ */
/* Random sequences against the model                                  */
/* ------------------------------------------------------------------ */

struct RandomResult {
	std::vector<std::string> trace; // decisions relative to start
};

// One queue, or several sharing a credit; a mismatch with the model counts as a failure.
void run_random(uint64_t seed, uint32_t depth, int policy, uint64_t start, int nsq,
		uint32_t credits, int steps, RandomResult *res)
{
	Rng rng(seed);
	int err;
	struct sqt_credit *cc = credits ? sqt_credit_new(credits, &err) : nullptr;
	int64_t model_credit = credits;
	std::vector<Releases> rel(nsq);
	std::vector<std::unique_ptr<Sq>> sqs;
	std::vector<Model> models;
	std::vector<std::vector<std::pair<int64_t, uintptr_t>>> mrel(nsq);
	uintptr_t next_ctx = 1;

	for (int q = 0; q < nsq; q++) {
		sqs.emplace_back(new Sq(depth, policy, start, &rel[q], cc));
		models.emplace_back(depth, policy, cc ? &model_credit : nullptr);
	}
	auto fail = [&](const char *what, int q, int step) {
		failures++;
		std::fprintf(stderr,
			     "# seed=%" PRIu64 " depth=%u policy=%s start=%#" PRIx64
			     " q=%d step=%d: %s\n",
			     seed, depth, policy_name[policy], start, q, step, what);
	};
	auto same_releases = [&](int q) {
		if (rel[q].log.size() != mrel[q].size())
			return false;
		for (size_t i = 0; i < mrel[q].size(); i++)
			if (rel[q].log[i].first != start + (uint64_t)mrel[q][i].first ||
			    rel[q].log[i].second != mrel[q][i].second)
				return false;
		return true;
	};

	for (int step = 0; step < steps && !failures; step++) {
		int q = (int)rng.below(nsq);
		Sq &sq = *sqs[q];
		Model &m = models[q];
		uint32_t op = rng.below(100);

		if (op < 55) {
			uint32_t n = 1 + (rng.chance(80) ? 0 : rng.below(std::min(depth, 4u)));
			bool need = rng.chance(5);
			uintptr_t ctx = rng.chance(90) ? next_ctx++ : 0;
			uint64_t first = 0;
			bool sig = false;
			int r = sqt_reserve(sq.t, n, need, (void *)ctx, &first, &sig);
			int mr = m.reserve(n, need, ctx);

			if (r != mr) {
				fail("reserve return", q, step);
				break;
			}
			if (r == 0 && (first != start + (uint64_t)m.t_first || sig != m.t_signal)) {
				fail("reserve decision", q, step);
				break;
			}
			if (res && q == 0)
				res->trace.emplace_back(r ? "B" : sig ? "S" : ".");
			if (r == 0 && rng.chance(3)) {
				uint32_t posted = rng.below(n);

				sqt_cancel(sq.t, posted);
				m.cancel(posted);
			}
		} else if (op < 90) {
			// the completion of the oldest outstanding signaled request
			auto it = std::find_if(m.slots.begin(), m.slots.end(),
					       [](const Model::Slot &s) { return s.signaled; });
			if (it == m.slots.end())
				continue;
			int64_t seq = m.tail + (it - m.slots.begin());
			int r = sqt_reap(sq.t, start + (uint64_t)seq);

			if (r != m.reap(seq, mrel[q])) {
				fail("reap return", q, step);
				break;
			}
		} else if (op < 93 && m.head > m.tail) {
			// a flush: every outstanding request completes, one by one
			for (int64_t s = m.tail; s < m.head; s++)
				if (sqt_reap(sq.t, start + (uint64_t)s) != m.reap(s, mrel[q])) {
					fail("flush reap", q, step);
					break;
				}
		} else if (op < 95) {
			// duplicate or stale completion: ignored
			if (sqt_reap(sq.t, start + (uint64_t)m.tail - 1) != 0) {
				fail("stale reap", q, step);
				break;
			}
		}
		if (!same_releases(q)) {
			fail("release sequence", q, step);
			break;
		}
		if (sqt_head(sq.t) != start + (uint64_t)m.head ||
		    sqt_tail(sq.t) != start + (uint64_t)m.tail ||
		    sqt_signaled(sq.t) != start + (uint64_t)m.sig) {
			fail("counters", q, step);
			break;
		}
		if (m.head - m.tail > depth) {
			fail("limit exceeded", q, step);
			break;
		}
		// the default never lets the SQ fill with unsignaled requests only
		if (m.head - m.tail == depth && !m.has_signaled_outstanding()) {
			fail("full of unsignaled requests", q, step);
			break;
		}
		if (cc && sqt_credit_avail(cc) != (uint32_t)model_credit) {
			fail("credit", q, step);
			break;
		}
	}
	for (int q = 0; q < nsq && !failures; q++) {
		struct sqt_stats st;
		Model &m = models[q];

		sqt_get_stats(sqs[q]->t, &st);
		if (st.posts != m.posts || st.signaled != m.nsig || st.blocked != m.blocked ||
		    st.blocked_cq != m.blocked_cq || st.reaped != m.reaped ||
		    st.released != m.released || st.max_depth != m.max_depth) {
			fail("stats", q, -1);
			break;
		}
		// teardown: everything outstanding released once, credit back
		if (sqt_release_all(sqs[q]->t) != m.release_all(mrel[q]) || !same_releases(q)) {
			fail("release_all", q, -1);
			break;
		}
		// every context handed in was released exactly once
		std::vector<uintptr_t> ctxs;
		for (auto &e : rel[q].log)
			ctxs.push_back(e.second);
		std::sort(ctxs.begin(), ctxs.end());
		if (std::adjacent_find(ctxs.begin(), ctxs.end()) != ctxs.end()) {
			fail("double release", q, -1);
			break;
		}
	}
	if (cc && !failures && sqt_credit_avail(cc) != credits)
		fail("credit leaked", -1, -1);
	sqs.clear();
	sqt_credit_free(cc);
	if (sqt_warnings) {
		fail("unexpected WARN_ON_ONCE", -1, -1);
		sqt_warnings = 0;
	}
}

const uint64_t starts[] = {
	0, UINT64_MAX, UINT64_MAX - 2, UINT64_MAX - 100, (1ull << 63) - 3, 0x123456789abcdefull,
};

void test_random_single()
{
	const uint32_t depths[] = {2, 3, 4, 5, 8, 13, 16, 31, 32, 64, 100, 128};
	int runs = 0;

	for (uint64_t seed = 1; seed <= 6 && !failures; seed++)
		for (uint32_t d : depths)
			for (int p = 0; p < 3; p++)
				for (uint64_t st : starts) {
					run_random(seed * 1000 + d, d, p, st, 1, 0, 3000, nullptr);
					runs++;
				}
	std::printf("# %d random runs of 3000 steps\n", runs);
}

// Identical operations from start 0 and from just below 2^64: identical
// decisions (the model checks each one; this checks the traces too).
void test_wrap_invariance()
{
	for (int p = 0; p < 3; p++) {
		RandomResult a, b;

		run_random(77, 24, p, 0, 1, 0, 20000, &a);
		run_random(77, 24, p, UINT64_MAX - 40, 1, 0, 20000, &b);
		CHECK(a.trace == b.trace && a.trace.size() > 1000);
	}
}

void test_random_shared_credit()
{
	int runs = 0;

	for (uint64_t seed = 1; seed <= 20 && !failures; seed++)
		for (int p = 0; p < 3; p++)
			for (uint32_t credits : {1u, 3u, 7u, 40u}) {
				run_random(seed, 16, p, starts[seed % 6], 4, credits, 4000,
					   nullptr);
				runs++;
			}
	std::printf("# %d shared-credit runs, 4 queues\n", runs);
}

/* ------------------------------------------------------------------ */
/* Threads: posters and one reaper, as a ULP and its send CQ           */
/* ------------------------------------------------------------------ */

// A "device" per queue: requests complete in order; only signaled ones
// produce completions, which go to one CQ shared by all queues.
struct SharedCq {
	std::mutex lock;
	std::deque<std::pair<int, uint64_t>> cqes; // (queue, seq)
	size_t max_len = 0;
};

struct ThreadRel {
	std::vector<std::atomic<uint32_t>> count;
	std::atomic<uint64_t> expect_next;
	std::atomic<bool> out_of_order{false};
	explicit ThreadRel(size_t n) : count(n) {}
	static void cb(void *opaque, uint64_t seq, void *ctx)
	{
		auto *r = static_cast<ThreadRel *>(opaque);

		r->count[(uintptr_t)ctx - 1]++;
		if (seq != r->expect_next.load(std::memory_order_relaxed))
			r->out_of_order = true;
		r->expect_next.store(seq + 1, std::memory_order_relaxed);
	}
};

void test_threads(int nsq, uint32_t depth, uint32_t credits, uint32_t per_sq)
{
	const uint64_t start = UINT64_MAX - 5000;
	int err;
	struct sqt_credit *cc = credits ? sqt_credit_new(credits, &err) : nullptr;
	std::vector<std::unique_ptr<ThreadRel>> rels;
	std::vector<struct sqt *> sqs;
	SharedCq cq;
	std::atomic<int> done_posters{0};

	for (int q = 0; q < nsq; q++) {
		rels.emplace_back(new ThreadRel(per_sq));
		rels[q]->expect_next = start;
		sqs.push_back(sqt_new(depth, POLICY_DEFAULT, start, cc, ThreadRel::cb,
				      rels[q].get(), &err));
	}
	std::vector<std::thread> posters;
	posters.reserve(nsq);
	for (int q = 0; q < nsq; q++)
		posters.emplace_back([&, q] {
			uint32_t i = 0;

			while (i < per_sq) {
				uint64_t first;
				bool sig;
				bool last = i == per_sq - 1;

				if (sqt_reserve(sqs[q], 1, last, (void *)(uintptr_t)(i + 1), &first,
						&sig)) {
					std::this_thread::yield();
					continue;
				}
				if (sig) {
					std::lock_guard<std::mutex> g(cq.lock);

					cq.cqes.emplace_back(q, first);
					cq.max_len = std::max(cq.max_len, cq.cqes.size());
				}
				i++;
			}
			done_posters++;
		});
	std::thread reaper([&] {
		for (;;) {
			std::pair<int, uint64_t> e;
			{
				std::lock_guard<std::mutex> g(cq.lock);

				if (cq.cqes.empty()) {
					if (done_posters == nsq)
						return;
					e.first = -1;
				} else {
					e = cq.cqes.front();
					cq.cqes.pop_front();
				}
			}
			if (e.first < 0) {
				std::this_thread::yield();
				continue;
			}
			if (sqt_reap(sqs[e.first], e.second) <= 0)
				std::abort();
		}
	});
	for (auto &t : posters)
		t.join();
	reaper.join();
	uint64_t posts = 0, sig = 0;
	for (int q = 0; q < nsq; q++) {
		struct sqt_stats st;

		sqt_get_stats(sqs[q], &st);
		posts += st.posts;
		sig += st.signaled;
		CHECK(sqt_outstanding(sqs[q]) == 0); // the last post was signaled
		CHECK(!rels[q]->out_of_order);
		for (auto &c : rels[q]->count)
			CHECK(c == 1);
		sqt_free(sqs[q]);
	}
	if (cc) {
		CHECK(cq.max_len <= credits); // the CQ never held more than the credit
		CHECK(sqt_credit_avail(cc) == credits);
		sqt_credit_free(cc);
	}
	std::printf("# threads: %d queue(s) x %u posts, depth %u, credit %u: signaled %.4f, "
		    "max CQ length %zu\n",
		    nsq, per_sq, depth, credits, (double)sig / posts, cq.max_len);
}

void test_threads_single()
{
	test_threads(1, 64, 0, 300000);
}
void test_threads_shared()
{
	test_threads(4, 32, 6, 100000);
}

/* ------------------------------------------------------------------ */
/* Streaming simulation: signaled fraction per policy                  */
/* ------------------------------------------------------------------ */

// The poster keeps the SQ full; the device completes a random number of
// the oldest requests between polls; the reaper sees signaled ones only.
double stream_fraction(uint32_t depth, int policy, uint64_t posts)
{
	Rng rng(depth * 3 + policy);
	Sq sq(depth, policy, UINT64_MAX - 1000, nullptr);
	std::deque<std::pair<uint64_t, bool>> inflight;
	struct sqt_stats st;

	while (true) {
		sqt_get_stats(sq.t, &st);
		if (st.posts >= posts)
			break;
		uint64_t first;
		bool sig;

		while (sqt_reserve(sq.t, 1, false, nullptr, &first, &sig) == 0)
			inflight.emplace_back(first, sig);
		for (uint32_t k = 1 + rng.below(depth / 2); k && !inflight.empty(); k--) {
			auto e = inflight.front();

			inflight.pop_front();
			if (e.second && sqt_reap(sq.t, e.first) <= 0)
				std::abort();
		}
	}
	return (double)st.signaled / st.posts;
}

void test_stream_fraction()
{
	for (uint32_t d : {16u, 32u, 64u, 128u, 256u}) {
		double f[3];

		for (int p = 0; p < 3; p++)
			f[p] = stream_fraction(d, p, 200000);
		std::printf("# stream depth %3u: signaled fraction default %.4f (%.2f per depth)"
			    ", marker %.4f (%.2f), all %.4f\n",
			    d, f[0], f[0] * d, f[1], f[1] * d, f[2]);
		CHECK(f[1] * d >= 1.9 && f[1] * d <= 2.1);
		CHECK(f[0] * d >= 1.9 && f[0] * d <= 2.6);
		CHECK(f[2] == 1.0);
	}
}

struct Test {
	const char *name;
	std::function<void()> fn;
};

} // namespace

int main()
{
	std::vector<Test> tests = {
		{"seq_compare", test_seq_compare},
		{"init_errors", test_init_errors},
		{"limit_start_0", [] { test_limit(0); }},
		{"limit_start_wrap", [] { test_limit(UINT64_MAX - 3); }},
		{"policy_patterns_0", [] { test_policy_patterns(0); }},
		{"policy_patterns_wrap", [] { test_policy_patterns(UINT64_MAX - 6); }},
		{"post_send_0", [] { test_post_send(0); }},
		{"post_send_wrap", [] { test_post_send(UINT64_MAX - 1); }},
		{"credit_basic", test_credit_basic},
		{"random_vs_model", test_random_single},
		{"wrap_invariance", test_wrap_invariance},
		{"random_shared_credit", test_random_shared_credit},
		{"threads_single", test_threads_single},
		{"threads_shared_credit", test_threads_shared},
		{"stream_fraction", test_stream_fraction},
	};
	int failed = 0, n = 0;

	std::printf("KTAP version 1\n1..%zu\n", tests.size());
	for (auto &t : tests) {
		failures = 0;
		sqt_warnings = 0;
		t.fn();
		if (sqt_warnings) {
			std::fprintf(stderr, "# %d unexpected warnings\n", sqt_warnings);
			failures++;
		}
		std::printf("%s %d %s\n", failures ? "not ok" : "ok", ++n, t.name);
		failed += failures != 0;
	}
	std::printf("# sq_acct: %d of %d tests failed\n", failed, n);
	return failed ? 1 : 0;
}
