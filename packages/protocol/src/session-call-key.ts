/**
 * A string that names one tool call of one session, for a `Map` or `Set` key: call ids are unique
 * within a session only, so two sessions (a parent and its sub-agents) may each have a call of the
 * same id. `sessionId` `undefined` stands for the history's own session, and is told apart from
 * every session id. The JSON of the pair, so no choice of ids makes two pairs one key.
 */
export function sessionCallKey(sessionId: string | undefined, toolCallId: string): string {
  return JSON.stringify([sessionId ?? null, toolCallId])
}
