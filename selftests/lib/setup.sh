# SPDX-License-Identifier: GPL-2.0
#
# setup.sh - sourced once by the guest's /init after the boot modules are loaded:
# everything RDMA-specific the tests expect (see rxe.sh).
. /selftests/lib/rxe.sh
if rxe_create; then
	rdma link show
else
	echo "setup: rxe set-up FAILED"
fi
