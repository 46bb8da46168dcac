/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shim of <asm/processor.h>: cpu_relax() is a voluntary yield; the spinning
 * context is not run again until another context made a step, so a spin
 * loop costs no preemption and cannot hide a deadlock.
 */
#ifndef _ASM_PROCESSOR_H
#define _ASM_PROCESSOR_H

#include <ocq_sim.h>

#define cpu_relax()	ocq_sim_spin("cpu_relax")

#endif /* _ASM_PROCESSOR_H */
