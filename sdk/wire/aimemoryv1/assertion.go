package aimemoryv1

// AssertionMetadataKey is the gRPC metadata key under which every Engine
// call carries the host-signed caller assertion (CallContext.assertion for a
// plugin's calls). The engine refuses calls without a valid one.
const AssertionMetadataKey = "ai-memory-assertion"
