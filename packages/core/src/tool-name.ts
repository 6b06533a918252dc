const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

/** Whether every provider accepts `name` as a tool's name: 1-64 characters from `A-Z a-z 0-9 _ -`. */
export function isToolName(name: string): boolean {
  return TOOL_NAME.test(name)
}
