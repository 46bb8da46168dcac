// SPDX-License-Identifier: GPL-2.0
/// Move a ULP from ib_core's CQ API to ocq's ordered CQs, with the default
/// attributes (the calls of <rdma/ib_ocq_dropin.h>, written out):
///
///   ib_alloc_cq(dev, priv, nr, vec, ctx)  -> ib_ocq_alloc_cq(..., NULL)
///   ib_alloc_cq_any(dev, priv, nr, ctx)   -> ib_ocq_alloc_cq_any(..., NULL)
///   ib_free_cq(cq)                        -> ib_ocq_free_cq(cq)
///   ib_cq_pool_get(dev, nr, hint, ctx)    -> ib_ocq_cq_pool_get(..., NULL)
///   ib_cq_pool_put(cq, nr)                -> ib_ocq_cq_pool_put(cq, nr)
///   ib_process_cq_direct(cq, budget)      -> ib_ocq_process_cq_direct(cq, budget)
///
/// and adds #include <rdma/ib_ocq.h> to every file it changes, after the
/// file's last #include <rdma/...> (or, in a file without one, after its
/// last #include <...>), unless the file includes <rdma/ib_ocq.h> already.
/// A NULL attr means ocq's defaults: IB_OCQ_STRICT for a CQ of its own (the
/// CQ's order, as ib_cq), IB_OCQ_FLOW for a pooled CQ (each QP in order, QPs
/// of different flow domains concurrently).  Nothing else of the ULP is
/// touched; Documentation/api.rst ("Migrating from ib_cq") says what a ULP
/// maintainer must check afterwards (poll contexts, concurrent done() calls
/// of different QPs on a pooled CQ).  The module then depends on ib_ocq.ko.
///
/// On a ULP's own tree (no kernel tree needed), in place:
///
///   spatch --sp-file scripts/coccinelle/api/ib_ocq_dropin.cocci \
///          --no-includes --include-headers --dir net/sunrpc/xprtrdma --in-place
///
/// Without -D the mode is patch.  -D report lists the calls instead, one
/// "file:line:col: message" a line; -D context and -D org as usual.  In a
/// kernel tree that holds this file, coccicheck runs it in any mode:
///
///   make coccicheck MODE=report COCCI=scripts/coccinelle/api/ib_ocq_dropin.cocci \
///        M=net/sunrpc/xprtrdma
//
// Confidence: High
// Comments: the allocation, free and direct-poll calls only
// Options: --no-includes --include-headers

virtual patch
virtual context
virtual org
virtual report

// ---------------------------------------------------------------- patch

@call depends on patch || !(context || org || report)@
expression dev, priv, nr, vec, ctx, hint, cq, budget;
@@
(
- ib_alloc_cq
+ ib_ocq_alloc_cq
  (dev, priv, nr, vec, ctx
+ , NULL
  )
|
- ib_alloc_cq_any
+ ib_ocq_alloc_cq_any
  (dev, priv, nr, ctx
+ , NULL
  )
|
- ib_free_cq
+ ib_ocq_free_cq
  (cq)
|
- ib_cq_pool_get
+ ib_ocq_cq_pool_get
  (dev, nr, hint, ctx
+ , NULL
  )
|
- ib_cq_pool_put
+ ib_ocq_cq_pool_put
  (cq, nr)
|
- ib_process_cq_direct
+ ib_ocq_process_cq_direct
  (cq, budget)
)

// The file includes ocq's header already (or the drop-in one, which
// includes it): nothing to add.
@has_ocq depends on call@
@@
(
#include <rdma/ib_ocq.h>
|
#include <rdma/ib_ocq_dropin.h>
)

// An include added after a pattern that matches several includes goes
// after the last of them: after the file's last #include <rdma/...>.
@inc_rdma depends on call && !has_ocq@
@@
#include <rdma/...>
+ #include <rdma/ib_ocq.h>

// A file without one (it has ib_verbs.h through a header of its own):
// after its last #include <...>.
@depends on call && !has_ocq && !inc_rdma@
@@
#include <...>
+ #include <rdma/ib_ocq.h>

// ------------------------------------------------- context, org, report

@depends on context@
expression list es;
@@
(
* ib_alloc_cq(es)
|
* ib_alloc_cq_any(es)
|
* ib_free_cq(es)
|
* ib_cq_pool_get(es)
|
* ib_cq_pool_put(es)
|
* ib_process_cq_direct(es)
)

@r depends on org || report@
identifier fn = { ib_alloc_cq, ib_alloc_cq_any, ib_free_cq, ib_cq_pool_get,
		  ib_cq_pool_put, ib_process_cq_direct };
expression list es;
position p;
@@
fn@p(es)

@script:python depends on org@
p << r.p;
fn << r.fn;
@@
coccilib.org.print_todo(p[0], "%s() -> ib_ocq_%s()" % (fn, fn[3:]))

@script:python depends on report@
p << r.p;
fn << r.fn;
@@
coccilib.report.print_report(p[0],
	"%s() of ib_core: ocq's drop-in is ib_ocq_%s() (ib_ocq_dropin.cocci)"
	% (fn, fn[3:]))
