//go:build amd64 && !purego

#include "textflag.h"

// HSUM stores the sum of the eight floats of Y (low half X) at off(DI).
#define HSUM(Y, X, off) \
	VEXTRACTF128 $1, Y, X15 \
	VADDPS       X15, X, X  \
	VHADDPS      X, X, X    \
	VHADDPS      X, X, X    \
	VMOVSS       X, off(DI)

// ROW multiplies eight floats of the A row at (P)(R11) into three sums.
#define ROW(P, S0, S1, S2) \
	VMOVUPS     (P)(R11*1), Y15 \
	VFMADD231PS Y12, Y15, S0    \
	VFMADD231PS Y13, Y15, S1    \
	VFMADD231PS Y14, Y15, S2

// func dot4x3(k8 int, a0, a1, a2, a3, b0, b1, b2 *float32, out *[12]float32)
TEXT ·dot4x3(SB), NOSPLIT, $0-72
	MOVQ k8+0(FP), CX
	MOVQ a0+8(FP), AX
	MOVQ a1+16(FP), BX
	MOVQ a2+24(FP), DX
	MOVQ a3+32(FP), SI
	MOVQ b0+40(FP), R8
	MOVQ b1+48(FP), R9
	MOVQ b2+56(FP), R10
	MOVQ out+64(FP), DI
	SHLQ $2, CX
	XORQ R11, R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

loop:
	VMOVUPS (R8)(R11*1), Y12
	VMOVUPS (R9)(R11*1), Y13
	VMOVUPS (R10)(R11*1), Y14
	ROW(AX, Y0, Y1, Y2)
	ROW(BX, Y3, Y4, Y5)
	ROW(DX, Y6, Y7, Y8)
	ROW(SI, Y9, Y10, Y11)
	ADDQ $32, R11
	CMPQ R11, CX
	JLT  loop

	HSUM(Y0, X0, 0)
	HSUM(Y1, X1, 4)
	HSUM(Y2, X2, 8)
	HSUM(Y3, X3, 12)
	HSUM(Y4, X4, 16)
	HSUM(Y5, X5, 20)
	HSUM(Y6, X6, 24)
	HSUM(Y7, X7, 28)
	HSUM(Y8, X8, 32)
	HSUM(Y9, X9, 36)
	HSUM(Y10, X10, 40)
	HSUM(Y11, X11, 44)
	VZEROUPPER
	RET
