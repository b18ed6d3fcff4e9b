package embed

import (
	"math"
	"testing"
)

func TestGELUMatchesTheExactOne(t *testing.T) {
	for x := -10.0; x <= 10; x += 0.0007 {
		v := []float32{float32(x)}
		gelu(v)
		want := 0.5 * float64(float32(x)) * math.Erfc(-float64(float32(x))/math.Sqrt2)
		if d := math.Abs(float64(v[0]) - want); d > 2e-6*max(1, math.Abs(x)) {
			t.Fatalf("gelu(%g) = %g, want %g (off by %g)", x, v[0], want, d)
		}
	}
}

func TestExpMatchesTheLibrary(t *testing.T) {
	for x := -90.0; x <= 0; x += 0.0013 {
		got, want := float64(expNonPositive(float32(x))), math.Exp(float64(float32(x)))
		if math.Abs(got-want) > 3e-7*want+1e-37 {
			t.Fatalf("exp(%g) = %g, want %g", x, got, want)
		}
	}
}
