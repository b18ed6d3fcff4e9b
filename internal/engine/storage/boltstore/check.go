package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// CheckConsistency rebuilds every index from the records alone and
// compares it with what the store holds: the title, expiry and term
// buckets, and the in-memory doc table and postings. It reads everything,
// so it is for tests and diagnosis, not the request path.
func (s *Store) CheckConsistency(ctx context.Context) error {
	s.writeMu.Lock() // the in-memory index must be at the same commit as the read
	defer s.writeMu.Unlock()
	records := map[string]*aimemoryv1.Memory{}
	var problems []error
	report := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	err := s.db.View(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMemories).ForEach(func(k, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			m, err := decodeLive(v)
			if err != nil {
				return err
			}
			if m.Id != string(k) {
				report("record key %s holds id %s", k, m.Id)
			}
			records[m.Id] = m
			return nil
		}); err != nil {
			return err
		}

		wantTitles, gotTitles := map[string]string{}, map[string]string{}
		wantExpiry, gotExpiry := map[string]bool{}, map[string]bool{}
		for id, m := range records {
			wantTitles[string(titleKey(m.Namespace, m.Title))] = id
			if m.ExpiresAt != 0 {
				wantExpiry[string(expiryKey(m.ExpiresAt, id))] = true
			}
			want, _ := keyword.Document(m.Title, m.Content, m.Tags)
			list, err := liveTerms(tx.Bucket(bucketMemories).Get([]byte(id)))
			if err != nil {
				return err
			}
			got, err := decodeTerms(list)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got, want) {
				report("stored terms of %s (%q) = %v, want %v", id, m.Title, got, want)
			}
		}
		tx.Bucket(bucketTitles).ForEach(func(k, v []byte) error { gotTitles[string(k)] = string(v); return nil })
		tx.Bucket(bucketExpiry).ForEach(func(k, _ []byte) error { gotExpiry[string(k)] = true; return nil })
		if !maps.Equal(gotTitles, wantTitles) {
			report("title index = %q, want %q", gotTitles, wantTitles)
		}
		if !maps.Equal(gotExpiry, wantExpiry) {
			report("expiry index has %d entries, want %d", len(gotExpiry), len(wantExpiry))
		}
		if tx.Bucket(bucketTermsV4) != nil {
			report("the schema 4 terms bucket is still there")
		}
		if err := s.checkVectors(tx, records, report); err != nil {
			return err
		}
		return checkGraph(tx, records, report)
	})
	if err != nil {
		return err
	}
	if err := s.idx.Verify(records); err != nil {
		problems = append(problems, err)
	}
	return errors.Join(problems...)
}

// checkVectors: every stored vector is of a memory's current text, and
// the in-memory copy holds exactly the stored ones.
func (s *Store) checkVectors(tx *bolt.Tx, records map[string]*aimemoryv1.Memory, report func(string, ...any)) error {
	stored := 0
	if err := tx.Bucket(bucketVectors).ForEach(func(k, v []byte) error {
		stored++
		e, err := vecset.Decode(v)
		m := records[string(k)]
		switch {
		case err != nil:
			report("vector %s: %v", k, err)
		case m == nil:
			report("vector %s of a missing memory", k)
		case textHash(m) != e.Hash:
			report("vector %s is of text the memory no longer has", k)
		case !s.vecs.Has(string(k), e.Model):
			report("vector %s is not in memory", k)
		}
		return nil
	}); err != nil {
		return err
	}
	if n := s.vecs.Len(); n != stored {
		report("%d vectors in memory, %d stored", n, stored)
	}
	return nil
}

// checkGraph: every link row names two memories and has its mirror, and
// every alias row names an entity of its namespace that has it.
func checkGraph(tx *bolt.Tx, records map[string]*aimemoryv1.Memory, report func(string, ...any)) error {
	out, in := tx.Bucket(bucketLinksOut), tx.Bucket(bucketLinksIn)
	if err := out.ForEach(func(k, _ []byte) error {
		src, dst, rel, ok := splitLinkKey(k)
		switch {
		case !ok:
			report("corrupt link key %q", k)
		case records[src] == nil || records[dst] == nil:
			report("dangling link %s→%s %s", src, dst, rel)
		case in.Get(linkKey(dst, src, rel)) == nil:
			report("link %s→%s %s has no links_in row", src, dst, rel)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := in.ForEach(func(k, _ []byte) error {
		dst, src, rel, ok := splitLinkKey(k)
		if !ok || out.Get(linkKey(src, dst, rel)) == nil {
			report("links_in row %q has no links_out row", k)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := checkArchivedLinks(tx, records, report); err != nil {
		return err
	}
	ea := tx.Bucket(bucketEntityAliases)
	if err := tx.Bucket(bucketAliases).ForEach(func(k, v []byte) error {
		folded, ns, ok := bytes.Cut(k, []byte{0})
		m := records[string(v)]
		switch {
		case !ok:
			report("corrupt alias key %q", k)
		case m == nil:
			report("alias %q names missing memory %s", k, v)
		case m.Namespace != string(ns) || ea.Get(entityAliasKey(string(v), string(folded))) == nil:
			report("alias %q does not match entity %s", k, v)
		}
		return nil
	}); err != nil {
		return err
	}
	return ea.ForEach(func(k, _ []byte) error {
		id, _, ok := bytes.Cut(k, []byte{0})
		if !ok || records[string(id)] == nil {
			report("entity alias row %q names a missing memory", k)
		}
		return nil
	})
}

// checkArchivedLinks: every link kept in the archive has its mirror, at
// least one archived end, and no end that is neither live nor archived.
func checkArchivedLinks(tx *bolt.Tx, records map[string]*aimemoryv1.Memory, report func(string, ...any)) error {
	out, in, arch := tx.Bucket(bucketArchivedLinksOut), tx.Bucket(bucketArchivedLinksIn), tx.Bucket(bucketArchive)
	archived := func(id string) bool { return arch.Get([]byte(id)) != nil }
	if err := out.ForEach(func(k, _ []byte) error {
		src, dst, rel, ok := splitLinkKey(k)
		switch {
		case !ok:
			report("corrupt archived link key %q", k)
		case !archived(src) && !archived(dst):
			report("archived link %s→%s %s has two live ends", src, dst, rel)
		case (records[src] == nil && !archived(src)) || (records[dst] == nil && !archived(dst)):
			report("dangling archived link %s→%s %s", src, dst, rel)
		case in.Get(linkKey(dst, src, rel)) == nil:
			report("archived link %s→%s %s has no mirror row", src, dst, rel)
		}
		return nil
	}); err != nil {
		return err
	}
	return in.ForEach(func(k, _ []byte) error {
		dst, src, rel, ok := splitLinkKey(k)
		if !ok || out.Get(linkKey(src, dst, rel)) == nil {
			report("archived_links_in row %q has no archived_links_out row", k)
		}
		return nil
	})
}
