# SPDX-License-Identifier: GPL-2.0
#
# ocq - the two faces of this Makefile:
#  - inside Kbuild (KERNELRELEASE set), it only includes the Kbuild file;
#  - otherwise it is the user-facing make: fetch a Debian kernel, build, test in a VM.

ifneq ($(KERNELRELEASE),)
include $(dir $(lastword $(MAKEFILE_LIST)))Kbuild
else

# A Debian linux-image metapackage: linux-image-amd64 (6.1), linux-image-6.12-amd64,
# linux-image-6.12-rt-amd64, linux-image-cloud-amd64, ...
KERNEL ?= linux-image-amd64
# A prepared kernel build tree; when given, build against it (no fetch, no VM).
KDIR ?=
# Tests to run (make check): space-separated patterns on the test name.
TESTS ?=
# Extra options of ocq-demo run (make demo), e.g. ARGS="--path naive --duration 5".
ARGS ?=
# make bench, make ulp-bench: interleaved repeats of every workload (the paired ratios'
# intervals need at least 10); QUICK=1: one short repeat (CI), intervals n/a
REPEATS ?= 10
QUICK ?=
SMP ?= 2
# make ulp-bench: 2 for the two-node shape (target and server across the wire)
NODES ?= 1
# make ulp-bench: which ULPs (nvme, nfs, rds; empty: all, nvme and nfs with NODES=2)
ULPS ?=
# make fabric-faults: trials of each fault, and which faults (empty: all)
TRIALS ?= 5
FAULTS ?=
W ?= 1
# make soak: seconds of the whole soak
DURATION ?= 600
# make check runs the host tests first (model checker, send-accounting and front-end
# unit tests): SIM=1 always, SIM=0 never, empty: when no TESTS= subset is asked for.
SIM ?=
# 1 (or kasan): build, boot and test our debug kernel (lockdep, KASAN, kmemleak, ...)
# instead of KERNEL=; kcsan: the same with KCSAN instead of KASAN (Documentation/debug-kernel.rst)
DEBUG_KERNEL ?=
export DEBUG_KERNEL
# make install: staging directory (packaging), module tree root (kernel style), prefix of
# the headers and of ocq-demo
DESTDIR ?=
INSTALL_MOD_PATH ?=
PREFIX ?= /usr/local

VM := tools/testing/vm
SHELL := /bin/bash

.PHONY: all kernel check check-runner fabric-faults demo lint format clean help sim sim-deep mutants guest-mutants host-tests soak \
	install uninstall install-files uninstall-files dkms-check deb deb-check htmldocs bench native-bench ulps \
	ulp-bench patches cost

HOST_TESTS := tools/testing/sq_acct tools/ocq-demo tools/testing/bench tools/testing/ulps \
	tools/testing/ocq-native
# their builds run in parallel; a Makefile whose checks must not says .NOTPARALLEL.
# Under make -jN the jobserver shares N already: no -j of our own then.
NPROC := $(shell nproc 2>/dev/null || echo 1)
SUBJOBS = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(NPROC))

ifeq ($(KDIR),)

all:
	@W='$(W)' $(VM)/build.sh '$(KERNEL)' >/dev/null

kernel:
	@if [ -n '$(DEBUG_KERNEL)' ] && [ '$(DEBUG_KERNEL)' != 0 ]; then \
		$(VM)/debug-kernel.sh '$(DEBUG_KERNEL)'; else $(VM)/kernel.sh '$(KERNEL)'; fi

check:
	@if [ '$(SIM)' = 1 ] || { [ -z '$(SIM)' ] && [ -z '$(TESTS)' ]; }; then \
		$(MAKE) --no-print-directory host-tests || \
		{ echo 'check: the host tests failed'; echo '0 passed, 1 failed, 0 skipped'; \
		  exit 1; }; fi
	@W='$(W)' SMP='$(SMP)' TESTS='$(TESTS)' $(VM)/check.sh '$(KERNEL)'

# TRIALS trials of each of the wire's faults (selftests/fabric/fabric_faults.sh, FAULTS=
# a comma-separated subset) and their table: Documentation/testing.rst, "Two nodes"
fabric-faults:
	@W='$(W)' TRIALS='$(TRIALS)' FAULTS='$(FAULTS)' $(VM)/fabric-faults.sh '$(KERNEL)'

