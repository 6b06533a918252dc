import type { HistoryEvent } from '@kode/protocol'
import type { SessionStore } from '@kode/session'

/** The session the screenshot and the "open an old session" tests show: fixed ids and times. */
export const FIXTURE_SESSION = '5e55a0e0-0000-4000-8000-000000000001'
const CHILD = '5e55a0e0-0000-4000-8000-000000000002'

const at = (n: number) => 1_767_225_600_000 + n * 1000
const usage = { inputTokens: 1200, outputTokens: 80, totalTokens: 1280 }

const main: HistoryEvent[] = [
  {
    role: 'user',
    id: 'u1',
    createdAt: at(0),
    parts: [{ type: 'text', text: 'Where is the session store defined?' }],
  },
  {
    role: 'assistant',
    id: 'a1',
    createdAt: at(1),
    parts: [
      { type: 'thinking_text', text: 'A search is quickest: the explore sub-agent can do it.' },
      { type: 'text', text: 'Let me ask the **explore** sub-agent.' },
      {
        type: 'tool_call',
        id: 'call_explore',
        name: 'explore',
        argumentsJson: '{"prompt":"find SessionStore"}',
      },
    ],
    stopReason: 'tool_use',
    usage,
    model: 'kode-scripted',
    provider: 'scripted',
  },
  {
    role: 'tool',
    id: 't1',
    createdAt: at(4),
    toolCallId: 'call_explore',
    toolName: 'explore',
    status: 'success',
    outputText: 'SessionStore is in packages/session/src/store/session-store.ts',
    parts: [],
    uiExtra: { type: 'session', sessionId: CHILD },
  },
  {
    role: 'assistant',
    id: 'a2',
    createdAt: at(5),
    parts: [
      {
        type: 'text',
        text: [
          '## Found it',
          '',
          '`SessionStore` lives in `packages/session/src/store/session-store.ts`:',
          '',
          '- the **interface** and its contract',
          '- two stores: *memory* and *file*',
          '',
          '```ts',
          "import { createMemorySessionStore } from '@kode/session'",
          '```',
          '',
          'See [the docs](https://example.com/docs/sessions).',
        ].join('\n'),
      },
    ],
    stopReason: 'stop',
    usage,
    model: 'kode-scripted',
    provider: 'scripted',
  },
]

const child: HistoryEvent[] = [
  { role: 'user', id: 'cu1', createdAt: at(2), parts: [{ type: 'text', text: 'find SessionStore' }] },
  {
    role: 'assistant',
    id: 'ca1',
    createdAt: at(3),
    parts: [{ type: 'text', text: 'SessionStore is in packages/session/src/store/session-store.ts' }],
    stopReason: 'stop',
    usage,
  },
]

/** Writes the fixture session (and its sub-agent's) into `store`. */
export async function writeFixtureSession(store: SessionStore): Promise<void> {
  await store.create({ id: FIXTURE_SESSION, title: 'Where is the session store defined?' })
  await store.create({
    id: CHILD,
    parentSessionId: FIXTURE_SESSION,
    subAgent: { name: 'explore', parentToolCallId: 'call_explore' },
  })
  await store.append(CHILD, child)
  await store.append(FIXTURE_SESSION, main)
}

/** A session whose one tool call ran two sub-agents, both linked by its result. */
export const FAN_OUT_SESSION = '5e55a0e0-0000-4000-8000-000000000003'

/** Writes {@link FAN_OUT_SESSION} and its two sub-agents' sessions into `store`. */
export async function writeFanOutSession(store: SessionStore): Promise<void> {
  const kids = ['5e55a0e0-0000-4000-8000-000000000004', '5e55a0e0-0000-4000-8000-000000000005']
  await store.create({ id: FAN_OUT_SESSION, title: 'Ask two sub-agents' })
  for (const [i, id] of kids.entries()) {
    await store.create({
      id,
      parentSessionId: FAN_OUT_SESSION,
      subAgent: { name: 'explore', parentToolCallId: 'call_fan' },
    })
    await store.append(id, [
      { role: 'user', id: `k${i}u`, createdAt: at(2 + i), parts: [{ type: 'text', text: `part ${i + 1}` }] },
      {
        role: 'assistant',
        id: `k${i}a`,
        createdAt: at(2 + i),
        parts: [{ type: 'text', text: `answer ${i + 1}` }],
        stopReason: 'stop',
      },
    ])
  }
  await store.append(FAN_OUT_SESSION, [
    { role: 'user', id: 'u1', createdAt: at(0), parts: [{ type: 'text', text: 'Ask two sub-agents' }] },
    {
      role: 'assistant',
      id: 'a1',
      createdAt: at(1),
      parts: [{ type: 'tool_call', id: 'call_fan', name: 'fan_out', argumentsJson: '{}' }],
      stopReason: 'tool_use',
    },
    {
      role: 'tool',
      id: 't1',
      createdAt: at(4),
      toolCallId: 'call_fan',
      toolName: 'fan_out',
      status: 'success',
      outputText: 'both answered',
      parts: [],
      uiExtra: { type: 'session', sessionId: kids[0]!, moreSessionIds: [kids[1]!] },
    },
  ])
}

/**
 * A session whose call `call_0` ran a sub-agent that made a call `call_0` of its own: servers that
 * number calls in each response give a parent and its sub-agents the same ids.
 */
export const SHARED_ID_SESSION = '5e55a0e0-0000-4000-8000-000000000006'

/** Writes {@link SHARED_ID_SESSION} and its sub-agent's session into `store`. */
export async function writeSharedIdSession(store: SessionStore): Promise<void> {
  const kid = '5e55a0e0-0000-4000-8000-000000000007'
  await store.create({ id: SHARED_ID_SESSION, title: 'Ask a sub-agent' })
  await store.create({
    id: kid,
    parentSessionId: SHARED_ID_SESSION,
    subAgent: { name: 'explore', parentToolCallId: 'call_0' },
  })
  await store.append(kid, [
    { role: 'user', id: 'ku', createdAt: at(2), parts: [{ type: 'text', text: 'read a' }] },
    {
      role: 'assistant',
      id: 'ka1',
      createdAt: at(2),
      parts: [{ type: 'tool_call', id: 'call_0', name: 'read_file', argumentsJson: '{"path":"a"}' }],
      stopReason: 'tool_use',
    },
    {
      role: 'tool',
      id: 'kt',
      createdAt: at(3),
      toolCallId: 'call_0',
      toolName: 'read_file',
      status: 'success',
      outputText: 'contents of a',
      parts: [],
    },
    {
      role: 'assistant',
      id: 'ka2',
      createdAt: at(3),
      parts: [{ type: 'text', text: 'a holds its contents' }],
      stopReason: 'stop',
    },
  ])
  await store.append(SHARED_ID_SESSION, [
    { role: 'user', id: 'u1', createdAt: at(0), parts: [{ type: 'text', text: 'Ask a sub-agent' }] },
    {
      role: 'assistant',
      id: 'a1',
      createdAt: at(1),
      parts: [{ type: 'tool_call', id: 'call_0', name: 'explore', argumentsJson: '{"prompt":"read a"}' }],
      stopReason: 'tool_use',
    },
    {
      role: 'tool',
      id: 't1',
      createdAt: at(4),
      toolCallId: 'call_0',
      toolName: 'explore',
      status: 'success',
      outputText: 'the sub-agent read a',
      parts: [],
      uiExtra: { type: 'session', sessionId: kid },
    },
  ])
}
