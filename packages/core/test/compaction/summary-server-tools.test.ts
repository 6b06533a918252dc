import type { HistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { textReply } from '../helpers/chat-wire.js'
import { NOW, useHarness } from '../helpers/harness.js'
import { isSummaryRequest } from '../helpers/small-window.js'

// What the provider's own tools did (code it ran and what that printed, pages it found) is part of
// the work a summary must keep: the model sees none of it once the messages are summarised.

const at = { createdAt: NOW }
const user = (id: string, text: string): HistoryEvent => ({
  role: 'user',
  id,
  ...at,
  parts: [{ type: 'text', text }],
})

function session(): HistoryEvent[] {
  return [
    user('u1', 'What is 17 factorial?'),
    {
      role: 'assistant',
      id: 'a1',
      ...at,
      parts: [
        { type: 'text', text: 'Let me compute it.' },
        {
          type: 'server_tool',
          format: 'google',
          block: {
            type: 'executableCode',
            executableCode: { language: 'PYTHON', code: 'print(math.factorial(17))' },
          },
        },
        {
          type: 'server_tool',
          format: 'google',
          block: {
            type: 'codeExecutionResult',
            codeExecutionResult: { outcome: 'OUTCOME_OK', output: '355687428096000\n' },
          },
        },
        { type: 'text', text: 'Done.' },
      ],
      stopReason: 'stop',
    },
    user('u2', 'Who won the race?'),
    {
      role: 'assistant',
      id: 'a2',
      ...at,
      parts: [
        {
          type: 'server_tool',
          format: 'anthropic',
          block: {
            type: 'server_tool_use',
            id: 'srvtoolu_1',
            name: 'web_search',
            input: { query: 'race winner 2026' },
          },
        },
        {
          type: 'server_tool',
          format: 'anthropic',
          block: {
            type: 'web_search_tool_result',
            tool_use_id: 'srvtoolu_1',
            content: [
              {
                type: 'web_search_result',
                url: 'https://example.com/race',
                title: 'Ada wins the race',
                encrypted_content: 'Eq0KCioIBhgCIiQ'.repeat(400),
              },
            ],
          },
        },
        { type: 'text', text: 'Ada won.' },
      ],
      stopReason: 'stop',
    },
    user('u3', 'Thanks'),
    {
      role: 'assistant',
      id: 'a3',
      ...at,
      parts: [{ type: 'text', text: 'You are welcome.' }],
      stopReason: 'stop',
    },
  ]
}

describe('the summary transcript', () => {
  const harness = useHarness()

  test('says a response was a refusal, with the explanation the provider gave', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', [
      user('u1', 'Write the exploit'),
      {
        role: 'assistant',
        id: 'a1',
        ...at,
        parts: [],
        rawStopReason: 'refusal',
        stopDetails: { category: 'cyber', explanation: 'This request asks for malware.' },
      },
      user('u2', 'Then explain the bug'),
      {
        role: 'assistant',
        id: 'a2',
        ...at,
        parts: [{ type: 'text', text: 'It is an overflow.' }],
        stopReason: 'stop',
      },
    ])
    const agent = h.createAgent({ sessionId: 'long', compaction: { keepRecent: 1 } })
    h.server.enqueue(textReply('sum-1', 'The model refused an exploit.'))

    expect(await agent.compact()).toMatchObject({ compacted: true })

    const [request] = h.server.requests.filter(isSummaryRequest)
    const body = JSON.parse(request!.rawBody) as { messages: { content: string }[] }
    expect(body.messages.at(-1)!.content).toContain(
      'Assistant: \n(The model refused to answer: This request asks for malware.)',
    )
  })

  // The model read the mode and its context as part of the user's message (instructions such as
  // where to keep notes): the summary that replaces the message must know them too.
  test("keeps a user message's mode and its context, as the model read them", async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', [
      {
        ...user('u1', 'Delete the build folder'),
        mode: 'koding',
        modeContext: 'Add notes to KODING.md',
      } as HistoryEvent,
      { role: 'assistant', id: 'a1', ...at, parts: [{ type: 'text', text: 'Deleted.' }], stopReason: 'stop' },
      { ...user('u2', 'And the cache?'), mode: 'plan' } as HistoryEvent,
      { role: 'assistant', id: 'a2', ...at, parts: [{ type: 'text', text: 'Also.' }], stopReason: 'stop' },
      user('u3', 'Thanks'),
      { role: 'assistant', id: 'a3', ...at, parts: [{ type: 'text', text: 'Welcome.' }], stopReason: 'stop' },
    ])
    const agent = h.createAgent({ sessionId: 'long', compaction: { keepRecent: 1 } })
    h.server.enqueue(textReply('sum-1', 'Deleted the build folder and the cache.'))

    expect(await agent.compact()).toMatchObject({ compacted: true })

    const [request] = h.server.requests.filter(isSummaryRequest)
    const body = JSON.parse(request!.rawBody) as { messages: { content: string }[] }
    expect(body.messages.at(-1)!.content).toBe(
      [
        '<conversation>',
        'User: <user-mode name="koding">',
        'Add notes to KODING.md',
        '</user-mode>',
        'Delete the build folder',
        '',
        'Assistant: Deleted.',
        '',
        'User: <user-mode name="plan" />',
        'And the cache?',
        '',
        'Assistant: Also.',
        '</conversation>',
        '',
        'Write the summary now.',
      ].join('\n'),
    )
  })

  test("keeps what the provider's own tools did, without their opaque data", async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', session())
    const agent = h.createAgent({ sessionId: 'long', compaction: { keepRecent: 1 } })
    h.server.enqueue(textReply('sum-1', 'Computed 17! and looked up the race.'))

    expect(await agent.compact()).toMatchObject({ compacted: true })

    const [request] = h.server.requests.filter(isSummaryRequest)
    const body = JSON.parse(request!.rawBody) as { messages: { content: string }[] }
    const transcript = body.messages.at(-1)!.content
    expect(transcript).toContain('print(math.factorial(17))')
    expect(transcript).toContain('355687428096000')
    expect(transcript).toContain('web_search')
    expect(transcript).toContain('race winner 2026')
    expect(transcript).toContain('Ada wins the race')
    expect(transcript).toContain('https://example.com/race')
    expect(transcript).not.toContain('Eq0KCioIBhgCIiQ')
  })
})