check-runner:
	@W='$(W)' SMP='$(SMP)' $(VM)/check-runner.sh '$(KERNEL)'

demo:
	@W='$(W)' SMP='$(SMP)' ARGS='$(ARGS)' $(VM)/demo.sh '$(KERNEL)'

bench:
	@W='$(W)' SMP='$(SMP)' REPEATS='$(REPEATS)' QUICK='$(QUICK)' \
		tools/testing/bench/bench.sh '$(KERNEL)'

ulp-bench:
	@W='$(W)' SMP='$(SMP)' REPEATS='$(REPEATS)' QUICK='$(QUICK)' NODES='$(NODES)' \
		ULPS='$(ULPS)' tools/testing/ulps/ulp-bench.sh '$(KERNEL)'

# The soak: selftests/soak/ (the fake provider's mixed scenarios, then the demo on
# each ordered CQ path), DURATION seconds in all.  The guest's /init gets
# SOAK_SECONDS from the kernel command line; the timeouts grow with it.  The last
# line sums the parts' "SOAK <part>: completions=N lost=N ..." lines from their logs.
soak:
	@half=$$(( $(DURATION) / 2 )); out=$$(mktemp); \
		W='$(W)' SMP='$(SMP)' TESTS='soak_fake soak_demo' \
		KAPPEND="SOAK_SECONDS=$$half" TIMEOUT_SCALE=$$(( (half + 120) / 300 + 1 )) \
		$(VM)/check.sh '$(KERNEL)' | tee $$out; rc=$${PIPESTATUS[0]}; \
		logs=$$(sed -n 's|^check: logs: \(.*\)/$$|\1|p' $$out | head -1); rm -f $$out; \
		cat $${logs:-/nonexistent}/tests/soak_*.log 2>/dev/null | awk ' \
			/^# SOAK [a-z]+: / { sub(":", "", $$3); parts = parts sep $$3 " " substr($$4, 13); \
				sep = ", "; for (i = 4; i <= NF; i++) { split($$i, kv, "="); t[kv[1]] += kv[2] } } \
			END { printf "soak totals: completions=%.0f (%s) lost=%.0f reordered=%.0f duplicated=%.0f\n", \
				t["completions"], parts, t["lost"], t["reordered"], t["duplicated"] }'; \
		exit $$rc

# tools/lint/lint.sh gets the kernel's variables in its environment: KVER, ROOT, KH,
# KCOMMON_MAKEFILE, KMAKE_EXTRA, VMLINUX, KCONFIG (see tools/testing/vm/kernel.sh).
lint:
	@env=$$($(VM)/kernel.sh '$(KERNEL)' | tail -1) && set -a && . "$$env" && set +a && \
		tools/lint/lint.sh

# Installs what "all" built for KERNEL= (build/<kver>/ko/); for the running kernel, give
# KDIR=/lib/modules/$(uname -r)/build.
install:
	@env=$$(W='$(W)' $(VM)/build.sh '$(KERNEL)' | tail -1) && . "$$env" && \
		$(MAKE) --no-print-directory install-files KVER="$$KVER" \
		KO_DIR="build/$$KVER/ko" SYMVERS="build/$$KVER/src/Module.symvers"

uninstall:
	@env=$$($(VM)/kernel.sh '$(KERNEL)' | tail -1) && . "$$env" && \
		$(MAKE) --no-print-directory uninstall-files KVER="$$KVER"

dkms-check:
	@tools/testing/dkms.sh '$(KERNEL)'

# installs the packages (make deb) and KERNEL='s headers into this system, checks
# that DKMS built the modules, and purges everything again: for CI and throwaway
# machines
deb-check:
	@tools/testing/deb-check.sh '$(KERNEL)'

# NFS/RDMA (rpcrdma), NVMe-oF (nvme-rdma, nvmet-rdma) and RDS (rds, rds_rdma) from
# KERNEL='s Debian source package, built stock and converted to ocq by
# scripts/coccinelle/api/ib_ocq_dropin.cocci and ib_poll_cq_and_arm.cocci (prints the
# conversion's diff); modules in build/<kver>/ulps/{stock,ocq}/.
ulps:
	@W='$(W)' tools/testing/ulps/build.sh '$(KERNEL)'

