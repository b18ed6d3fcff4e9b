package boltstore

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Link writes of the graph family: the steps are ops.PutLink and
// ops.InvalidateLink, shared with every backend, over opsTx. Deleting
// either memory removes the link (writeTx.remove).

// relationOK checks the relation from a links_out key, before decoding.
func relationOK(f *rules.LinkFilter, key []byte) bool {
	if f == nil || f.Relation == "" {
		return true
	}
	return bytes.HasSuffix(key, []byte(f.Relation)) && len(key) > len(f.Relation) && key[len(key)-len(f.Relation)-1] == 0
}

// liveSummary is what graph results show of memory id, from its live row
// (term list, record): only the record's id, title and namespace fields
// are read (protowire), not its content, for a level summarises hundreds.
func liveSummary(id string, row []byte) (*aimemoryv1.NodeSummary, error) {
	_, raw, err := splitLive(row)
	if err != nil {
		return nil, fmt.Errorf("memory %s: %w", id, err)
	}
	return summarize(id, raw)
}

// archivedSummary is liveSummary of memory id's archive row.
func archivedSummary(id string, row []byte) (*aimemoryv1.NodeSummary, error) {
	_, rec, err := splitArchived(row)
	if err != nil {
		return nil, fmt.Errorf("archive row %s: %w", id, err)
	}
	return summarize(id, rec)
}

// summarize is the summary of memory id from its encoded record raw.
func summarize(id string, raw []byte) (*aimemoryv1.NodeSummary, error) {
	n := &aimemoryv1.NodeSummary{Id: id}
	found := 0
	for b := raw; len(b) > 0 && found < 2; { // both come before the content (fields in number order)
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return nil, fmt.Errorf("memory %s: %w", id, protowire.ParseError(k))
		}
		b = b[k:]
		if typ == protowire.BytesType && (num == memoryFieldTitle || num == memoryFieldNamespace) {
			v, k := protowire.ConsumeString(b)
			if k < 0 {
				return nil, fmt.Errorf("memory %s: %w", id, protowire.ParseError(k))
			}
			if num == memoryFieldTitle {
				n.Title = v
			} else {
				n.Namespace = v
			}
			b, found = b[k:], found+1
			continue
		}
		k = protowire.ConsumeFieldValue(num, typ, b)
		if k < 0 {
			return nil, fmt.Errorf("memory %s: %w", id, protowire.ParseError(k))
		}
		b = b[k:]
	}
	return n, nil
}

// Field numbers of Memory that summarize reads.
var (
	memoryFieldNamespace = (&aimemoryv1.Memory{}).ProtoReflect().Descriptor().Fields().ByName("namespace").Number()
	memoryFieldTitle     = (&aimemoryv1.Memory{}).ProtoReflect().Descriptor().Fields().ByName("title").Number()
)

// The link steps' view of the transaction (ops.LinkTx).
func (t opsTx) Emit(event string, m *aimemoryv1.Memory) { t.w.emit(event, m) }

// Links is the links of ids, live or kept in the archive (seam.Tx): a
// prefix scan per id and direction, the relation checked on the key
// before a link is decoded.
func (t opsTx) Links(ids []string, dir aimemoryv1.Direction, relation string, archived bool) (out, in map[string][]*aimemoryv1.Link, err error) {
	ob, ib := t.w.tx.Bucket(bucketLinksOut), t.w.tx.Bucket(bucketLinksIn)
	if archived {
		ob, ib = t.w.tx.Bucket(bucketArchivedLinksOut), t.w.tx.Bucket(bucketArchivedLinksIn)
	}
	var f *rules.LinkFilter
	if relation != "" {
		f = &rules.LinkFilter{Relation: relation}
	}
	out, in = map[string][]*aimemoryv1.Link{}, map[string][]*aimemoryv1.Link{}
	for _, side := range []struct {
		dir, other aimemoryv1.Direction
		byID       map[string][]*aimemoryv1.Link
	}{{aimemoryv1.Direction_DIRECTION_OUT, aimemoryv1.Direction_DIRECTION_IN, out}, {aimemoryv1.Direction_DIRECTION_IN, aimemoryv1.Direction_DIRECTION_OUT, in}} {
		if dir == side.other {
			continue
		}
		for _, id := range ids {
			ls, err := collectLinks(ob, ib, id, side.dir, f, nil, nil)
			if err != nil {
				return nil, nil, err
			}
			if ls != nil {
				side.byID[id] = ls
			}
		}
	}
	return out, in, nil
}

// Summaries reads only the records' title and namespace (summarize).
func (t opsTx) Summaries(ids []string, archived bool) (live, arch map[string]*aimemoryv1.NodeSummary, err error) {
	mems, ab := t.w.tx.Bucket(bucketMemories), t.w.tx.Bucket(bucketArchive)
	live, arch = make(map[string]*aimemoryv1.NodeSummary, len(ids)), map[string]*aimemoryv1.NodeSummary{}
	for _, id := range ids {
		if row := mems.Get([]byte(id)); row != nil {
			if live[id], err = liveSummary(id, row); err != nil {
				return nil, nil, err
			}
		}
		if !archived {
			continue
		}
		if row := ab.Get([]byte(id)); row != nil {
			if arch[id], err = archivedSummary(id, row); err != nil {
				return nil, nil, err
			}
		}
	}
	return live, arch, nil
}
