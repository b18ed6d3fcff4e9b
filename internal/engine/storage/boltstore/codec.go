package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Records are stored as the wire Memory message: the engine's own API
// type, versioned by protobuf's field numbers.
func encodeMemory(m *aimemoryv1.Memory) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

func decodeMemory(raw []byte) (*aimemoryv1.Memory, error) {
	m := new(aimemoryv1.Memory)
	if err := proto.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("decode memory: %w", err)
	}
	return m, nil
}

// Live rows (bucket memories, schema 5): the uvarint length of the
// memory's term list, the list (encodeTerms), then the Memory. The list
// lives in the row, not in a bucket of its own, so a write puts one value
// on one leaf instead of two on leaves of two buckets (3 pages a commit).
func encodeLive(m *aimemoryv1.Memory, terms []byte) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.MarshalAppend(liveHead(terms, proto.Size(m)), m)
}

// liveHead is a live row up to its Memory, with room for size more bytes.
func liveHead(terms []byte, size int) []byte {
	b := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen32+len(terms)+size), uint64(len(terms)))
	return append(b, terms...)
}

var errCorruptRow = errors.New("corrupt memory row")

// splitLive cuts a live row into its term list and its Memory's encoding.
func splitLive(raw []byte) (terms, record []byte, err error) {
	n, k := binary.Uvarint(raw)
	if k <= 0 || n > uint64(len(raw)-k) {
		return nil, nil, errCorruptRow
	}
	return raw[k : k+int(n)], raw[k+int(n):], nil
}

// decodeLive decodes a live row's Memory.
func decodeLive(raw []byte) (*aimemoryv1.Memory, error) {
	_, rec, err := splitLive(raw)
	if err != nil {
		return nil, err
	}
	return decodeMemory(rec)
}

// liveTerms is a live row's term list, still encoded; nil for no row.
func liveTerms(raw []byte) ([]byte, error) {
	if raw == nil {
		return nil, nil
	}
	terms, _, err := splitLive(raw)
	return terms, err
}

// titleKey is namespace NUL title: namespaces cannot hold a NUL (a control
// character), so the key is unambiguous and groups titles by namespace.
func titleKey(namespace, title string) []byte {
	k := make([]byte, 0, len(namespace)+1+len(title))
	k = append(k, namespace...)
	k = append(k, 0)
	return append(k, title...)
}

// expiryKey sorts by expiry, so the first key answers "anything expired?".
// Expiries are positive Unix nanoseconds, so unsigned order is time order.
func expiryKey(expiresAt int64, id string) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(id)), uint64(expiresAt))
	return append(k, id...)
}

func splitExpiryKey(k []byte) (int64, string) {
	return int64(binary.BigEndian.Uint64(k[:8])), string(k[8:])
}

// Term lists: uvarint count, then per term uvarint length, bytes, uvarint
// frequency; sorted by term (keyword.Document's order).
func encodeTerms(terms []keyword.TermFreq) []byte {
	n := binary.MaxVarintLen32
	for _, t := range terms {
		n += 2*binary.MaxVarintLen32 + len(t.Term)
	}
	b := binary.AppendUvarint(make([]byte, 0, n), uint64(len(terms)))
	for _, t := range terms {
		b = binary.AppendUvarint(b, uint64(len(t.Term)))
		b = append(b, t.Term...)
		b = binary.AppendUvarint(b, uint64(t.Freq))
	}
	return b
}

var errCorrupt = errors.New("corrupt term list")

func decodeTerms(b []byte) ([]keyword.TermFreq, error) {
	if b == nil {
		return nil, nil
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errCorrupt
	}
	b = b[k:]
	out := make([]keyword.TermFreq, 0, n)
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, errCorrupt
		}
		term := string(b[k : k+int(l)])
		b = b[k+int(l):]
		f, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, errCorrupt
		}
		b = b[k:]
		out = append(out, keyword.TermFreq{Term: term, Freq: uint32(f)})
	}
	return out, nil
}

// Link keys: ids and relations hold no NUL, so NUL separates them.
func linkKey(a, b, relation string) []byte {
	var k bytes.Buffer
	k.WriteString(a)
	k.WriteByte(0)
	k.WriteString(b)
	k.WriteByte(0)
	k.WriteString(relation)
	return k.Bytes()
}

func splitLinkKey(k []byte) (a, b, relation string, ok bool) {
	parts := bytes.SplitN(k, []byte{0}, 3)
	if len(parts) != 3 {
		return "", "", "", false
	}
	return string(parts[0]), string(parts[1]), string(parts[2]), true
}

// idPrefix is the key prefix of every link of id in either link bucket.
func idPrefix(id string) []byte { return append([]byte(id), 0) }

// Archive rows: version byte 1, archived_at, original_expires_at (8 bytes
// each, big-endian), uvarint-prefixed reason and tier, then the Memory.
func encodeArchived(a *storage.Archived) ([]byte, error) {
	m, err := encodeMemory(a.Memory)
	if err != nil {
		return nil, err
	}
	b := []byte{1}
	b = binary.BigEndian.AppendUint64(b, uint64(a.ArchivedAt))
	b = binary.BigEndian.AppendUint64(b, uint64(a.OriginalExpiresAt))
	b = binary.AppendUvarint(b, uint64(len(a.Reason)))
	b = append(b, a.Reason...)
	b = binary.AppendUvarint(b, uint64(len(a.OriginalTier)))
	b = append(b, a.OriginalTier...)
	return append(b, m...), nil
}

func decodeArchived(b []byte) (*storage.Archived, error) {
	a, rec, err := splitArchived(b)
	if err != nil {
		return nil, err
	}
	if a.Memory, err = decodeMemory(rec); err != nil {
		return nil, err
	}
	return a, nil
}

// splitArchived reads an archive row's header; rec is its encoded Memory.
func splitArchived(b []byte) (a *storage.Archived, rec []byte, err error) {
	if len(b) < 17 || b[0] != 1 {
		return nil, nil, errors.New("corrupt archive row")
	}
	a = &storage.Archived{
		ArchivedAt:        int64(binary.BigEndian.Uint64(b[1:9])),
		OriginalExpiresAt: int64(binary.BigEndian.Uint64(b[9:17])),
	}
	b = b[17:]
	for _, dst := range []*string{&a.Reason, &a.OriginalTier} {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, nil, errors.New("corrupt archive row")
		}
		*dst = string(b[k : k+int(l)])
		b = b[k+int(l):]
	}
	return a, b, nil
}

// walkTerms visits a stored term list without copying its terms.
func walkTerms(b []byte, fn func(term []byte, tf uint32)) error {
	if b == nil {
		return nil
	}
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return errCorrupt
	}
	b = b[k:]
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return errCorrupt
		}
		term := b[k : k+int(l)]
		b = b[k+int(l):]
		f, k := binary.Uvarint(b)
		if k <= 0 {
			return errCorrupt
		}
		b = b[k:]
		fn(term, uint32(f))
	}
	return nil
}