else # KDIR given: a standard Kbuild build against that tree

all:
	$(MAKE) -C '$(KDIR)' M='$(CURDIR)' W='$(W)' modules

kernel check check-runner fabric-faults demo bench ulp-bench soak dkms-check deb-check:
	@echo "make $@: not possible with KDIR= (it boots a Debian kernel in a VM);" \
		"run without KDIR, e.g. make $@ KERNEL=linux-image-amd64" >&2; exit 2

ulps:
	@echo "make ulps: not possible with KDIR= (the ULPs come from the linux-source package" \
		"of a Debian kernel's version); run without KDIR, e.g. make ulps KERNEL=linux-image-amd64" \
		>&2; exit 2

lint:
	@KH='$(KDIR)' KCOMMON_MAKEFILE='$(KDIR)/Makefile' KMAKE_EXTRA= \
		KVER="$$($(MAKE) -s -C '$(KDIR)' kernelrelease 2>/dev/null)" \
		KCONFIG='$(KDIR)/.config' tools/lint/lint.sh

# The release modules built against KDIR are for: UTS_RELEASE, which is what their
# vermagic says (Debian's headers' kernel.release and kernelrelease give the upstream
# version instead).
KDIR_KVER = $$(sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	'$(KDIR)/include/generated/utsrelease.h' 2>/dev/null)

install: all
	@$(MAKE) --no-print-directory -C tools/ocq-demo >/dev/null
	@kver=$(KDIR_KVER) && [ -n "$$kver" ] && \
		$(MAKE) --no-print-directory install-files KVER="$$kver" KO_DIR=. \
		SYMVERS=Module.symvers

uninstall:
	@kver=$(KDIR_KVER) && [ -n "$$kver" ] && \
		$(MAKE) --no-print-directory uninstall-files KVER="$$kver"

endif

# make install's work, once KVER and the modules are known (KO_DIR: where the .ko files
# are, searched below it; SYMVERS: the Module.symvers of that build). Layout:
#   $(DESTDIR)$(INSTALL_MOD_PATH)/lib/modules/KVER/updates/{ib_ocq,ocq_demo}.ko
#   $(DESTDIR)$(PREFIX)/include/ocq/rdma/{ib_ocq,ib_sq_acct}.h
#   $(DESTDIR)$(PREFIX)/lib/ocq/KVER/Module.symvers   (ib_ocq's exports, for other modules)
#   $(DESTDIR)$(PREFIX)/sbin/ocq-demo
# depmod runs on / or on $(INSTALL_MOD_PATH); not into a DESTDIR staging tree, where the
# package's own scripts run it on the target.
OCQ_MODULES := ib_ocq ocq_demo
OCQ_HEADERS := ib_ocq.h ib_ocq_dropin.h ib_sq_acct.h
MOD_DIR = $(DESTDIR)$(INSTALL_MOD_PATH)/lib/modules/$(KVER)

define ocq_depmod
	@if [ -n '$(DESTDIR)' ]; then \
		echo "  DEPMOD  skipped (DESTDIR): run depmod -a $(KVER) on the target"; \
	elif ! command -v depmod >/dev/null; then \
		echo "  DEPMOD  skipped: no depmod; run depmod -a $(KVER)"; \
	elif [ -n '$(INSTALL_MOD_PATH)' ] && [ ! -f '$(MOD_DIR)/modules.builtin' ]; then \
		echo "  DEPMOD  skipped: $(MOD_DIR) is not a kernel's module tree"; \
	else \
		echo "  DEPMOD  $(KVER)"; depmod -a $(if $(INSTALL_MOD_PATH),-b '$(INSTALL_MOD_PATH)') $(KVER); \
	fi
endef

