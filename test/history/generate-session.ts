import type {
  AssistantMessage,
  AssistantPart,
  HistoryEvent,
  ToolResultMessage,
  UserContentPart,
} from '@kode/protocol'

/** A generated main session and the sub-agent sessions its tool results link to. */
export interface GeneratedSession {
  history: HistoryEvent[]
  subSessions: Map<string, HistoryEvent[]>
}

/** Small deterministic PRNG (mulberry32), so a seed always yields the same session. */
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
    next,
    chance: (p: number) => next() < p,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  }
}

const WORDS = ['file', 'test', 'build', 'parser', 'cache', 'retry', 'stream', 'index', 'token', 'patch']
const TOOLS = ['read_file', 'grep', 'bash', 'edit_file', 'todo_write']
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

/**
 * A long, realistic session: tasks of several turns with thinking, tool calls and results,
 * images, todo updates, sub-agents (their own sessions, linked from the `task` tool's result),
 * interrupts of every kind, API errors, retries, system prompt changes and a dangling tool call
 * left by a crash. Deterministic for a given seed.
 */
export function generateSession(options: {
  seed: number
  tasks: number
  sessionId: string
}): GeneratedSession {
  const rng = random(options.seed)
  let clock = 1_763_000_000_000
  let ids = 0
  const base = () => {
    clock += rng.int(1, 900)
    return { id: `${options.sessionId}-r${++ids}`, createdAt: clock }
  }
  const sentence = (n: number) =>
    Array.from({ length: n }, () => rng.pick(WORDS)).join(' ') + rng.pick(['.', '?', '!', ' `x < y && z`.'])
  const subSessions = new Map<string, HistoryEvent[]>()

  const assistant = (parts: AssistantPart[], fields: Partial<AssistantMessage> = {}): AssistantMessage => {
    const input = rng.int(1000, 50_000)
    const output = rng.int(10, 2000)
    return withoutUndefined({
      role: 'assistant',
      ...base(),
      parts,
      usage: {
        inputTokens: input,
        outputTokens: output,
        totalTokens: input + output,
        cacheReadTokens: input >> 1,
      },
      stopReason: parts.some((p) => p.type === 'tool_call') ? 'tool_use' : 'stop',
      responseId: `resp_${ids}`,
      model: 'claude-sonnet-4-5',
      provider: 'anthropic',
      costUsd: Math.round(input * 0.003 + output * 0.015) / 1000,
      durationMs: rng.int(200, 9000),
      ...fields,
    })
  }
  const call = (name: string) => ({
    type: 'tool_call' as const,
    id: `call_${++ids}`,
    name,
    argumentsJson: JSON.stringify({ path: `src/${rng.pick(WORDS)}.ts`, note: sentence(3) }),
  })
  const result = (
    toolCallId: string,
    toolName: string,
    fields: Partial<ToolResultMessage> = {},
  ): ToolResultMessage => ({
    role: 'tool',
    ...base(),
    toolCallId,
    toolName,
    status: 'success',
    outputText: sentence(rng.int(3, 12)),
    parts: [],
    ...fields,
  })
  const thinking = (): AssistantPart[] =>
    rng.chance(0.6)
      ? [
          { type: 'thinking_text', text: sentence(8) },
          {
            type: 'thinking_signature',
            signature: `sig${ids}`,
            format: 'anthropic',
            model: 'claude-sonnet-4-5',
          },
        ]
      : []

  /** A sub-agent's own short session; returns its id. */
  const subAgent = (): string => {
    const childId = `${options.sessionId}-sub${subSessions.size + 1}`
    const child: HistoryEvent[] = [
      { role: 'user', ...base(), id: `${childId}-r0`, parts: [{ type: 'text', text: sentence(6) }] },
    ]
    for (let step = 0; step < rng.int(1, 3); step++) {
      const c = call(rng.pick(['read_file', 'grep']))
      const ask = assistant([...thinking(), { type: 'text', text: sentence(4) }, c])
      child.push(
        { ...ask, id: `${childId}-a${step}` },
        { ...result(c.id, c.name), id: `${childId}-t${step}` },
      )
    }
    child.push({ ...assistant([{ type: 'text', text: `Found it: ${sentence(5)}` }]), id: `${childId}-done` })
    subSessions.set(childId, child)
    return childId
  }

  const history: HistoryEvent[] = [
    { role: 'system', ...base(), parts: [{ type: 'text', text: 'You are Kode.' }] },
  ]
  for (let task = 0; task < options.tasks; task++) {
    if (task === Math.floor(options.tasks / 2)) {
      history.push({
        role: 'system',
        ...base(),
        parts: [{ type: 'text', text: 'You are Kode, now terser.' }],
      })
    }
    const userParts: UserContentPart[] = [{ type: 'text', text: `Task ${task}: ${sentence(rng.int(4, 20))}` }]
    if (rng.chance(0.08)) userParts.push({ type: 'image_url', url: PNG })
    if (rng.chance(0.05))
      userParts.push({ type: 'image_file', path: `shots/${task}.png`, mimeType: 'image/png' })
    history.push({ role: 'user', ...base(), parts: userParts })
    if (rng.chance(0.15)) {
      history.push({
        role: 'developer',
        ...base(),
        parts: [{ type: 'text', text: `<reminder>${sentence(5)}</reminder>` }],
      })
    }
    if (rng.chance(0.03)) {
      // Interrupted before the model said anything.
      history.push({ type: 'interrupt', ...base() })
      continue
    }
    let finished = false
    for (let step = 0; step < rng.int(1, 4) && !finished; step++) {
      if (rng.chance(0.04))
        history.push({ type: 'error', ...base(), message: '529 overloaded', canRetry: true, status: 529 })
      if (rng.chance(0.02)) {
        history.push(
          assistant([{ type: 'text', text: 'partial' }], {
            isApiError: true,
            errorMessage: 'stream reset',
            stopReason: 'error',
          }),
          { type: 'error', ...base(), message: 'stream reset', canRetry: false },
        )
        finished = true
        break
      }
      const calls = Array.from({ length: rng.int(0, 3) }, () => call(rng.pick(TOOLS)))
      if (rng.chance(0.15)) calls.push(call('task'))
      const parts: AssistantPart[] = [...thinking()]
      if (rng.chance(0.7)) parts.push({ type: 'text', text: sentence(rng.int(3, 15)) })
      if (rng.chance(0.03))
        parts.push({ type: 'image_file', path: `generated/${ids}.png`, mimeType: 'image/png' })
      parts.push(...calls)
      if (rng.chance(0.05)) {
        // The user interrupted mid-response: partial text, every call answered `aborted`.
        history.push(assistant(parts, { stopReason: 'aborted', usage: undefined, costUsd: undefined }))
        for (const c of calls)
          history.push(result(c.id, c.name, { status: 'aborted', outputText: 'Interrupted by user' }))
        finished = true
        break
      }
      if (rng.chance(0.01) && calls.length > 0) {
        // A crash between the response and its tool results: the calls dangle.
        history.push(assistant(parts))
        finished = true
        break
      }
      history.push(assistant(parts))
      for (const c of calls) {
        if (c.name === 'task') {
          const childId = subAgent()
          history.push(
            result(c.id, c.name, {
              uiExtra: { type: 'session', sessionId: childId },
              taskMetadata: { sessionId: childId, subAgentName: 'explore', turnCount: 2 },
            }),
          )
        } else if (c.name === 'todo_write') {
          const todos = [
            { content: sentence(3), status: 'completed' as const },
            { content: sentence(3), status: rng.pick(['pending', 'in_progress'] as const) },
          ]
          history.push(
            result(c.id, c.name, { uiExtra: { type: 'todo_list', todos }, sideEffects: ['todo_change'] }),
          )
        } else if (rng.chance(0.04)) {
          history.push(result(c.id, c.name, { status: 'aborted', outputText: 'Interrupted by user' }))
          finished = true
        } else if (rng.chance(0.1)) {
          history.push(result(c.id, c.name, { status: 'error', outputText: `Error: ${sentence(4)}` }))
        } else if (c.name === 'edit_file' && rng.chance(0.5)) {
          history.push(
            result(c.id, c.name, { uiExtra: { type: 'diff', diff: `- ${sentence(3)}\n+ ${sentence(3)}` } }),
          )
        } else {
          const images = rng.chance(0.05) ? [{ type: 'image_url' as const, url: PNG }] : []
          history.push(result(c.id, c.name, { parts: images }))
        }
      }
      if (calls.length === 0) finished = true
    }
    if (!finished)
      history.push(assistant([...thinking(), { type: 'text', text: `Done: ${sentence(rng.int(5, 25))}` }]))
    history.push({
      type: 'task_metadata',
      ...base(),
      metadata: { main: { turnCount: 3, model: 'claude-sonnet-4-5' }, subAgents: [] },
    })
  }
  return { history, subSessions }
}

/** Drops keys set to `undefined`, as a JSON round trip would. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}
