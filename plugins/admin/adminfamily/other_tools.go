package adminfamily

import "github.com/ai-memory/ai-memory/sdk"

// otherTools: memory_list_subscriptions, memory_notify.
// BASE-BRANCH PLACEHOLDER: the helper owning this file replaces it.
func (s *service) otherTools() []sdk.Tool { return nil }
