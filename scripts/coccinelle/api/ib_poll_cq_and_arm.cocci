// SPDX-License-Identifier: GPL-2.0
/// Replace a tasklet's hand-rolled poll, arm, poll again of a CQ by ocq's
/// helpers, which poll until the CQ is drained and then arm it with
/// IB_CQ_REPORT_MISSED_EVENTS, so that no completion is left behind:
///
///   poll(args);
///   ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);    ->    poll(args);
///   poll(args);
///
/// in the function of a tasklet (tasklet_init() or tasklet_setup() names
/// it), where poll() is a function of the file whose loop is
///
///   while ((n = ib_poll_cq(cq, nr, wc)) > 0)
///           ... handle each wc ...
///
/// The loop's ib_poll_cq() becomes ib_poll_cq_and_arm() (IB_CQ_NEXT_COMP)
/// or ib_poll_cq_and_arm_solicited() (IB_CQ_SOLICITED), the arm and the
/// first call go, and after the loop poll() schedules the tasklet again
/// when the helper returned < 0: the CQ is then not armed, and nothing
/// else would poll it.  The tasklet is named through poll()'s parameter of
/// the type whose member tasklet_init() was given.  Each completion is
/// handled as before, by the same code and in the same order; what the
/// tasklet does after polling (acknowledgements, refills, sends) stays
/// where it is.  A poll() called anywhere else is left alone, and so is
/// its tasklet.  Adds #include <rdma/ib_ocq.h> as ib_ocq_dropin.cocci does;
/// the module then depends on ib_ocq.ko.  RDS (net/rds/ib_cm.c) has this
/// shape; Documentation/api.rst ("Legacy ULPs") has the other shapes, by
/// hand.
///
/// On a ULP's own tree (no kernel tree needed), in place:
///
///   spatch --sp-file scripts/coccinelle/api/ib_poll_cq_and_arm.cocci \
///          --no-includes --include-headers --dir net/rds --in-place
///
/// -D report lists the loops, -D context and -D org as usual.
//
// Confidence: High
// Comments: a tasklet's poll, arm, poll again through a function of the file
// Options: --no-includes --include-headers

virtual patch
virtual context
virtual org
virtual report

// A tasklet's function, and the member of its type that is the tasklet.
@tl@
type T;
T *E;
identifier f, fn;
@@
(
tasklet_init(&E->f, fn, ...)
|
tasklet_setup(&E->f, fn)
)

// The function polls, arms, polls again.
@next@
identifier tl.fn, poll;
expression list args;
expression cq;
position p1, p2, pa;
@@
fn(...)
{
<...
poll@p1(args);
ib_req_notify_cq@pa(cq, IB_CQ_NEXT_COMP);
poll@p2(args);
...>
}

@sol@
identifier tl.fn, poll;
expression list args;
expression cq;
position p1, p2, pa;
@@
fn(...)
{
<...
poll@p1(args);
ib_req_notify_cq@pa(cq, IB_CQ_SOLICITED);
poll@p2(args);
...>
}

// poll() is one loop of ib_poll_cq() and has a parameter that names the
// tasklet.
@next_fn@
identifier next.poll, nr, x;
type tl.T;
expression cq, n, wc;
statement S;
@@
poll(..., T *x, ...)
{
...
while ((nr = ib_poll_cq(cq, n, wc)) > 0) S
...
}

@sol_fn@
identifier sol.poll, nr, x;
type tl.T;
expression cq, n, wc;
statement S;
@@
poll(..., T *x, ...)
{
...
while ((nr = ib_poll_cq(cq, n, wc)) > 0) S
...
}

// ... and is called nowhere else.
@next_other@
identifier next.poll;
position p != {next.p1, next.p2};
@@
poll@p(...)

@sol_other@
identifier sol.poll;
position p != {sol.p1, sol.p2};
@@
poll@p(...)

// ---------------------------------------------------------------- patch

@next_tl depends on (patch || !(context || org || report)) && next_fn && !next_other@
identifier tl.fn, next.poll;
expression list args;
expression cq;
@@
  fn(...)
  {
  <...
- poll(args);
- ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
  poll(args);
  ...>
  }

@depends on next_tl@
identifier next.poll, next_fn.nr, next_fn.x, tl.f;
type tl.T;
expression cq, n, wc;
statement S;
@@
  poll(..., T *x, ...)
  {
  ...
  while ((nr =
- ib_poll_cq
+ ib_poll_cq_and_arm
  (cq, n, wc)) > 0) S
+ if (nr < 0)
+ 	tasklet_schedule(&x->f);
  ...
  }

@sol_tl depends on (patch || !(context || org || report)) && sol_fn && !sol_other@
identifier tl.fn, sol.poll;
expression list args;
expression cq;
@@
  fn(...)
  {
  <...
- poll(args);
- ib_req_notify_cq(cq, IB_CQ_SOLICITED);
  poll(args);
  ...>
  }

@depends on sol_tl@
identifier sol.poll, sol_fn.nr, sol_fn.x, tl.f;
type tl.T;
expression cq, n, wc;
statement S;
@@
  poll(..., T *x, ...)
  {
  ...
  while ((nr =
- ib_poll_cq
+ ib_poll_cq_and_arm_solicited
  (cq, n, wc)) > 0) S
+ if (nr < 0)
+ 	tasklet_schedule(&x->f);
  ...
  }

@has_ocq depends on next_tl || sol_tl@
@@
(
#include <rdma/ib_ocq.h>
|
#include <rdma/ib_ocq_dropin.h>
)

@inc_rdma depends on (next_tl || sol_tl) && !has_ocq@
@@
#include <rdma/...>
+ #include <rdma/ib_ocq.h>

@depends on (next_tl || sol_tl) && !has_ocq && !inc_rdma@
@@
#include <...>
+ #include <rdma/ib_ocq.h>

// ------------------------------------------------- context, org, report

@depends on context && next_fn && !next_other@
expression list next.args;
expression next.cq;
identifier next.poll;
position next.p1;
@@
  poll@p1(args);
* ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
  poll(args);

@depends on context && sol_fn && !sol_other@
expression list sol.args;
expression sol.cq;
identifier sol.poll;
position sol.p1;
@@
  poll@p1(args);
* ib_req_notify_cq(cq, IB_CQ_SOLICITED);
  poll(args);

@script:python depends on org && next_fn && !next_other@
p << next.pa;
fn << tl.fn;
poll << next.poll;
@@
coccilib.org.print_todo(p[0], "%s(): poll, arm, poll -> ib_poll_cq_and_arm() in %s()"
			% (fn, poll))

@script:python depends on org && sol_fn && !sol_other@
p << sol.pa;
fn << tl.fn;
poll << sol.poll;
@@
coccilib.org.print_todo(p[0],
	"%s(): poll, arm, poll -> ib_poll_cq_and_arm_solicited() in %s()"
	% (fn, poll))

@script:python depends on report && next_fn && !next_other@
p << next.pa;
fn << tl.fn;
poll << next.poll;
@@
coccilib.report.print_report(p[0],
	"%s() polls, arms and polls again by hand: ib_poll_cq_and_arm() in %s() (ib_poll_cq_and_arm.cocci)"
	% (fn, poll))

@script:python depends on report && sol_fn && !sol_other@
p << sol.pa;
fn << tl.fn;
poll << sol.poll;
@@
coccilib.report.print_report(p[0],
	"%s() polls, arms and polls again by hand: ib_poll_cq_and_arm_solicited() in %s() (ib_poll_cq_and_arm.cocci)"
	% (fn, poll))
