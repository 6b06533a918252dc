import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { defineTool } from '@kode/core'
import { SessionLockedError } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, gate, useHarness } from './helpers/harness.js'
import { expectValidHistory } from './helpers/history-checks.js'
import { summarizeHistory } from './helpers/summarize.js'

// Two agents on one store and one session: the engine holds the session's writer for each task,
// so their turns cannot interleave (a tool result is never answered by a synthetic one written
// by the other agent), and the session is free again between tasks.

describe.each(['memory', 'file'] as const)('one writer per session (%s store)', (kind) => {
  const harness = useHarness(kind)

  test('a second agent cannot run a task while the first one runs; the first one is not disturbed', async () => {
    const h = harness()
    const release = gate<string>()
    const started = gate()
    const slow = defineTool({
      name: 'slow',
      description: 'Waits',
      parameters: Type.Object({}),
      execute: async () => {
        started.open()
        return release.promise
      },
    })
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'slow', {})] }), textReply('r2', 'Done.'))
    const first = h.createAgent({ tools: [slow], sessionId: 'shared' })
    const second = h.createAgent({ tools: [slow], sessionId: 'shared' })
    const running = collect(first.run('first task'))
    await started.promise

    const refused = second.run('second task')
    const error = await refused.done.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SessionLockedError)
    expect(error).toMatchObject({ code: 'session_locked', owner: 'this-store' })
    expect(second.running).toBe(false)

    release.open('the real result')
    expect((await running).outcome).toMatchObject({ reason: 'completed', text: 'Done.' })
    const history = await first.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: first task',
      'assistant tool_use: call c1 slow {}',
      'tool c1 success: the real result',
      'assistant stop: text "Done."',
      'task_metadata turns=2 subAgents=0',
    ])
    expect(h.server.requests).toHaveLength(2)
  })

  test('between tasks the session is free: the next agent continues it with the whole history', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'One.'), textReply('r2', 'Two.'))
    const first = h.createAgent({ sessionId: 'shared' })
    await collect(first.run('first question'))
    const second = h.createAgent({ sessionId: 'shared' })
    expect((await collect(second.run('second question'))).outcome).toMatchObject({ text: 'Two.' })
    const sent = (h.server.requests[1]!.body as { messages: { content: unknown }[] }).messages
    expect(JSON.stringify(sent)).toContain('first question')
    expect(JSON.stringify(sent)).toContain('One.')
    // The first agent, run again, reads what the second one wrote before it goes on.
    h.server.enqueue(textReply('r3', 'Three.'))
    await collect(first.run('third question'))
    const third = JSON.stringify(h.server.requests[2]!.body)
    expect(third).toContain('second question')
    expect(third).toContain('Two.')
    expect(summarizeHistory(await first.history()).filter((l) => l.startsWith('user'))).toEqual([
      'user: first question',
      'user: second question',
      'user: third question',
    ])
    if (h.dir)
      expect(existsSync(join(h.dir, 'shared', 'writer.lock')), 'no lock is left between tasks').toBe(false)
  })
})
