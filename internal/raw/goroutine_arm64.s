#include "textflag.h"

// func Goroutine() uintptr
TEXT ·Goroutine(SB), NOSPLIT|NOFRAME, $0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET
