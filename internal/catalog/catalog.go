// Package catalog is everything family-specific the host knows, as data:
// the first-party contract (families, their tools, the always-on tool; spec
// profiles-and-discovery §1.1), the grammar a third-party family name
// follows, the family set of one host (the contract plus what installed
// plugins declare, see Set), the profile grammar (§1.2–§1.3) and the
// heuristics of --auto-profile. The host itself has no per-family code.
package catalog

import (
	"regexp"
	"slices"
	"time"
)

// contract lists the first-party families in canonical order and the tools
// each owns. Each tool belongs to exactly one family; a plugin may declare
// a contract tool only in its contract family.
var contract = []struct {
	family string
	tools  []string
}{
	{"core", []string{"memory_store", "memory_recall", "memory_list", "memory_get", "memory_search"}},
	{"lifecycle", []string{"memory_update", "memory_delete", "memory_forget", "memory_gc", "memory_promote"}},
	{"graph", []string{"memory_kg_query", "memory_kg_timeline", "memory_kg_invalidate", "memory_link", "memory_get_links", "memory_entity_register", "memory_entity_get_by_alias", "memory_get_taxonomy"}},
	{"governance", []string{"memory_pending_list", "memory_pending_approve", "memory_pending_reject", "memory_namespace_set_standard", "memory_namespace_get_standard", "memory_namespace_clear_standard", "memory_subscribe", "memory_unsubscribe"}},
	{"power", []string{"memory_consolidate", "memory_detect_contradiction", "memory_check_duplicate", "memory_auto_tag", "memory_expand_query", "memory_inbox"}},
	{"meta", []string{"memory_capabilities", "memory_agent_register", "memory_agent_list", "memory_session_start", "memory_stats"}},
	{"archive", []string{"memory_archive_list", "memory_archive_purge", "memory_archive_restore", "memory_archive_stats"}},
	{"other", []string{"memory_list_subscriptions", "memory_notify"}},
}

// Base is the family every profile loads.
const Base = "core"

// AlwaysOn tools are served by the host itself under every profile; the
// contract files them under a family (meta) but no plugin may declare them.
var AlwaysOn = []string{"memory_capabilities"}

// Instructions is the server's MCP instructions text, which harnesses put
// in every request: the tool names and the family list are in the tool
// definitions already, so it says only when to use them.
const Instructions = "Persistent memory across sessions. Recall before work; store decisions, facts and preferences. More tools: memory_capabilities."

// FirstParty returns the contract's family names in canonical order.
func FirstParty() []string {
	out := make([]string, len(contract))
	for i, c := range contract {
		out[i] = c.family
	}
	return out
}

// contractTools returns the contract's tools of a family, or nil.
func contractTools(family string) []string {
	for _, c := range contract {
		if c.family == family {
			return c.tools
		}
	}
	return nil
}

// contractFamilyOf returns the contract family owning a tool, or "".
func contractFamilyOf(tool string) string {
	for _, c := range contract {
		if slices.Contains(c.tools, tool) {
			return c.family
		}
	}
	return ""
}

// IsAlwaysOn reports whether a tool is served under every profile.
func IsAlwaysOn(tool string) bool { return slices.Contains(AlwaysOn, tool) }

// FamilyNameRule is the documented grammar of a family name: lowercase, a
// letter first, then letters, digits or '-', 2 to 32 bytes in all.
const FamilyNameRule = "^[a-z][a-z0-9-]{1,31}$"

var familyName = regexp.MustCompile(FamilyNameRule)

// ValidFamilyName reports whether name follows FamilyNameRule.
func ValidFamilyName(name string) bool { return familyName.MatchString(name) }

// ToolNameRule is the MCP specification's grammar of a tool name.
const ToolNameRule = "^[A-Za-z0-9_.-]{1,128}$"

var toolName = regexp.MustCompile(ToolNameRule)

// reserved reports whether a family name belongs to the project: a contract
// family or a named profile (a family called "admin" or "full" would make
// --profile ambiguous).
func reserved(name string) bool {
	return contractTools(name) != nil || slices.Contains(ProfileNames, name)
}

// BurstRule is an --auto-profile heuristic: Count calls of Tool with the
// same value of argument Key (Default when absent) within Window suggest
// loading the Suggest family. Suggestions are logged, never acted on.
type BurstRule struct {
	Name    string
	Tool    string
	Key     string
	Default string
	Count   int
	Window  time.Duration
	Suggest string
}

// BurstRules are the --auto-profile rules the host applies (rule A of spec
// §7: bursts of stores in one namespace suggest consolidation and
// duplicate checks).
var BurstRules = []BurstRule{
	{Name: "store_burst", Tool: "memory_store", Key: "namespace", Default: "global", Count: 3, Window: 60 * time.Second, Suggest: "power"},
}
