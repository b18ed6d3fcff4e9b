package adminfamily

import "github.com/ai-memory/ai-memory/sdk"

// governanceTools: memory_pending_list/approve/reject, memory_namespace_set/get/clear_standard.
// BASE-BRANCH PLACEHOLDER: the helper owning this file replaces it.
func (s *service) governanceTools() []sdk.Tool { return nil }
