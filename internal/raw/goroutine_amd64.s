#include "textflag.h"

// func Goroutine() uintptr
TEXT ·Goroutine(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