install-files:
	@[ -n '$(KVER)' ] || { echo 'install: no kernel release' >&2; exit 1; }
	@install -d '$(MOD_DIR)/updates'
	@for m in $(OCQ_MODULES); do \
		ko=$$(find '$(KO_DIR)' -name "$$m.ko" -not -path '*/.cache/*' | head -1); \
		[ -n "$$ko" ] || { echo "install: $$m.ko not built" >&2; exit 1; }; \
		echo "  INSTALL $(MOD_DIR)/updates/$$m.ko"; \
		install -m 644 "$$ko" '$(MOD_DIR)/updates/'; done
	@install -d '$(DESTDIR)$(PREFIX)/include/ocq/rdma' '$(DESTDIR)$(PREFIX)/lib/ocq/$(KVER)' \
		'$(DESTDIR)$(PREFIX)/sbin'
	@for h in $(OCQ_HEADERS); do \
		echo "  INSTALL $(DESTDIR)$(PREFIX)/include/ocq/rdma/$$h"; \
		install -m 644 include/rdma/$$h '$(DESTDIR)$(PREFIX)/include/ocq/rdma/'; done
	@echo "  INSTALL $(DESTDIR)$(PREFIX)/lib/ocq/$(KVER)/Module.symvers"
	@awk -F '\t' -v OFS='\t' '$$3 ~ /(^|\/)ib_ocq$$/ { $$3 = "ib_ocq"; print }' '$(SYMVERS)' \
		> '$(DESTDIR)$(PREFIX)/lib/ocq/$(KVER)/Module.symvers'
	@echo "  INSTALL $(DESTDIR)$(PREFIX)/sbin/ocq-demo"
	@install -m 755 build/ocq-demo/ocq-demo '$(DESTDIR)$(PREFIX)/sbin/'
	$(ocq_depmod)

uninstall-files:
	@[ -n '$(KVER)' ] || { echo 'uninstall: no kernel release' >&2; exit 1; }
	@for f in $(OCQ_MODULES:%='$(MOD_DIR)/updates/%.ko') \
		$(OCQ_HEADERS:%='$(DESTDIR)$(PREFIX)/include/ocq/rdma/%') \
		'$(DESTDIR)$(PREFIX)/lib/ocq/$(KVER)/Module.symvers' \
		'$(DESTDIR)$(PREFIX)/sbin/ocq-demo'; do \
		[ -e "$$f" ] || continue; echo "  RM      $$f"; rm -f "$$f"; done
	@rmdir -p --ignore-fail-on-non-empty '$(DESTDIR)$(PREFIX)/include/ocq/rdma' \
		'$(DESTDIR)$(PREFIX)/lib/ocq/$(KVER)' 2>/dev/null; true
	$(ocq_depmod)

# ocq as a kernel patch series (Documentation/layout.rst): git format-patch against
# Debian's linux-source-6.12 into build/patches/, checkpatch.pl --strict on each patch,
# then git am on a fresh copy and make M=drivers/infiniband/core W=1 in tree with the
# 6.12 kernel's config; QUICK=1 stops after checkpatch.  KDIR= plays no part: the
# series builds in its own tree, with or without it.
patches:
	@QUICK='$(QUICK)' scripts/patches.sh

# Debian packages: ocq-dkms and ocq-tools in build/deb/ (scripts/package/)
deb:
	@scripts/package/mkdeb.sh

# The documentation, with Sphinx and the kernel's kernel-doc extension (from
# linux-source-6.1, as tools/lint/ fetches it); a warning of Sphinx or kernel-doc fails.
htmldocs:
	@source tools/lint/lib.sh && ensure_tools perl && \
		{ command -v sphinx-build >/dev/null || apt_install python3-sphinx; } && \
		ensure_kernel_scripts
	@mkdir -p build; rm -rf build/htmldocs
	@set -o pipefail; KERNEL_SPHINX_SRC='$(CURDIR)/.cache/lint/linux-source-6.1' \
		sphinx-build -W --keep-going -q -b html -d build/htmldocs/.doctrees Documentation \
		build/htmldocs 2>&1 | tee build/htmldocs.log; rc=$$?; \
		if [ $$rc -ne 0 ] || grep -qi 'warning' build/htmldocs.log; then \
			echo 'htmldocs: warnings (build/htmldocs.log)' >&2; exit 1; fi
	@echo "  HTML    build/htmldocs/index.html"

# Reformat the sources in place, with the styles make lint checks.
format:
	@bash tools/lint/format.sh

# The host tests: the model checker runs the engine's own C file under every schedule up
# to a bound; tools/testing/ocq-native runs it on real threads under TSan and ASan; the
# others are unit tests of headers and tools. No kernel needed.
sim:
	@$(MAKE) --no-print-directory $(SUBJOBS) -C tools/testing/ocq sim

