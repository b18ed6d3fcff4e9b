export { AiMemory, type SpawnOptions } from "./memory.js";
export { requireProfile, resolveProfile, BASE_FAMILY, type RequireProfileOptions, type RequireProfileResult } from "./profile.js";
export { ProfileNotLoaded, ToolError } from "./errors.js";
export { callJSON, callText, type ToolCaller } from "./call.js";
export type * from "./types.js";
