//go:build !race

#include "textflag.h"

// func repMovsb(dst, src *byte, n uintptr)
TEXT ·repMovsb(SB), NOSPLIT, $0-24
	MOVQ	dst+0(FP), DI
	MOVQ	src+8(FP), SI
	MOVQ	n+16(FP), CX
	REP;	MOVSB
	RET
