package mcphost

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/internal/catalog"
)

// suggestions is the --auto-profile observer: it only logs, deduplicated
// per session, and never changes what is loaded. Its rules are data
// (catalog.BurstRules); the host knows no tool by name.
type suggestions struct {
	mu    sync.Mutex
	calls map[string][]time.Time // rule/key value → recent call times
	said  map[string]bool
	now   func() time.Time
}

func newSuggestions() suggestions {
	return suggestions{calls: map[string][]time.Time{}, said: map[string]bool{}, now: time.Now}
}

// once reports whether key is new for this session.
func (s *suggestions) once(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.said[key] {
		return false
	}
	s.said[key] = true
	return true
}

// hit records one call for a rule's key value and returns how many fell
// within the rule's window.
func (s *suggestions) hit(r catalog.BurstRule, value string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := r.Name + "/" + value
	now := s.now()
	recent := s.calls[k][:0]
	for _, t := range s.calls[k] {
		if now.Sub(t) < r.Window {
			recent = append(recent, t)
		}
	}
	s.calls[k] = append(recent, now)
	return len(s.calls[k])
}

// maxObservedValue bounds the argument values the observer keeps.
const maxObservedValue = 512

// observeCall feeds the burst rules.
func (h *Host) observeCall(tool string, args []byte) {
	if !h.opts.AutoProfile {
		return
	}
	for _, r := range catalog.BurstRules {
		if r.Tool != tool {
			continue
		}
		var a map[string]json.RawMessage
		json.Unmarshal(args, &a)
		var value string
		if json.Unmarshal(a[r.Key], &value) != nil || value == "" {
			value = r.Default
		}
		if len(value) > maxObservedValue {
			continue // not a valid key value anyway; never keep or log a huge one
		}
		count := h.suggest.hit(r, value)
		if count >= r.Count && !h.isLoaded(r.Suggest) && h.suggest.once(r.Name+"/"+value) {
			h.log.Info("profile suggestion", "event", "profile_suggestion", "rule", r.Name, "suggested_profile", r.Suggest,
				r.Key, value, "agent_id", h.identity(), "count", count, "window_s", int(r.Window.Seconds()),
				"active_profile", h.opts.Profile.Label())
		}
	}
}

// suggestUnloaded feeds rule B (a call of a tool whose family is not loaded).
func (h *Host) suggestUnloaded(tool, family string) {
	if !h.opts.AutoProfile || !h.suggest.once("unloaded_call/"+family) {
		return
	}
	h.log.Info("profile suggestion", "event", "profile_suggestion", "rule", "unloaded_call", "family", family,
		"suggested_profile", fmt.Sprintf("%s,%s", catalog.Base, family), "tool", tool, "agent_id", h.identity(),
		"active_profile", h.opts.Profile.Label())
}
