// Package catalog is the static map of ai-memory's families and the tools
// each owns (spec profiles-and-discovery §1.1), and the profile grammar that
// selects families (§1.2–§1.3). It knows names only: schemas come from the
// plugins themselves.
package catalog

// Families in canonical order; every listing sorts by it.
var Families = []string{"core", "lifecycle", "graph", "governance", "power", "meta", "archive", "other"}

// AlwaysOn tools are callable under every profile; the host serves them.
var AlwaysOn = []string{"memory_capabilities"}

// toolFamilies lists every tool of the contract by family. Each tool belongs
// to exactly one family.
var toolFamilies = map[string][]string{
	"core":       {"memory_store", "memory_recall", "memory_list", "memory_get", "memory_search"},
	"lifecycle":  {"memory_update", "memory_delete", "memory_forget", "memory_gc", "memory_promote"},
	"graph":      {"memory_kg_query", "memory_kg_timeline", "memory_kg_invalidate", "memory_link", "memory_get_links", "memory_entity_register", "memory_entity_get_by_alias", "memory_get_taxonomy"},
	"governance": {"memory_pending_list", "memory_pending_approve", "memory_pending_reject", "memory_namespace_set_standard", "memory_namespace_get_standard", "memory_namespace_clear_standard", "memory_subscribe", "memory_unsubscribe"},
	"power":      {"memory_consolidate", "memory_detect_contradiction", "memory_check_duplicate", "memory_auto_tag", "memory_expand_query", "memory_inbox"},
	"meta":       {"memory_capabilities", "memory_agent_register", "memory_agent_list", "memory_session_start", "memory_stats"},
	"archive":    {"memory_archive_list", "memory_archive_purge", "memory_archive_restore", "memory_archive_stats"},
	"other":      {"memory_list_subscriptions", "memory_notify"},
}

// ToolsOf returns the contract's tool names of a family, in declaration order.
func ToolsOf(family string) []string { return toolFamilies[family] }

// FamilyOf returns the family that owns a tool of the contract, or "".
func FamilyOf(tool string) string {
	for f, tools := range toolFamilies {
		for _, t := range tools {
			if t == tool {
				return f
			}
		}
	}
	return ""
}

// IsFamily reports whether name is one of the eight families.
func IsFamily(name string) bool { return familyIndex(name) >= 0 }

// IsAlwaysOn reports whether a tool is served under every profile.
func IsAlwaysOn(tool string) bool {
	for _, t := range AlwaysOn {
		if t == tool {
			return true
		}
	}
	return false
}

func familyIndex(name string) int {
	for i, f := range Families {
		if f == name {
			return i
		}
	}
	return -1
}
