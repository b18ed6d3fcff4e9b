package adminfamily

import "github.com/ai-memory/ai-memory/sdk"

// subscriptionTools: memory_subscribe, memory_unsubscribe.
// BASE-BRANCH PLACEHOLDER: the helper owning this file replaces it.
func (s *service) subscriptionTools() []sdk.Tool { return nil }
