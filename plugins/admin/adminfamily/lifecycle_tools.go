package adminfamily

import "github.com/ai-memory/ai-memory/sdk"

// lifecycleTools: memory_update, memory_delete, memory_forget, memory_gc, memory_promote.
// BASE-BRANCH PLACEHOLDER: the helper owning this file replaces it.
func (s *service) lifecycleTools() []sdk.Tool { return nil }
