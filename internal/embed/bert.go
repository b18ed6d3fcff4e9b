package embed

import (
	"fmt"
	"math"

	"github.com/ai-memory/ai-memory/internal/embed/sgemm"
)

// bert is the encoder's weights, slices of the mapped file.
type bert struct {
	cfg                *config
	word, pos, typ     []float32
	embNormW, embNormB []float32
	layers             []layer
}

type layer struct {
	q, k, v, o           linear
	attnNormW, attnNormB []float32
	up, down             linear
	outNormW, outNormB   []float32
}

type linear struct {
	w, b    []float32
	in, out int
}

func newBert(cfg *config, w *weights) (*bert, error) {
	prefix := ""
	if w.has("bert.embeddings.word_embeddings.weight") {
		prefix = "bert."
	}
	var err error
	get := func(name string, shape ...int) []float32 {
		if err != nil {
			return nil
		}
		var t []float32
		t, err = w.f32(prefix+name, shape...)
		return t
	}
	h, in := cfg.Hidden, cfg.Intermediate
	lin := func(name string, in, out int) linear {
		return linear{w: get(name+".weight", out, in), b: get(name+".bias", out), in: in, out: out}
	}
	b := &bert{cfg: cfg,
		word:     get("embeddings.word_embeddings.weight", cfg.VocabSize, h),
		pos:      get("embeddings.position_embeddings.weight", cfg.MaxPositions, h),
		typ:      get("embeddings.token_type_embeddings.weight", cfg.TypeVocab, h),
		embNormW: get("embeddings.LayerNorm.weight", h),
		embNormB: get("embeddings.LayerNorm.bias", h),
	}
	for i := range cfg.Layers {
		p := fmt.Sprintf("encoder.layer.%d.", i)
		b.layers = append(b.layers, layer{
			q:         lin(p+"attention.self.query", h, h),
			k:         lin(p+"attention.self.key", h, h),
			v:         lin(p+"attention.self.value", h, h),
			o:         lin(p+"attention.output.dense", h, h),
			attnNormW: get(p+"attention.output.LayerNorm.weight", h),
			attnNormB: get(p+"attention.output.LayerNorm.bias", h),
			up:        lin(p+"intermediate.dense", h, in),
			down:      lin(p+"output.dense", in, h),
			outNormW:  get(p+"output.LayerNorm.weight", h),
			outNormB:  get(p+"output.LayerNorm.bias", h),
		})
	}
	return b, err
}

// workspace is one forward pass's scratch memory, reused across calls.
type workspace struct {
	x, q, k, v, ctx, tmp, inter, scores, vt []float32
}

func grow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// apply is l(x) for rows×l.in into rows×l.out.
func (l *linear) apply(rows int, x, y []float32) {
	sgemm.MulT(rows, l.out, l.in, x, l.in, l.w, l.in, l.b, y, l.out)
}

// forward runs the encoder over seqs (packed one after another, total
// tokens in all) and returns the last hidden state, total×hidden.
func (b *bert) forward(ws *workspace, seqs [][]int32, total int) []float32 {
	h := b.cfg.Hidden
	x := grow(&ws.x, total*h)
	row := 0
	for _, s := range seqs {
		for p, id := range s {
			dst := x[row*h : (row+1)*h]
			word := b.word[int(id)*h : (int(id)+1)*h]
			pos := b.pos[p*h : (p+1)*h]
			for j := range dst {
				dst[j] = word[j] + pos[j] + b.typ[j]
			}
			row++
		}
	}
	layerNorm(x, h, b.embNormW, b.embNormB, b.cfg.LayerNormEps)
	q, k, v := grow(&ws.q, total*h), grow(&ws.k, total*h), grow(&ws.v, total*h)
	ctx, tmp := grow(&ws.ctx, total*h), grow(&ws.tmp, total*h)
	inter := grow(&ws.inter, total*b.cfg.Intermediate)
	for i := range b.layers {
		l := &b.layers[i]
		l.q.apply(total, x, q)
		l.k.apply(total, x, k)
		l.v.apply(total, x, v)
		b.attention(ws, seqs, q, k, v, ctx)
		l.o.apply(total, ctx, tmp)
		addInto(tmp, x)
		layerNorm(x, h, l.attnNormW, l.attnNormB, b.cfg.LayerNormEps)
		l.up.apply(total, x, inter)
		gelu(inter)
		l.down.apply(total, inter, tmp)
		addInto(tmp, x)
		layerNorm(x, h, l.outNormW, l.outNormB, b.cfg.LayerNormEps)
	}
	return x
}

