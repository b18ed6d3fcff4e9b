export { AiMemory, type SpawnOptions } from "./memory.js";
export { requireProfile, resolveProfile, BASE_FAMILY, type RequireProfileOptions, type RequireProfileResult } from "./profile.js";
export { PendingApproval, ProfileNotLoaded, ToolError, profileHint, type Pending, type TransportKind } from "./errors.js";
export { VERSION } from "./version.js";
export { callJSON, callText, type ToolCaller } from "./call.js";
export type * from "./types.js";
