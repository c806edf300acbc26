//go:build !race

#include "textflag.h"

// func repMovsb(dst, src *byte, n uintptr)
TEXT ·repMovsb(SB), NOSPLIT, $0-24
	MOVQ	dst+0(FP), DI
	MOVQ	src+8(FP), SI
	MOVQ	n+16(FP), CX
	REP;	MOVSB
	RET

// func copyVec(dst, src *byte, n uintptr)
// n >= 32; 32-byte AVX2 loads and stores, 128 bytes a turn, the last 32
// bytes stored from their own load (they may overlap the previous store).
TEXT ·copyVec(SB), NOSPLIT, $0-24
	MOVQ	dst+0(FP), DI
	MOVQ	src+8(FP), SI
	MOVQ	n+16(FP), CX
	VMOVDQU	-32(SI)(CX*1), Y4
	LEAQ	-32(DI)(CX*1), R8
	CMPQ	CX, $128
	JB	tail32
loop128:
	VMOVDQU	0(SI), Y0
	VMOVDQU	32(SI), Y1
	VMOVDQU	64(SI), Y2
	VMOVDQU	96(SI), Y3
	VMOVDQU	Y0, 0(DI)
	VMOVDQU	Y1, 32(DI)
	VMOVDQU	Y2, 64(DI)
	VMOVDQU	Y3, 96(DI)
	ADDQ	$128, SI
	ADDQ	$128, DI
	SUBQ	$128, CX
	CMPQ	CX, $128
	JAE	loop128
tail32:
	CMPQ	CX, $32
	JB	last
	VMOVDQU	0(SI), Y0
	VMOVDQU	Y0, 0(DI)
	ADDQ	$32, SI
	ADDQ	$32, DI
	SUBQ	$32, CX
	JMP	tail32
last:
	VMOVDQU	Y4, 0(R8)
	VZEROUPPER
	RET
