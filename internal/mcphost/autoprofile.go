package mcphost

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Rule A of --auto-profile: this many stores in one namespace within the
// window suggest the power family (consolidation, duplicate checks).
const (
	storeBurst  = 3
	burstWindow = 60 * time.Second
)

// suggestions is the --auto-profile observer: it only logs, deduplicated
// per session, and never changes what is loaded.
type suggestions struct {
	mu     sync.Mutex
	stores map[string][]time.Time
	said   map[string]bool
}

func newSuggestions() suggestions {
	return suggestions{stores: map[string][]time.Time{}, said: map[string]bool{}}
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

// observeCall feeds rule A (store bursts).
func (h *Host) observeCall(tool string, args []byte) {
	if !h.opts.AutoProfile || tool != "memory_store" {
		return
	}
	var a struct {
		Namespace string `json:"namespace"`
	}
	json.Unmarshal(args, &a)
	if a.Namespace == "" {
		a.Namespace = "global"
	}
	s := &h.suggest
	s.mu.Lock()
	now := time.Now()
	recent := s.stores[a.Namespace][:0]
	for _, t := range s.stores[a.Namespace] {
		if now.Sub(t) < burstWindow {
			recent = append(recent, t)
		}
	}
	recent = append(recent, now)
	s.stores[a.Namespace] = recent
	count := len(recent)
	s.mu.Unlock()
	if count >= storeBurst && !h.isLoaded("power") && s.once("store_burst/"+a.Namespace) {
		h.log.Info("profile suggestion", "event", "profile_suggestion", "rule", "store_burst", "suggested_profile", "power",
			"namespace", a.Namespace, "agent_id", h.identity(), "count", count, "window_s", int(burstWindow.Seconds()),
			"active_profile", h.opts.Profile.Label())
	}
}

// suggestUnloaded feeds rule B (a call of a tool whose family is not loaded).
func (h *Host) suggestUnloaded(tool, family string) {
	if !h.opts.AutoProfile || !h.suggest.once("unloaded_call/"+family) {
		return
	}
	h.log.Info("profile suggestion", "event", "profile_suggestion", "rule", "unloaded_call", "family", family,
		"suggested_profile", fmt.Sprintf("core,%s", family), "tool", tool, "agent_id", h.identity(),
		"active_profile", h.opts.Profile.Label())
}
