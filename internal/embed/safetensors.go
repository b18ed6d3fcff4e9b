package embed

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"unsafe"
)

// weights is a safetensors file mapped into memory: tensors are used where
// they lie, so the weights cost page cache the kernel can share and
// reclaim, and only the pages a forward pass touches become resident.
type weights struct {
	data    []byte // the whole file
	release func() error
	tensors map[string]tensorInfo
	base    int // where the tensor data starts (8 + header length)
}

type tensorInfo struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

// maxHeader bounds the JSON header read (real ones are tens of KiB).
const maxHeader = 16 << 20

func openWeights(path string) (*weights, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data, release, err := mapFile(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	w := &weights{data: data, release: release}
	if err := w.parse(); err != nil {
		release()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

func (w *weights) parse() error {
	if len(w.data) < 8 {
		return fmt.Errorf("not a safetensors file: %d bytes", len(w.data))
	}
	n := binary.LittleEndian.Uint64(w.data)
	if n > maxHeader || int(n) > len(w.data)-8 {
		return fmt.Errorf("not a safetensors file: header of %d bytes", n)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(w.data[8:8+n], &raw); err != nil {
		return fmt.Errorf("safetensors header: %w", err)
	}
	w.base = 8 + int(n)
	w.tensors = make(map[string]tensorInfo, len(raw))
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var t tensorInfo
		if err := json.Unmarshal(msg, &t); err != nil {
			return fmt.Errorf("safetensors tensor %.64q: %w", name, err)
		}
		if t.Offsets[0] < 0 || t.Offsets[1] < t.Offsets[0] || w.base+t.Offsets[1] > len(w.data) {
			return fmt.Errorf("safetensors tensor %.64q: data offsets %v outside the file", name, t.Offsets)
		}
		w.tensors[name] = t
	}
	return nil
}

// f32 is the float32 tensor name of the given shape, in place.
func (w *weights) f32(name string, shape ...int) ([]float32, error) {
	t, ok := w.tensors[name]
	if !ok {
		return nil, fmt.Errorf("weights: no tensor %s", name)
	}
	if t.DType != "F32" {
		return nil, fmt.Errorf("weights: %s is %s; only F32 is supported", name, t.DType)
	}
	if fmt.Sprint(t.Shape) != fmt.Sprint(shape) {
		return nil, fmt.Errorf("weights: %s has shape %v, want %v", name, t.Shape, shape)
	}
	count := 1
	for _, d := range shape {
		count *= d
	}
	start := w.base + t.Offsets[0]
	if t.Offsets[1]-t.Offsets[0] != 4*count {
		return nil, fmt.Errorf("weights: %s holds %d bytes for %d floats", name, t.Offsets[1]-t.Offsets[0], count)
	}
	if count == 0 {
		return nil, nil
	}
	b := w.data[start : start+4*count]
	if uintptr(unsafe.Pointer(&b[0]))%4 != 0 || !littleEndian() {
		out := make([]float32, count) // misaligned or big-endian: copy
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return out, nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), count), nil
}

func (w *weights) has(name string) bool { _, ok := w.tensors[name]; return ok }

func (w *weights) close() error { return w.release() }

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
