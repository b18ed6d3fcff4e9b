// Package embed runs a sentence-transformers BERT model (all-MiniLM-L6-v2
// and its kind) in pure Go: WordPiece tokens, the encoder over mmapped
// safetensors weights, mean or CLS pooling, L2 normalisation. No cgo, so
// the binaries stay static; the matrix products run on the sgemm
// package's vectorised kernels.
package embed

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/ai-memory/ai-memory/internal/embed/wordpiece"
)

// Model is a loaded sentence embedding model, safe for concurrent use.
type Model struct {
	cfg  *config
	tok  *wordpiece.Tokenizer
	w    *weights
	bert *bert
	work sync.Pool // *workspace
}

// Load reads the model in dir: config.json, model.safetensors, vocab.txt
// and the sentence-transformers configs beside them.
func Load(dir string) (*Model, error) {
	cfg, err := readConfig(dir)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", dir, err)
	}
	vf, err := os.Open(filepath.Join(dir, "vocab.txt"))
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", dir, err)
	}
	tok, err := wordpiece.Load(vf, cfg.lowerCase)
	vf.Close()
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", dir, err)
	}
	if tok.Size() > cfg.VocabSize {
		return nil, fmt.Errorf("model %s: vocab.txt has %d tokens, the model %d", dir, tok.Size(), cfg.VocabSize)
	}
	w, err := openWeights(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", dir, err)
	}
	b, err := newBert(cfg, w)
	if err != nil {
		w.close()
		return nil, fmt.Errorf("model %s: %w", dir, err)
	}
	return &Model{cfg: cfg, tok: tok, w: w, bert: b}, nil
}

// Close releases the weights; the model must not be used after.
func (m *Model) Close() error { return m.w.close() }

// Dims is the length of every vector.
func (m *Model) Dims() int { return m.cfg.Hidden }

// MaxTokens is the longest input in tokens; the rest of a text is cut off.
func (m *Model) MaxTokens() int { return m.cfg.maxSeq }

// Words is text split into words as the model reads it.
func (m *Model) Words(text string) []string { return m.tok.Words(text) }

// Knows reports whether word, one of Words', is in the model's vocabulary
// whole (see wordpiece.Tokenizer.Whole).
func (m *Model) Knows(word string) bool { return m.tok.Whole(word) }

// Tokenize is text's token ids as the model sees them ([CLS] … [SEP]).
func (m *Model) Tokenize(text string) []int32 { return m.tok.Encode(text, m.cfg.maxSeq) }

// maxBatchTokens bounds the tokens of one forward pass, and so its
// scratch memory (about 12 KiB a token for MiniLM).
const maxBatchTokens = 512

// Embed returns one unit-length vector per text. Texts are run through
// the encoder in groups of up to maxBatchTokens tokens, packed one after
// another with attention kept within each.
func (m *Model) Embed(texts []string) ([][]float32, error) {
	seqs := make([][]int32, len(texts))
	for i, t := range texts {
		seqs[i] = m.Tokenize(t)
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(seqs); {
		end, tokens := start+1, len(seqs[start])
		for end < len(seqs) && tokens+len(seqs[end]) <= maxBatchTokens {
			tokens += len(seqs[end])
			end++
		}
		vs, err := m.embedGroup(seqs[start:end], tokens)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
		start = end
	}
	return out, nil
}

func (m *Model) embedGroup(seqs [][]int32, total int) ([][]float32, error) {
	ws, _ := m.work.Get().(*workspace)
	if ws == nil {
		ws = &workspace{}
	}
	defer m.work.Put(ws)
	hidden := m.bert.forward(ws, seqs, total)
	h := m.cfg.Hidden
	out := make([][]float32, len(seqs))
	row := 0
	for i, s := range seqs {
		v := make([]float32, h)
		switch m.cfg.pooling {
		case "cls":
			copy(v, hidden[row*h:(row+1)*h])
		default:
			for t := range len(s) {
				for j, x := range hidden[(row+t)*h : (row+t+1)*h] {
					v[j] += x
				}
			}
			for j := range v {
				v[j] /= float32(len(s))
			}
		}
		if err := normalize(v); err != nil {
			return nil, err
		}
		out[i] = v
		row += len(s)
	}
	return out, nil
}

func normalize(v []float32) error {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return errors.New("embed: the model produced a vector of no length")
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return nil
}
