import type { HistoryEvent } from '@kode/protocol'

/** Small deterministic PRNG (mulberry32), so a seed always yields the same history. */
function random(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    chance: (p: number) => next() < p,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  }
}

/** A main history and the sub-agent histories it (and they) may link. */
export interface ScrambledHistory {
  history: HistoryEvent[]
  subSessions: Map<string, HistoryEvent[]>
}

const CALLS = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6']
const CHILDREN = ['kid-a', 'kid-b', 'kid-c']

/**
 * A random history of every record kind in any order, valid records in unusual places included:
 * results before or without their calls, several results for one call, sub-agent approval
 * requests whose call is answered much later or never, progress between calls, compactions and
 * task boundaries inside turns, links to sub-agent sessions (which link each other, and cycles). For testing that
 * the replay rules hold however a history is ordered and however it is split.
 */
export function scrambledHistory(seed: number, length: number): ScrambledHistory {
  const rng = random(seed)
  let clock = 1_700_000_000_000
  let ids = 0
  const base = () => {
    clock += rng.int(0, 3)
    return { id: `r${++ids}`, createdAt: clock }
  }
  const records = (n: number): HistoryEvent[] => Array.from({ length: n }, one)
  const one = (): HistoryEvent => {
    const call = rng.pick(CALLS)
    const responseId = rng.chance(0.7) ? `resp-${rng.int(1, 4)}` : undefined
    switch (rng.int(0, 13)) {
      case 0:
        return { role: 'system', ...base(), parts: [{ type: 'text', text: 'prompt' }] }
      case 1:
        return {
          role: 'user',
          ...base(),
          parts: [
            { type: 'text', text: 'hi' },
            ...(rng.chance(0.2) ? [{ type: 'image_url' as const, url: 'https://example.com/a.png' }] : []),
          ],
          ...(rng.chance(0.2) ? { mode: 'plan' } : {}),
        }
      case 2:
        return { role: 'developer', ...base(), parts: [{ type: 'text', text: 'note' }] }
      case 3:
      case 4:
        return {
          role: 'assistant',
          ...base(),
          parts: [
            { type: 'thinking_text', text: 'hmm' },
            { type: 'text', text: 'ok' },
            ...(rng.chance(0.1) ? [{ type: 'image_url' as const, url: 'https://example.com/b.png' }] : []),
            ...Array.from({ length: rng.int(0, 3) }, () => ({
              type: 'tool_call' as const,
              id: rng.pick(CALLS),
              name: 'tool',
              argumentsJson: '{}',
            })),
          ],
          ...(responseId !== undefined ? { responseId } : {}),
          ...(rng.chance(0.6) ? { usage: { inputTokens: 3, outputTokens: 2 } } : {}),
          ...(rng.chance(0.5) ? { costUsd: 0.01 } : {}),
          stopReason: rng.pick(['stop', 'tool_use', 'aborted', 'error'] as const),
          ...(rng.chance(0.1) ? { isApiError: true } : {}),
        }
      case 5:
      case 6:
      case 7: {
        const link = rng.chance(0.25) ? rng.pick(CHILDREN) : undefined
        const todo = !link && rng.chance(0.2)
        return {
          role: 'tool',
          ...base(),
          toolCallId: call,
          toolName: 'tool',
          status: rng.pick(['success', 'error', 'aborted'] as const),
          outputText: 'out',
          parts: [],
          ...(link ? { uiExtra: { type: 'session' as const, sessionId: link } } : {}),
          ...(todo
            ? {
                uiExtra: {
                  type: 'todo_list' as const,
                  todos: [{ content: 'x', status: 'pending' as const }],
                },
                sideEffects: ['todo_change' as const],
              }
            : {}),
        }
      }
      case 8:
        return rng.chance(0.5)
          ? { type: 'error', ...base(), message: 'boom', canRetry: rng.chance(0.5) }
          : { type: 'interrupt', ...base() }
      case 9:
        return { type: 'task_metadata', ...base(), metadata: { main: { turnCount: 1 }, subAgents: [] } }
      case 10:
        return {
          type: 'compaction',
          ...base(),
          summary: 'summary',
          firstKeptId: 'r1',
          tokensBefore: 10,
          tokensAfter: 2,
          reason: 'threshold',
        }
      case 11: {
        const sub = rng.chance(0.6)
        return {
          type: 'approval_request',
          ...base(),
          toolCallId: rng.chance(0.5) ? call : 'deep-call',
          toolName: 'tool',
          arguments: '{}',
          ...(responseId !== undefined ? { responseId } : {}),
          ...(sub
            ? {
                sessionId: rng.pick(CHILDREN),
                subAgentCall: { toolCallId: rng.pick(CALLS), sessionId: rng.pick(CHILDREN) },
                ...(rng.chance(0.5) ? { subAgentResponseId: `sub-resp-${rng.int(1, 4)}` } : {}),
              }
            : {}),
        }
      }
      case 12:
        return {
          type: 'approval_decision',
          ...base(),
          toolCallId: rng.chance(0.5) ? call : 'deep-call',
          toolName: 'tool',
          approved: rng.chance(0.5),
          ...(rng.chance(0.5) ? { reason: 'because' } : {}),
          ...(rng.chance(0.4) ? { sessionId: rng.pick(CHILDREN) } : {}),
        }
      default:
        return {
          type: 'tool_progress',
          ...base(),
          toolCallId: call,
          toolName: 'tool',
          message: 'working',
          siblingToolCallIds: [],
          ...(responseId !== undefined ? { responseId } : {}),
        }
    }
  }
  /** A pause for `deep-call`: its request, then the `task_metadata` that ends the task. */
  const pause = (through?: { toolCallId: string; sessionId: string }): HistoryEvent[] => [
    {
      type: 'approval_request',
      ...base(),
      toolCallId: 'deep-call',
      toolName: 'tool',
      arguments: '{}',
      ...(through ? { sessionId: through.sessionId, subAgentCall: through } : {}),
    },
    { type: 'task_metadata', ...base(), metadata: { main: { turnCount: 1 }, subAgents: [] } },
  ]
  /** Inserts `items` at a random place of `into`; returns where. */
  const insert = (into: HistoryEvent[], items: HistoryEvent[], from = 0): number => {
    const at = rng.int(from, into.length)
    into.splice(at, 0, ...items)
    return at
  }
  const subSessions = new Map<string, HistoryEvent[]>()
  for (const child of CHILDREN) {
    if (!rng.chance(0.7)) continue
    const history = records(rng.int(0, 8))
    // Often paused for `deep-call`, which a parent's requests name: replayed in parts.
    for (let n = rng.int(0, 2); n > 0; n--) insert(history, pause())
    subSessions.set(child, history)
  }
  const history = records(length)
  // Sub-agents paused and carried on as the engine records them: a request through a call, and
  // later that call's result linking the sub-agent (with other records around, and in between).
  for (let n = rng.int(0, 2); n > 0; n--) {
    const through = { toolCallId: rng.pick(CALLS), sessionId: rng.pick(CHILDREN) }
    const at = insert(history, pause(through))
    const result: HistoryEvent = {
      role: 'tool',
      ...base(),
      toolCallId: through.toolCallId,
      toolName: 'tool',
      status: 'success',
      outputText: 'out',
      parts: [],
      uiExtra: { type: 'session', sessionId: through.sessionId },
    }
    insert(history, [result], at + 2)
  }
  return { history, subSessions }
}
