/** This package's version: the ai-memory release it belongs to (internal/version checks they agree). */
export const VERSION = "0.7.0";
