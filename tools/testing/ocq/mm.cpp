// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Weak memory: stale reads that the LKMM allows, over the shims.
//
// Every location the shims touch (an atomic_t, a field accessed with
// smp_load_acquire()/smp_store_release() or READ_ONCE()/WRITE_ONCE()) has a
// history: the stores made to it in coherence order, each with the view of
// its writer that it carries ("message").  Each context has a view: for
// every location, the oldest store it may still read.  Then, C11-style:
//
// - a relaxed load (atomic_read(), READ_ONCE()) may return any store not
//   older than the context's view of the location; the explorer chooses
//   which, as a value decision (0 the latest, the default).  The context's
//   view of the location moves up to the store read; the store's message
//   is kept for a later acquire fence.
// - an acquire load (smp_load_acquire(), atomic_read_acquire()) does the
//   same and joins the store's message into the view: what the writer saw
//   before a release is seen after the acquire.
// - a relaxed store carries the view of the writer's last release fence; a
//   release store (smp_store_release()) its current view.
// - an RMW reads the latest store (atomicity).  A value-returning RMW
//   (atomic_fetch_andnot(), a successful atomic_[try_]cmpxchg()) is fully
//   ordered: a full fence, acquire, release, a full fence.  A void RMW
//   (atomic_inc(), atomic_or(), atomic_andnot(), ...) and a failed cmpxchg
//   are relaxed; an RMW's store continues the release sequence of the
//   store it read (carries its message as well).
// - smp_mb() (and smp_mb__{before,after}_atomic()) is a full fence: acquire
//   of every message read so far, release, and a join with one global
//   fence view, so that of two contexts that fence the later sees all the
//   earlier saw (store buffering is forbidden).  smp_rmb() is an acquire
//   fence, smp_wmb() a release fence.
// - the host's own synchronisation (queue_work() before the run it starts,
//   the end of a run before cancel_work_sync() returns, the CQ's lock in
//   the verbs, the ULP's locking around done() and its teardown) is a
//   release and an acquire through a channel.
//
// Plain accesses are not seen: a plain store to a tracked location is
// found at its next shimmed access (the memory differs from the latest
// store) and taken as a store that every context sees, a context that
// makes its first access later as well.  A load chooses among the latest
// store and at most MAX_BACK older ones.  A fence runs in the step of the
// access before it, unless the case makes fences points of the schedule
// (mm_reset()'s @fence_points: CaseSpec::races).
//
// Plain data handed between contexts (a ring slot, the poll batch) is
// checked for data races instead, as the LKMM defines them: two accesses
// of which one is a write, with no happens-before between them.  Each
// watched slot has two locations of its own, with no memory: its writes
// and its reads, each access a store to one of them, which the accessing
// context's view then holds.  Views carry them as they carry any store
// (a release store's message, an acquire load, the host's channels, a
// full fence), so a context that "sees" the latest such store is one
// that happens after the access it stands for.  A write must see the
// slot's last read and write, a read its last write.  A load that could
// be reordered after a later overwrite (load buffering, which the stale
// reads above cannot show) is such a race: a consumer's release that
// does not order its read of the slot before the producer's overwrite.
#include "mm.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "sched.h"

#include <ocq_sim.h>

