module example.com/ai-memory-notes

go 1.26.0

require (
	github.com/ai-memory/ai-memory/proto v0.0.0
	github.com/ai-memory/ai-memory/sdk v0.0.0
)

// Outside this repository, drop these lines and require a tagged SDK
// (go get github.com/ai-memory/ai-memory/sdk@latest). Inside it, the
// example builds against the local SDK, as CI tests it.
replace (
	github.com/ai-memory/ai-memory/proto => ../../proto
	github.com/ai-memory/ai-memory/sdk => ../../sdk
)