sim-deep:
	@$(MAKE) --no-print-directory -C tools/testing/ocq sim-deep

# Mutation testing of the model checker: every mutant of the engine must be
# caught (tools/testing/ocq/mutants.txt); QUICK=1 runs the quick subset.
mutants:
	@$(MAKE) --no-print-directory -C tools/testing/ocq mutants QUICK=$(QUICK)

# The plumbing's mutants, each caught by a guest test (tools/testing/vm/guest-mutants.txt);
# a few minutes per mutant under TCG, not part of CI.
guest-mutants:
	@$(VM)/guest-mutants.sh

# The engine on real threads on the host (tools/testing/ocq-native): ns per
# completion of every mode against a raw drain loop, and flow-mode scaling.
native-bench:
	@mkdir -p build
	@$(MAKE) --no-print-directory -C tools/testing/ocq-native bench \
		JSON='$(CURDIR)/build/native-bench.json'

# What ordering costs per completion, counted, not timed (tools/testing/ocq-native/cost.c):
# instructions (valgrind's callgrind), locked instructions and shared cache lines of
# the raw loop, strict, flow and parallel in one deterministic process; the targets of
# Documentation/performance.rst as checks (non-zero exit if one fails);
# build/cost/results.json.
cost:
	@$(MAKE) --no-print-directory -C tools/testing/ocq-native cost \
		COST_OUT='$(CURDIR)/build/cost'

host-tests:
	@$(VM)/host-deps.sh tools
	@for d in $(HOST_TESTS); do \
		[ -f $$d/Makefile ] || continue; \
		echo "=== $$d"; $(MAKE) --no-print-directory $(SUBJOBS) -C $$d check || exit 1; done
	@echo "=== guest mutants: every edit still finds its line"
	@out=$$($(VM)/guest-mutants.sh -n 2>&1) || { echo "$$out"; exit 1; }; \
		echo "$$out" | tail -1
	@echo "=== make cost: the engine's counted cost within its ceilings"
	@$(MAKE) --no-print-directory cost COST_N=16384
	@$(MAKE) --no-print-directory sim

# Not "make -C $(KDIR) M=... clean": it deletes every *.ko below M=, the kernel cache's too.
clean:
	rm -rf build
	@find . \( -path ./.git -o -path ./.cache -o -path ./build -o -path ./tools \) -prune -o \
		\( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '.*.cmd' -o -name '.*.d' -o -name 'modules.order' \
		-o -name 'Module.symvers' \) -type f -print0 | xargs -0 rm -f
	@for d in tools/testing/ocq $(HOST_TESTS); do \
		[ -f $$d/Makefile ] && $(MAKE) --no-print-directory -C $$d clean >/dev/null; done; true