namespace ocq_sim {

namespace {

const int MAX_BACK = 3;

using View = std::vector<uint32_t>; // per location id: oldest readable store

void join(View &a, const View &b)
{
	if (a.size() < b.size())
		a.resize(b.size(), 0);
	for (size_t i = 0; i < b.size(); i++)
		if (b[i] > a[i])
			a[i] = b[i];
}

struct Store {
	uint64_t val;
	View msg;
};

struct Loc {
	int size;
	std::vector<Store> hist;
};

struct CtxView {
	View cur; // what it may read
	View pending; // messages of relaxed reads, for an acquire fence
	View fence; // its view at its last release fence
};

struct Watch {
	uintptr_t a;
	size_t n;
	std::vector<uint8_t> snap; // the memory at the last write found
	int w, r; // the locations of its writes and of its reads
	std::string name, writer, reader;
};

struct Model {
	bool on = false;
	long stale = 0;
	long reuses = 0;
	std::map<uintptr_t, int> ids; // address -> location id
	std::vector<Loc> locs;
	std::vector<CtxView> ctxs;
	View sc; // the global fence view
	View plain; // the plain stores found: every context sees them
	bool fence_points = false; // a fence is a point of the schedule
	std::map<int, View> chans;
	std::vector<Watch> watches;
	std::string race; // the first data race found
};

Model g;

uint64_t raw_read(const volatile void *p, int size)
{
	uint64_t v = 0;

	switch (size) {
	case 1:
		v = *(const volatile uint8_t *)p;
		break;
	case 2:
		v = *(const volatile uint16_t *)p;
		break;
	case 4:
		v = *(const volatile uint32_t *)p;
		break;
	default:
		v = *(const volatile uint64_t *)p;
		break;
	}
	return v;
}

void raw_write(volatile void *p, int size, uint64_t v)
{
	switch (size) {
	case 1:
		*(volatile uint8_t *)p = (uint8_t)v;
		break;
	case 2:
		*(volatile uint16_t *)p = (uint16_t)v;
		break;
	case 4:
		*(volatile uint32_t *)p = (uint32_t)v;
		break;
	default:
		*(volatile uint64_t *)p = v;
		break;
	}
}

int64_t sext(uint64_t v, int size)
{
	switch (size) {
	case 1:
		return (int8_t)v;
	case 2:
		return (int16_t)v;
	case 4:
		return (int32_t)v;
	default:
		return (int64_t)v;
	}
}

// The running context's view, or NULL outside the model (set-up, checks).
CtxView *self()
{
	Scheduler *s = Scheduler::current();

	if (!g.on || !s || s->self() < 0)
		return nullptr;
	if (g.ctxs.size() <= (size_t)s->self()) {
		size_t from = g.ctxs.size();

		/* a context's first access sees the plain stores found before it */
		g.ctxs.resize(s->self() + 1);
		for (size_t i = from; i < g.ctxs.size(); i++)
			g.ctxs[i].cur = g.plain;
	}
	return &g.ctxs[s->self()];
}

// The location at @p; its history begins with what the memory holds.
int loc_of(const volatile void *p, int size)
{
	uintptr_t a = (uintptr_t)p;
	auto it = g.ids.find(a);
	uint64_t mem = raw_read(p, size);

	if (it == g.ids.end() || g.locs[it->second].size != size) {
		Loc l;

		l.size = size;
		l.hist.push_back({mem, {}});
		g.locs.push_back(l);
		g.ids[a] = (int)g.locs.size() - 1;
		return (int)g.locs.size() - 1;
	}
	Loc &l = g.locs[it->second];
	if (l.hist.back().val != mem) {
		// a plain store: every context sees it, and every later one
		l.hist.push_back({mem, {}});
		if (g.plain.size() <= (size_t)it->second)
			g.plain.resize(it->second + 1, 0);
		g.plain[it->second] = (uint32_t)l.hist.size() - 1;
		for (CtxView &c : g.ctxs) {
			if (c.cur.size() <= (size_t)it->second)
				c.cur.resize(it->second + 1, 0);
			c.cur[it->second] = (uint32_t)l.hist.size() - 1;
		}
	}
	return it->second;
}

uint32_t view_of(const View &v, int id)
{
	return (size_t)id < v.size() ? v[id] : 0;
}

void set_view(View &v, int id, uint32_t idx)
{
	if (v.size() <= (size_t)id)
		v.resize(id + 1, 0);
	if (idx > v[id])
		v[id] = idx;
}

// A location with no memory: a slot's writes or reads (see the top).
int pseudo_loc()
{
	Loc l;

	l.size = 0;
	l.hist.push_back({0, {}});
	g.locs.push_back(l);
	return (int)g.locs.size() - 1;
}

// Whether @c has seen the last access that location @id stands for.
bool knows(const CtxView *c, int id)
{
	return view_of(c->cur, id) + 1 >= g.locs[id].hist.size();
}

void mark(CtxView *c, int id)
{
	Loc &l = g.locs[id];

	l.hist.push_back({l.hist.size(), {}});
	set_view(c->cur, id, (uint32_t)l.hist.size() - 1);
}

std::string self_name()
{
	Scheduler *s = Scheduler::current();

	return s->name(s->self());
}

void report(const std::string &why)
{
	if (g.race.empty())
		g.race = why;
}

void fence(CtxView *c, int order)
{
	if (order == OCQ_MM_ACQUIRE || order == OCQ_MM_FULL)
		join(c->cur, c->pending);
	if (order == OCQ_MM_FULL) {
		join(c->cur, g.sc);
		g.sc = c->cur;
	}
	if (order == OCQ_MM_RELEASE || order == OCQ_MM_FULL)
		c->fence = c->cur;
}

// Append a store by @c; @msg its message before it names itself.
void append(CtxView *c, int id, uint64_t v, View msg, volatile void *p)
{
	Loc &l = g.locs[id];
	uint32_t idx = (uint32_t)l.hist.size();

	set_view(msg, id, idx);
	l.hist.push_back({v, std::move(msg)});
	set_view(c->cur, id, idx);
	raw_write(p, l.size, v);
}

} // namespace

void mm_reset(bool on, bool fence_points)
{
	g = Model();
	g.on = on;
	g.fence_points = fence_points;
}

long mm_stale_reads()
{
	return g.stale;
}

void mm_forget(const void *p, unsigned long n)
{
	uintptr_t a = (uintptr_t)p;

	g.ids.erase(g.ids.lower_bound(a), g.ids.lower_bound(a + n));
	for (size_t i = g.watches.size(); i-- > 0;)
		if (g.watches[i].a < a + n && a < g.watches[i].a + g.watches[i].n)
			g.watches.erase(g.watches.begin() + (long)i);
}

void mm_watch(const void *p, unsigned long n, const char *name)
{
	const uint8_t *m = (const uint8_t *)p;

	if (!g.on)
		return;
	g.watches.push_back({(uintptr_t)p, n, std::vector<uint8_t>(m, m + n), pseudo_loc(),
			     pseudo_loc(), name, "", ""});
}

void mm_scan()
{
	CtxView *c = self();

	for (Watch &w : g.watches) {
		const uint8_t *m = (const uint8_t *)w.a;

		if (!std::memcmp(m, w.snap.data(), w.n))
			continue;
		std::memcpy(w.snap.data(), m, w.n);
		if (!c)
			continue; /* set-up: no context, no race */
		if (!knows(c, w.r))
			report("slot reused under its reader: " + self_name() + " overwrites " +
			       w.name + ", and " + w.reader + "'s read of it does not happen " +
			       "before the write (data race)");
		else if (!knows(c, w.w))
			report("slot reused under its writer: " + self_name() + " overwrites " +
			       w.name + ", and " + w.writer + "'s write of it does not happen " +
			       "before this one (data race)");
		g.reuses += g.locs[w.r].hist.size() > 1;
		mark(c, w.w);
		w.writer = self_name();
	}
}

void mm_plain_read(const void *p, const char *who)
{
	uintptr_t a = (uintptr_t)p;
	CtxView *c = self();

	if (!c)
		return;
	mm_scan();
	for (Watch &w : g.watches) {
		if (a < w.a || a >= w.a + w.n)
			continue;
		if (!knows(c, w.w))
			report("slot read before its write: " + self_name() + " (" + who +
			       ") reads " + w.name + ", and " + w.writer + "'s write of it " +
			       "does not happen before the read (data race)");
		mark(c, w.r);
		w.reader = self_name() + " (" + who + ")";
	}
}

long mm_reuses()
{
	return g.reuses;
}

std::string mm_race()
{
	std::string r;

	r.swap(g.race);
	return r;
}

void mm_release(int ch)
{
	if (CtxView *c = self())
		join(g.chans[ch], c->cur);
}

bool mm_catch_up()
{
	CtxView *c = self();
	bool behind = false;

	if (!c)
		return false;
	for (size_t id = 0; id < g.locs.size(); id++) {
		uint32_t last = (uint32_t)g.locs[id].hist.size() - 1;

		/* seeing the latest stores is not happening after accesses */
		if (!g.locs[id].size)
			continue;

		if (view_of(c->cur, (int)id) < last) {
			set_view(c->cur, (int)id, last);
			behind = true;
		}
	}
	return behind;
}

void mm_acquire(int ch)
{
	if (CtxView *c = self())
		join(c->cur, g.chans[ch]);
}

} // namespace ocq_sim

