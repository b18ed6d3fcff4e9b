package proctune

import (
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
)

// TieredBufferPool sets gRPC's process-wide buffer pool (the buffers it
// reads and encodes messages into) to one with a size class per power of
// two from 4 KiB to 1 MiB. gRPC's default pool has none between 32 KiB and
// 1 MiB and clears a buffer's whole capacity on every reuse, so each
// message of 32 KiB to 1 MiB (a graph result, a traversal level) cost a
// 1 MiB clear on each side of its hop: 4 to 14% of each process's CPU in
// kg_query's profile (BenchmarkGraphOverMCP in e2e). Only the default pool reaches
// the proto codec, so this is process-wide: the ai-memory processes (host,
// engine, first-party plugins) call it from main, never from an import.
func TieredBufferPool() {
	p, err := mem.NewBinaryTieredBufferPool(8, 12, 14, 15, 16, 17, 18, 19, 20)
	if err != nil {
		panic(err) // the sizes above are constants
	}
	experimental.SetDefaultBufferPool(p)
}

// Plugin applies the first-party plugins' process settings: one P
// (OneProcessor), the tiered buffer pool, and the profiles ProfileDirEnv
// asks for.
func Plugin(name string) {
	OneProcessor()
	TieredBufferPool()
	StartProfiling(name)
}
