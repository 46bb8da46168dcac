/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shim of <asm/processor.h>. */
#ifndef _ASM_PROCESSOR_H
#define _ASM_PROCESSOR_H

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax()	__builtin_ia32_pause()
#else
#define cpu_relax()	__atomic_signal_fence(__ATOMIC_SEQ_CST)
#endif

#endif /* _ASM_PROCESSOR_H */