// attention is multi-head self-attention within each sequence:
// ctx = softmax(q·kᵀ/√d)·v per head.
func (b *bert) attention(ws *workspace, seqs [][]int32, q, k, v, ctx []float32) {
	h := b.cfg.Hidden
	d := h / b.cfg.Heads
	scale := float32(1 / math.Sqrt(float64(d)))
	row := 0
	for _, s := range seqs {
		n := len(s)
		scores := grow(&ws.scores, n*n)
		vt := grow(&ws.vt, d*n)
		for head := range b.cfg.Heads {
			off := row*h + head*d
			sgemm.MulT(n, n, d, q[off:], h, k[off:], h, nil, scores, n)
			for i := range n {
				softmax(scores[i*n:(i+1)*n], scale)
			}
			for t := range n { // v's head, transposed: d rows of n
				for j := range d {
					vt[j*n+t] = v[off+t*h+j]
				}
			}
			sgemm.MulT(n, d, n, scores, n, vt, n, nil, ctx[off:], h)
		}
		row += n
	}
}

func addInto(src, dst []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] += x
	}
}

// layerNorm normalises each row of x in place: (x−mean)/√(var+eps)·w + b.
func layerNorm(x []float32, h int, w, b []float32, eps float64) {
	for r := 0; r+h <= len(x); r += h {
		row := x[r : r+h]
		var mean, sq float64
		for _, v := range row {
			mean += float64(v)
		}
		mean /= float64(h)
		for _, v := range row {
			d := float64(v) - mean
			sq += d * d
		}
		inv := 1 / math.Sqrt(sq/float64(h)+eps)
		for j, v := range row {
			row[j] = float32((float64(v)-mean)*inv)*w[j] + b[j]
		}
	}
}

// softmax turns row·scale into probabilities in place.
func softmax(row []float32, scale float32) {
	hi := float32(math.Inf(-1))
	for _, v := range row {
		hi = max(hi, v)
	}
	var sum float32
	for i, v := range row {
		e := expNonPositive((v - hi) * scale)
		row[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range row {
		row[i] *= inv
	}
}

// expNonPositive is eˣ for x ≤ 0 to a relative error near 2e-7:
// 2^(x·log₂e) split into an integer power (the float's exponent) and a
// fraction's polynomial. math.Exp made softmax a third of the time of a
// 256-token text, whose attention takes 4.7 million of them.
func expNonPositive(x float32) float32 {
	if x < -87 {
		return 0
	}
	t := float64(x) * math.Log2E
	n := math.Floor(t)
	p := (t - n) * math.Ln2 // 2^(t−n) = e^p, p in [0, ln 2)
	y := 1 + p*(1+p*(1.0/2+p*(1.0/6+p*(1.0/24+p*(1.0/120+p*(1.0/720+p*(1.0/5040+p*(1.0/40320+p*(1.0/362880)))))))))
	return float32(y) * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// gelu is BERT's exact GELU, x·Φ(x), in place, Φ read from a table:
// math.Erf made GELU a quarter of a query's time.
func gelu(x []float32) {
	for i, v := range x {
		x[i] = v * normalCDF(v)
	}
}

// The standard normal CDF Φ sampled every 1/256 over [−8, 8], linearly
// interpolated: the error is below 2e-6 (h²/8 · max|Φ”|), well under
// float32 activations' own rounding after a layer norm.
const (
	cdfStep  = 256
	cdfRange = 8
)

var cdfTable = func() []float32 {
	t := make([]float32, 2*cdfRange*cdfStep+2)
	for i := range t {
		x := float64(i)/cdfStep - cdfRange
		t[i] = float32(0.5 * math.Erfc(-x/math.Sqrt2))
	}
	return t
}()

func normalCDF(v float32) float32 {
	switch {
	case v <= -cdfRange:
		return 0
	case v >= cdfRange:
		return 1
	}
	p := (v + cdfRange) * cdfStep
	i := int(p)
	f := p - float32(i)
	return cdfTable[i] + f*(cdfTable[i+1]-cdfTable[i])
}
