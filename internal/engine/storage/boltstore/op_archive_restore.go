package boltstore

import (
	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// relinkArchived moves the archived links of from onto to: live when the
// other end is live, else kept in the archive; a link that would join to
// to itself, or that to already has, is dropped.
func (w *writeTx) relinkArchived(from, to string) (moved, kept uint32, err error) {
	aout, ain := w.tx.Bucket(bucketArchivedLinksOut), w.tx.Bucket(bucketArchivedLinksIn)
	links, err := collectLinks(aout, ain, from, aimemoryv1.Direction_DIRECTION_BOTH, nil, map[string]bool{}, nil)
	if err != nil {
		return 0, 0, err
	}
	lout, lin := w.tx.Bucket(bucketLinksOut), w.tx.Bucket(bucketLinksIn)
	for _, l := range links {
		if err := deleteLinkRows(aout, ain, l); err != nil {
			return 0, 0, err
		}
		n := proto.Clone(l).(*aimemoryv1.Link)
		if n.SourceId == from {
			n.SourceId = to
		}
		if n.TargetId == from {
			n.TargetId = to
		}
		if n.SourceId == n.TargetId {
			continue
		}
		out, in := aout, ain
		if w.isLive(otherEnd(n, to)) {
			out, in = lout, lin
		}
		if out.Get(linkKey(n.SourceId, n.TargetId, n.Relation)) != nil {
			continue
		}
		if err := putLinkRows(out, in, n); err != nil {
			return 0, 0, err
		}
		if out == lout {
			moved++
		} else {
			kept++
		}
	}
	return moved, kept, nil
}

func deleteLinkRows(out, in *bolt.Bucket, l *aimemoryv1.Link) error {
	if err := out.Delete(linkKey(l.SourceId, l.TargetId, l.Relation)); err != nil {
		return err
	}
	return in.Delete(linkKey(l.TargetId, l.SourceId, l.Relation))
}

// otherEnd is l's end that is not id.
func otherEnd(l *aimemoryv1.Link, id string) string {
	if l.TargetId == id {
		return l.SourceId
	}
	return l.TargetId
}

func (w *writeTx) isLive(id string) bool { return w.tx.Bucket(bucketMemories).Get([]byte(id)) != nil }
