package storage

// Layered is a Backend built over another value: package records' Store
// over a backend's seam. What the engine asks of a backend beyond Backend
// (Leadership, Capabilities, ErrorTranslator, ...) is the one below's.
type Layered interface {
	Below() any
}

// As is b as T, or, when b is Layered, what lies below it as T: how the
// engine asks for an optional capability of the backend it serves.
func As[T any](b any) (T, bool) {
	for b != nil {
		if t, ok := b.(T); ok {
			return t, true
		}
		l, ok := b.(Layered)
		if !ok {
			break
		}
		b = l.Below()
	}
	var zero T
	return zero, false
}
