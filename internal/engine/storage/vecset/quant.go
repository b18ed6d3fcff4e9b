package vecset

import (
	"encoding/binary"
	"errors"
	"math"
)

// Vectors are kept 8-bit (docs/RETRIEVAL.md "Stored vectors"): a unit
// vector v is stored as Scale and Q with v[i] ≈ Q[i]·Scale, Scale =
// max|v[i]|/127. At 384 dimensions that is 388 bytes instead of 1,536, and
// recall on the benchmarks moves by less than 0.01 (16-bit gains nothing
// measurable). A query is quantized to 16 bits, so a cosine is one integer
// dot product times two scales.

// Quantize is v (any length; scaled to unit length first) as 8-bit
// integers and their scale.
func Quantize(v []float32) (scale float32, q []int8) {
	u := Normalize(v)
	var m float32
	for _, x := range u {
		m = max(m, abs32(x))
	}
	q = make([]int8, len(u))
	if m == 0 {
		return 0, q
	}
	inv := 127 / m
	for i, x := range u {
		q[i] = int8(math.Round(float64(x * inv)))
	}
	return m / 127, q
}

// Vector is e's vector, dequantized (unit length within the rounding).
func (e *Entry) Vector() []float32 {
	out := make([]float32, len(e.Q))
	for i, x := range e.Q {
		out[i] = float32(x) * e.Scale
	}
	return out
}

// query is a query vector quantized to 16 bits for the scan.
type query struct {
	scale float32
	q     []int16
}

func quantizeQuery(v []float32) query {
	u := Normalize(v)
	var m float32
	for _, x := range u {
		m = max(m, abs32(x))
	}
	q := query{q: make([]int16, len(u))}
	if m == 0 {
		return q
	}
	inv := 32767 / m
	for i, x := range u {
		q.q[i] = int16(math.Round(float64(x * inv)))
	}
	q.scale = m / 32767
	return q
}

// cos is the cosine of e's vector and the query (both unit length).
func (q query) cos(e *Entry) float64 {
	return float64(dotInt8(e.Q, q.q)) * float64(e.Scale) * float64(q.scale)
}

// dotChunk bounds a kernel call: each term is at most 128·32768, so 256
// of them (1.07e9) stay inside int32 whatever the values.
const dotChunk = 256

// dotInt8 is the scan's inner product (the whole cost of a vector
// search): the kernel in int32 over chunks, summed in int64.
func dotInt8(a []int8, b []int16) int64 {
	b = b[:len(a)]
	var s int64
	for len(a) > 0 {
		n := min(len(a), dotChunk)
		s += int64(dotKernel(a[:n], b[:n]))
		a, b = a[n:], b[n:]
	}
	return s
}

// dotGo is the portable kernel (and the tail the assembly leaves).
func dotGo(a []int8, b []int16) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// Encode is e as bytes, the form boltstore keeps (model length and
// model, text hash, dimensions, scale, the 8-bit components).
func (e *Entry) Encode() []byte {
	b := binary.AppendUvarint(make([]byte, 0, 24+len(e.Model)+len(e.Q)), uint64(len(e.Model)))
	b = append(b, e.Model...)
	b = binary.BigEndian.AppendUint64(b, e.Hash)
	b = binary.AppendUvarint(b, uint64(len(e.Q)))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(e.Scale))
	for _, x := range e.Q {
		b = append(b, byte(x))
	}
	return b
}

// Decode is Encode's inverse.
func Decode(b []byte) (*Entry, error) {
	bad := errors.New("malformed vector")
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, bad
	}
	e := &Entry{Model: string(b[k : k+int(n)])}
	b = b[k+int(n):]
	if len(b) < 8 {
		return nil, bad
	}
	e.Hash, b = binary.BigEndian.Uint64(b), b[8:]
	dim, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) != 4+dim {
		return nil, bad
	}
	b = b[k:]
	e.Scale = math.Float32frombits(binary.LittleEndian.Uint32(b))
	e.Q = Bytes8(b[4:])
	return e, nil
}

// Bytes8 is raw bytes as 8-bit components (a copy).
func Bytes8(b []byte) []int8 {
	q := make([]int8, len(b))
	for i, x := range b {
		q[i] = int8(x)
	}
	return q
}

// Raw8 is 8-bit components as bytes (pgstore's bytea).
func Raw8(q []int8) []byte {
	b := make([]byte, len(q))
	for i, x := range q {
		b[i] = byte(x)
	}
	return b
}