using namespace ocq_sim;

extern "C" {

unsigned long ocq_mm_load(const volatile void *p, int size, int order, const char *what)
{
	CtxView *c = self();
	int id, n, k;
	uint32_t last, lo;

	if (!c)
		return raw_read(p, size);
	id = loc_of(p, size);
	Loc &l = g.locs[id];
	last = (uint32_t)l.hist.size() - 1;
	lo = view_of(c->cur, id);
	if (last > lo + MAX_BACK)
		lo = last - MAX_BACK;
	n = (int)(last - lo) + 1;
	k = Scheduler::current()->choose_value(n, what);
	g.stale += k != 0;
	const Store &s = l.hist[last - k];
	set_view(c->cur, id, last - k);
	if (order == OCQ_MM_RELAXED)
		join(c->pending, s.msg);
	else
		join(c->cur, s.msg);
	return s.val;
}

void ocq_mm_store(volatile void *p, int size, unsigned long v, int order)
{
	CtxView *c = self();
	int id;

	if (!c) {
		raw_write(p, size, v);
		mm_forget((const void *)p, 1);
		return;
	}
	id = loc_of(p, size);
	append(c, id, v, order == OCQ_MM_RELAXED ? c->fence : c->cur, p);
}

unsigned long ocq_mm_rmw(volatile void *p, int size, int op, long arg, int order)
{
	CtxView *c = self();
	uint64_t old, val;
	int id = -1;

	if (!c) {
		old = raw_read(p, size);
	} else {
		id = loc_of(p, size);
		old = g.locs[id].hist.back().val;
	}
	switch (op) {
	case OCQ_MM_ADD:
		val = (uint64_t)(sext(old, size) + arg);
		break;
	case OCQ_MM_AND:
		val = old & (uint64_t)arg;
		break;
	case OCQ_MM_OR:
		val = old | (uint64_t)arg;
		break;
	default:
		val = (uint64_t)arg;
		break;
	}
	if (size < 8)
		val &= (1ull << (8 * size)) - 1;
	if (!c) {
		raw_write(p, size, val);
		mm_forget((const void *)p, 1);
		return old;
	}
	Loc &l = g.locs[id];
	View from = l.hist.back().msg; // the release sequence goes on
	View msg;

	set_view(c->cur, id, (uint32_t)l.hist.size() - 1);
	if (order == OCQ_MM_FULL) {
		fence(c, OCQ_MM_FULL);
		join(c->cur, from);
		msg = c->cur;
	} else {
		join(c->pending, from);
		msg = c->fence;
		join(msg, from);
	}
	append(c, id, val, msg, p);
	if (order == OCQ_MM_FULL)
		fence(c, OCQ_MM_FULL);
	return old;
}

int ocq_mm_cmpxchg(volatile void *p, int size, unsigned long *old, unsigned long val, int order)
{
	CtxView *c = self();
	uint64_t cur;
	int id = -1;

	if (!c) {
		cur = raw_read(p, size);
	} else {
		id = loc_of(p, size);
		cur = g.locs[id].hist.back().val;
	}
	if (cur != *old) {
		// failed: a relaxed read of the latest store
		if (c) {
			const Loc &l = g.locs[id];

			set_view(c->cur, id, (uint32_t)l.hist.size() - 1);
			join(c->pending, l.hist.back().msg);
		}
		*old = cur;
		return 0;
	}
	ocq_mm_rmw(p, size, OCQ_MM_XCHG, (long)val, order);
	return 1;
}

void ocq_mm_fence(int order)
{
	/*
	 * Fence points: another context may run between a relaxed access and
	 * the fence after it, so that a full fence of its own comes first.
	 */
	if (g.fence_points && self())
		ocq_sim_point(order == OCQ_MM_FULL    ? "smp_mb" :
			      order == OCQ_MM_ACQUIRE ? "smp_rmb" :
							"smp_wmb");
	if (CtxView *c = self())
		fence(c, order);
}

} // extern "C"
