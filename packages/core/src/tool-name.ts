// Gemini and Vertex AI also want a letter or `_` first (`2fa_verify` is refused there).
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/

/**
 * Whether every provider accepts `name` as a tool's name: 1-64 characters from `A-Z a-z 0-9 _ -`,
 * starting with a letter or `_`.
 */
export function isToolName(name: string): boolean {
  return TOOL_NAME.test(name)
}
