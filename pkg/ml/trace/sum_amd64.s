#include "textflag.h"

// func sumBlocks(v []float32, acc *[8]float64)
// X0 = (s0, s1), X1 = (s2, s3), X2 = (q0, q1), X3 = (q2, q3), loaded from
// and stored to acc: lane j of the sums takes elements 4k+j in order, as
// sumBlocksGo does; each square is rounded (MULPD) before it is added
// (ADDPD), never fused.
TEXT ·sumBlocks(SB), NOSPLIT, $0-32
	MOVQ v_base+0(FP), SI
	MOVQ v_len+8(FP), CX
	MOVQ acc+24(FP), DI
	SHRQ $2, CX
	MOVUPD 0(DI), X0
	MOVUPD 16(DI), X1
	MOVUPD 32(DI), X2
	MOVUPD 48(DI), X3
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

// func sumBlocks2AVX2(a, b []float32, accA, accB *[8]float64)
// sumBlocks of a and of b (len(b) == len(a)) in one loop, with AVX2:
// Y0 = (s0..s3) and Y1 = (q0..q3) of a, Y2 and Y3 of b. One VCVTPS2PD
// converts a block of four, lane j takes element 4k+j in order as
// sumBlocksGo does, and each square is rounded (VMULPD) before it is added
// (VADDPD), never fused: the same bits as sumBlocks. The two tensors'
// chains are independent, so their additions overlap.
TEXT ·sumBlocks2AVX2(SB), NOSPLIT, $0-64
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DX
	MOVQ accA+48(FP), DI
	MOVQ accB+56(FP), R8
	SHRQ $2, CX
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 0(R8), Y2
	VMOVUPD 32(R8), Y3
	TESTQ CX, CX
	JZ doneavx

loopavx:
	VCVTPS2PD (SI), Y4
	VCVTPS2PD (DX), Y5
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y2, Y2
	VMULPD Y4, Y4, Y4
	VMULPD Y5, Y5, Y5
	VADDPD Y4, Y1, Y1
	VADDPD Y5, Y3, Y3
	ADDQ $16, SI
	ADDQ $16, DX
	DECQ CX
	JNZ loopavx

doneavx:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 0(R8)
	VMOVUPD Y3, 32(R8)
	VZEROUPPER
	RET