help:
	@echo 'all           build every module (default; W=1, must be warning-free) for KERNEL=, or against KDIR='
	@echo 'kernel        fetch and unpack the Debian kernel KERNEL= into .cache/kernels/ (no build)'
	@echo 'check         build, boot KERNEL= in QEMU and run the selftests (TESTS=, SMP=); logs in build/check/<kver>/'
	@echo 'check-runner  test the test runner itself: a failing, timed-out, hung, panicking and warning test'
	@echo 'fabric-faults TRIALS=$(TRIALS) trials of each wire fault of fabric_faults (two nodes; FAULTS=a,b'
	@echo '              for a subset), stock and converted, and the table of their outcomes'
	@echo 'sim           model-check the engine: schedules up to preemption bound 3, at most BUDGET=6500'
	@echo '              per case (deterministic); each case says if it was exhaustive or budget-limited'
	@echo 'sim-deep      the same at bound 5 with a budget of 200000 schedules per case (hours)'
	@echo 'mutants       mutation testing: each mutant of the engine (tools/testing/ocq/mutants.txt)'
	@echo '              must make a case fail; QUICK=1 runs the quick 13; ends "N killed, N survived,'
	@echo '              N equivalent" (equivalent: argued in Documentation/model-checker.rst, must survive)'
	@echo 'guest-mutants each mutant of the plumbing (tools/testing/vm/guest-mutants.txt) must make'
	@echo '              its guest tests fail; a few minutes per mutant, not in CI'
	@echo 'host-tests    unit tests on the host (send accounting, ocq-demo, the engine on real'
	@echo '              threads under TSan and ASan), the guest mutants still apply (-n),'
	@echo '              then sim; make check'
	@echo '              runs them first unless TESTS= is given (SIM=1 forces, SIM=0 skips)'
	@echo 'demo          build, boot KERNEL= in QEMU, run the ocq_demo ULP with ocq-demo (ARGS= adds'
	@echo '              ocq-demo run options); results in build/demo/results.json'
	@echo 'soak          a long mixed run in the guest: fake-provider scenarios, then the demo on the'
	@echo '              ordered CQ paths, DURATION=$(DURATION) seconds in all; prints the totals'
	@echo 'bench         boot KERNEL= in QEMU, run every scenario on every CQ path (REPEATS=, QUICK=1);'
	@echo '              table, build/bench/results.json and plot.svg (Documentation/performance.rst)'
	@echo 'native-bench  the engine on real host threads against a fake CQ: ns per completion of'
	@echo '              strict, flow, parallel and a raw drain loop; build/native-bench.json'
	@echo 'cost          what ordering costs per completion, counted in one deterministic process:'
	@echo '              instructions (callgrind), locked instructions, shared cache lines of raw, strict,'
	@echo '              flow and parallel; PASS/FAIL per target, non-zero exit on a FAIL;'
	@echo '              build/cost/results.json'
	@echo 'lint          run tools/lint/lint.sh with the kernel variables (KVER, KH, ...) exported'
	@echo 'format        reformat the kernel C and the C++ tools in place with clang-format'
	@echo 'install       install the modules in /lib/modules/<kver>/updates/ (depmod), the headers,'
	@echo '              Module.symvers and ocq-demo under PREFIX=$(PREFIX); DESTDIR=, INSTALL_MOD_PATH='
	@echo 'uninstall     remove what make install installed'
	@echo 'dkms-check    dkms add, build and remove the ocq package for KERNEL= (Debian dkms; CI)'
	@echo 'deb           the Debian packages ocq-dkms and ocq-tools, in build/deb/'
	@echo 'deb-check     install them and KERNEL='"'"'s headers on this system, check DKMS built the'
	@echo '              modules, purge it all again (changes the system: CI, throwaway machines)'
	@echo 'ulps          rpcrdma, nvme-rdma, nvmet-rdma and rds_rdma from KERNEL='"'"'s linux-source,'
	@echo '              stock and converted to ocq by the semantic patches (prints their diff);'
	@echo '              build/<kver>/ulps/'
	@echo 'ulp-bench     those ULPs, stock against converted, under NVMe-oF and NFS I/O and RDS'
	@echo '              messages in one boot (REPEATS=, QUICK=1, ULPS='"'"'nvme nfs rds'"'"' or a subset,'
	@echo '              NODES=2: NVMe-oF and NFS across a wire between two guests);'
	@echo '              build/ulp-bench/<kver>/ (Documentation/performance.rst)'
	@echo 'patches       ocq as a patch series against linux-source-6.12 in build/patches/: checkpatch'
	@echo '              --strict on each, git am on a fresh copy, in-tree W=1 build (QUICK=1: no build)'
	@echo 'htmldocs      render Documentation/ with Sphinx and kernel-doc into build/htmldocs/'
	@echo 'install-files, uninstall-files  the steps of install/uninstall once KVER= KO_DIR= SYMVERS= are'
	@echo '              known (internal)'
	@echo 'clean         remove build/ (the kernel cache .cache/ stays; rm -rf .cache to drop it)'
	@echo 'help          this text'
	@echo 'variables: KERNEL=$(KERNEL) (a Debian linux-image metapackage) KDIR= SMP=$(SMP) W=$(W)'
	@echo '  DEBUG_KERNEL=1|kasan|kcsan: all/kernel/check/demo on a debug kernel built from'
	@echo '  linux-source-6.12 (lockdep, KASAN or KCSAN, kmemleak; a long first build)'
	@echo '  TESTS="pat ..." selects tests by name: a pattern with * ? [ is a shell glob on the'
	@echo '  whole name, otherwise a substring; tests in selftests/runner/ run only when named'

endif
