import { AgentError } from '@kode/core'
import { CodecError } from '@kode/protocol'
import { deriveReplayEvents, exportHtml } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory, textResponse } from './helpers/summarize.js'

type Messages = { role: string; content?: unknown }[]

describe('user message mode', () => {
  const harness = useHarness('file')

  test('run(input, { mode, modeContext }) persists the mode on the user message, its event and replay, and the model reads it before the text', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Noted.'))
    h.server.enqueue(textReply('r2', 'Plain.'))
    const agent = h.createAgent({ system: 'You code.' })
    const { events, outcome } = await collect(
      agent.run('Delete the build folder', { mode: 'koding', modeContext: 'Add notes to KODING.md' }),
    )
    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message [mode koding: Add notes to KODING.md]: Delete the build folder',
      ...textResponse('Noted.'),
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Noted.',
    ])
    expect(events[1]).toMatchObject({ mode: 'koding', modeContext: 'Add notes to KODING.md' })
    expect(outcome.reason).toBe('completed')
    const moded = {
      role: 'user',
      content: '<user-mode name="koding">\nAdd notes to KODING.md\n</user-mode>\n\nDelete the build folder',
    }
    const body = h.server.requests[0]!.body as { messages: Messages }
    expect(body.messages).toEqual([{ role: 'system', content: 'You code.' }, moded])

    // The next run without a mode: its message carries none, the earlier one keeps its own.
    await collect(agent.run('And now?'))
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'system: You code.',
      'user [mode koding: Add notes to KODING.md]: Delete the build folder',
      'assistant stop: text "Noted."',
      'task_metadata turns=1 subAgents=0',
      'user: And now?',
      'assistant stop: text "Plain."',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(history[1]).toEqual({
      role: 'user',
      id: 'id3',
      createdAt: 1000,
      parts: [{ type: 'text', text: 'Delete the build folder' }],
      mode: 'koding',
      modeContext: 'Add notes to KODING.md',
    })
    const second = (h.server.requests[1]!.body as { messages: Messages }).messages
    expect(second.slice(1)).toEqual([
      moded,
      { role: 'assistant', content: 'Noted.' },
      { role: 'user', content: 'And now?' },
    ])

    const replay = deriveReplayEvents(history, { sessionId: agent.sessionId })
    expectOrdered(replay)
    expect(replay.filter((event) => event.type === 'user_message')).toEqual([
      {
        type: 'user_message',
        sessionId: agent.sessionId,
        timestamp: 1000,
        content: 'Delete the build folder',
        mode: 'koding',
        modeContext: 'Add notes to KODING.md',
      },
      { type: 'user_message', sessionId: agent.sessionId, timestamp: 1000, content: 'And now?' },
    ])
    const html = exportHtml(history)
    expect(html).toContain('<span class="badge mode">koding mode</span>')
    expect(html).toContain('Add notes to KODING.md')
    expect(html.match(/badge mode/g)).toHaveLength(1)
  })

  test('a mode without context is sent as an empty tag', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Ok.'))
    const agent = h.createAgent()
    await collect(agent.run('Plan it', { mode: 'plan' }))
    const body = h.server.requests[0]!.body as { messages: Messages }
    expect(body.messages).toEqual([{ role: 'user', content: '<user-mode name="plan" />\n\nPlan it' }])
    expect((await agent.history())[0]).toMatchObject({ role: 'user', mode: 'plan' })
    expect((await agent.history())[0]).not.toHaveProperty('modeContext')
  })

  test('an empty mode, a mode that is not a string or a context without a mode is refused at the call, before anything is persisted', async () => {
    const h = harness()
    const agent = h.createAgent()
    expect(() => agent.run('x', { mode: '' })).toThrow(CodecError)
    expect(() => agent.run('x', { mode: 3 as unknown as string })).toThrow(CodecError)
    expect(() => agent.run('x', { modeContext: 'y' })).toThrow(
      expect.objectContaining({ name: 'AgentError', code: 'invalid_options' }),
    )
    expect(() => agent.run('x', { modeContext: 'y' })).toThrow(AgentError)
    expect(await agent.history()).toEqual([])
    expect(h.server.requests).toEqual([])
  })
})
