#include "textflag.h"

// func sumBlocks(v []float32, acc *[8]float64)
// X0 = (s0, s1), X1 = (s2, s3), X2 = (q0, q1), X3 = (q2, q3): lane j of
// the sums takes elements 4k+j in order, as sumBlocksGo does; each square
// is rounded (MULPD) before it is added (ADDPD), never fused.
TEXT ·sumBlocks(SB), NOSPLIT, $0-32
	MOVQ v_base+0(FP), SI
	MOVQ v_len+8(FP), CX
	MOVQ acc+24(FP), DI
	SHRQ $2, CX
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	TESTQ CX, CX
	JZ done

loop:
	MOVUPS (SI), X4
	CVTPS2PD X4, X5
	MOVHLPS X4, X4
	CVTPS2PD X4, X6
	ADDPD X5, X0
	ADDPD X6, X1
	MULPD X5, X5
	MULPD X6, X6
	ADDPD X5, X2
	ADDPD X6, X3
	ADDQ $16, SI
	DECQ CX
	JNZ loop

done:
	MOVUPD X0, 0(DI)
	MOVUPD X1, 16(DI)
	MOVUPD X2, 32(DI)
	MOVUPD X3, 48(DI)
	RET
