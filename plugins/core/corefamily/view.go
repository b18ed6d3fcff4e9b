package corefamily

import aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"

// scored is a memory with its recall score.
type scored struct {
	mem   *aimemoryv1.Memory
	score float64
	short string // its short id, when the engine was asked for them
}
